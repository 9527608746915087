//! The name tables: one name per index of every field, each found back from its name, and
//! each row as the sources give it (lola.md B.3/B.4: NAOqi's names, the teams' orders).

use naobroker_lola::names::{self, BatteryOrder};
use naobroker_lola::{ActuatorKey, SensorKey};

const BATTERIES: [BatteryOrder; 2] =
    [BatteryOrder::ChargeStatusCurrentTemperature, BatteryOrder::ChargeCurrentStatusTemperature];

#[test]
fn every_index_has_a_name_that_leads_back_to_it() {
    for battery in BATTERIES {
        for key in SensorKey::ALL {
            let table = names::sensor_names(key, battery);
            assert_eq!(table.len(), key.array_len(), "{key:?}");
            for (index, name) in table.iter().enumerate() {
                assert_eq!(names::sensor_of_name(name, battery), Some((key, index)), "{name}");
                let full = format!("{}{name}", names::SUBDEVICE_PREFIX);
                assert_eq!(names::sensor_of_name(&full, battery), Some((key, index)), "{full}");
            }
        }
    }
    for key in ActuatorKey::ALL {
        let table = names::actuator_names(key);
        assert_eq!(table.len(), key.array_len(), "{key:?}");
        for (index, name) in table.iter().enumerate() {
            // Both sonar enables are the DCM's one sonar actuator: its name gives index 0.
            let expected_index = if key == ActuatorKey::Sonar { 0 } else { index };
            assert_eq!(names::actuator_of_name(name), Some((key, expected_index)), "{name}");
        }
    }
    assert_eq!(names::sensor_of_name("HeadYaw/Position/Actuator/Value", BATTERIES[0]), None);
    assert_eq!(names::actuator_of_name("HeadYaw/Position/Sensor/Value"), None);
    assert_eq!(names::actuator_of_name("RHipYawPitch/Position/Actuator/Value"), None);
}

#[test]
fn names_within_a_map_are_distinct() {
    let mut sensors: Vec<&str> =
        SensorKey::ALL.iter().flat_map(|&key| names::sensor_names(key, BATTERIES[0])).copied().collect();
    let count = sensors.len();
    sensors.sort();
    sensors.dedup();
    assert_eq!(sensors.len(), count);
    let mut actuators: Vec<&str> = ActuatorKey::ALL
        .iter()
        .filter(|&&key| key != ActuatorKey::Sonar)
        .flat_map(|&key| names::actuator_names(key))
        .copied()
        .collect();
    let count = actuators.len();
    actuators.sort();
    actuators.dedup();
    assert_eq!(actuators.len(), count);
}

#[test]
fn joints_in_lolas_order() {
    assert_eq!(
        names::JOINTS,
        [
            "HeadYaw",
            "HeadPitch",
            "LShoulderPitch",
            "LShoulderRoll",
            "LElbowYaw",
            "LElbowRoll",
            "LWristYaw",
            "LHipYawPitch",
            "LHipRoll",
            "LHipPitch",
            "LKneePitch",
            "LAnklePitch",
            "LAnkleRoll",
            "RHipRoll",
            "RHipPitch",
            "RKneePitch",
            "RAnklePitch",
            "RAnkleRoll",
            "RShoulderPitch",
            "RShoulderRoll",
            "RElbowYaw",
            "RElbowRoll",
            "RWristYaw",
            "LHand",
            "RHand",
        ]
    );
    assert_eq!(names::JOINTS[names::HIP_YAW_PITCH], "LHipYawPitch");
    for (index, joint) in names::JOINTS.iter().enumerate() {
        assert_eq!(names::POSITION_SENSORS[index], format!("{joint}/Position/Sensor/Value"));
        assert_eq!(names::POSITION_ACTUATORS[index], format!("{joint}/Position/Actuator/Value"));
        assert_eq!(names::STIFFNESS[index], format!("{joint}/Hardness/Actuator/Value"));
        assert_eq!(names::CURRENT[index], format!("{joint}/ElectricCurrent/Sensor/Value"));
        assert_eq!(names::TEMPERATURE[index], format!("{joint}/Temperature/Sensor/Value"));
        assert_eq!(names::STATUS[index], format!("{joint}/Temperature/Sensor/Status"));
    }
}

