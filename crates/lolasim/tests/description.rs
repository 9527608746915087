//! LoLA's names against the robot description the simulator reads: every LoLA joint is a
//! joint of it, and every LoLA device NAOqi has is one of its devices.

use naobroker_lola::names::{self, BatteryOrder};
use naobroker_lola::{ActuatorKey, SensorKey};
use naobroker_robot::device::{DeviceModel, RobotDescription};

/// Names of LoLA fields that are no DCM sensor: the battery's status bit field (its NAOqi
/// key is unconfirmed) and the joints' temperature status (a property of the temperature
/// sensor); the `Stiffness` echo names actuators, `RobotConfig` ALMemory keys.
fn is_dcm_sensor(key: SensorKey, name: &str) -> bool {
    !matches!(key, SensorKey::Status | SensorKey::Stiffness | SensorKey::RobotConfig)
        && name != "Battery/Charge/Sensor/Status"
}

#[test]
fn lolas_joints_and_devices_are_in_the_nao_v6_description() {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let joints: Vec<&str> = model.joints.iter().map(|joint| joint.name.as_str()).collect();
    assert_eq!(joints, names::JOINTS, "the description's joints are LoLA's, in its order");
    for key in SensorKey::ALL {
        for name in names::sensor_names(key, BatteryOrder::default()) {
            if is_dcm_sensor(key, name) {
                assert!(model.sensor(name).is_some(), "sensor {name}");
            }
        }
    }
    for name in names::STIFFNESS {
        assert!(model.actuator(name).is_some(), "actuator {name}");
    }
    // The skull is left out: the description's skull LEDs become LoLA's 12 (issue 14).
    for key in ActuatorKey::ALL.into_iter().filter(|&key| key != ActuatorKey::Skull) {
        for name in names::actuator_names(key) {
            assert!(model.actuator(name).is_some(), "actuator {name}");
        }
    }
}