#[test]
fn sensor_rows() {
    let inertial = |sensor: &str, axes: &[&str]| -> Vec<String> {
        axes.iter().map(|axis| format!("InertialSensor/{sensor}{axis}/Sensor/Value")).collect()
    };
    assert_eq!(names::ACCELEROMETER.to_vec(), inertial("Accelerometer", &["X", "Y", "Z"]));
    assert_eq!(names::GYROSCOPE.to_vec(), inertial("Gyroscope", &["X", "Y", "Z"]));
    assert_eq!(names::ANGLES.to_vec(), inertial("Angle", &["X", "Y"]));
    let fsr: Vec<String> = ["LFoot", "RFoot"]
        .iter()
        .flat_map(|foot| {
            ["FrontLeft", "FrontRight", "RearLeft", "RearRight"]
                .map(|corner| format!("{foot}/FSR/{corner}/Sensor/Value"))
        })
        .collect();
    assert_eq!(names::FSR.to_vec(), fsr);
    let touch = [
        "ChestBoard/Button",
        "Head/Touch/Front",
        "Head/Touch/Middle",
        "Head/Touch/Rear",
        "LFoot/Bumper/Left",
        "LFoot/Bumper/Right",
        "LHand/Touch/Back",
        "LHand/Touch/Left",
        "LHand/Touch/Right",
        "RFoot/Bumper/Left",
        "RFoot/Bumper/Right",
        "RHand/Touch/Back",
        "RHand/Touch/Left",
        "RHand/Touch/Right",
    ]
    .map(|device| format!("{device}/Sensor/Value"));
    assert_eq!(names::TOUCH.to_vec(), touch);
    assert_eq!(names::SONAR_SENSORS, ["US/Left/Sensor/Value", "US/Right/Sensor/Value"]);
    assert_eq!(names::sensor_names(SensorKey::RobotConfig, BATTERIES[0]), names::ROBOT_CONFIG);
}

#[test]
fn battery_orders() {
    let majority = BatteryOrder::default();
    assert_eq!(majority, BatteryOrder::ChargeStatusCurrentTemperature);
    assert_eq!(
        names::sensor_names(SensorKey::Battery, majority),
        [
            "Battery/Charge/Sensor/Value",
            "Battery/Charge/Sensor/Status",
            "Battery/Current/Sensor/Value",
            "Battery/Temperature/Sensor/Value"
        ]
    );
    let documented = BatteryOrder::ChargeCurrentStatusTemperature;
    assert_eq!(
        names::sensor_names(SensorKey::Battery, documented),
        [
            "Battery/Charge/Sensor/Value",
            "Battery/Current/Sensor/Value",
            "Battery/Charge/Sensor/Status",
            "Battery/Temperature/Sensor/Value"
        ]
    );
    assert_eq!(
        names::sensor_of_name("Battery/Current/Sensor/Value", majority),
        Some((SensorKey::Battery, 2))
    );
    assert_eq!(
        names::sensor_of_name("Battery/Current/Sensor/Value", documented),
        Some((SensorKey::Battery, 1))
    );
    assert_eq!(majority.as_str(), "charge-status-current-temperature");
    assert_eq!(documented.as_str(), "charge-current-status-temperature");
}

#[test]
fn led_rows() {
    let eye = |side: &str, angles: [u32; 8]| -> Vec<String> {
        ["Red", "Green", "Blue"]
            .iter()
            .flat_map(|colour| {
                angles.map(|angle| format!("Face/Led/{colour}/{side}/{angle}Deg/Actuator/Value"))
            })
            .collect()
    };
    assert_eq!(names::L_EYE.to_vec(), eye("Left", [45, 0, 315, 270, 225, 180, 135, 90]));
    assert_eq!(names::R_EYE.to_vec(), eye("Right", [0, 45, 90, 135, 180, 225, 270, 315]));
    let ear = |side: &str, angles: Vec<u32>| -> Vec<String> {
        angles.iter().map(|angle| format!("Ears/Led/{side}/{angle}Deg/Actuator/Value")).collect()
    };
    assert_eq!(names::L_EAR.to_vec(), ear("Left", (0..10).map(|i| i * 36).collect()));
    assert_eq!(names::R_EAR.to_vec(), ear("Right", (0..10).rev().map(|i| i * 36).collect()));
    let rgb = |device: &str| ["Red", "Green", "Blue"].map(|c| format!("{device}/Led/{c}/Actuator/Value"));
    assert_eq!(names::CHEST.to_vec(), rgb("ChestBoard"));
    assert_eq!(names::L_FOOT.to_vec(), rgb("LFoot"));
    assert_eq!(names::R_FOOT.to_vec(), rgb("RFoot"));
    let skull = [
        "Front/Left/1",
        "Front/Left/0",
        "Middle/Left/0",
        "Rear/Left/0",
        "Rear/Left/1",
        "Rear/Left/2",
        "Rear/Right/2",
        "Rear/Right/1",
        "Rear/Right/0",
        "Middle/Right/0",
        "Front/Right/0",
        "Front/Right/1",
    ]
    .map(|led| format!("Head/Led/{led}/Actuator/Value"));
    assert_eq!(names::SKULL.to_vec(), skull);
    assert_eq!(names::SONAR_ACTUATORS, ["US/Actuator/Value"; 2]);
}
