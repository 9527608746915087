//! What a request channel hands the cycle thread besides commands, under the manual clock:
//! new conversions, which change a sensor's value, gain and offset together and a settled
//! actuator's published value, and requests naming no device, refused before they reach the
//! cycle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_backend_sim::SimRobot;
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{
    ChannelError, ClockMode, CycleConfig, CycleThread, DcmSlots, RequestChannel, Shared, StartedCycle,
};
use naobroker_robot::device::{Conversion, DeviceIndex, DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

const YAW_SENSOR: &str = "Device/SubDeviceList/HeadYaw/Position/Sensor";
const YAW_ACTUATOR: &str = "Device/SubDeviceList/HeadYaw/Position/Actuator/Value";

fn start() -> (CycleThread, RequestChannel) {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config = CycleConfig { priority: 0, clock: ClockMode::Manual, ..CycleConfig::default() };
    let hardware = Box::new(SimRobot::new(&model));
    let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap();
    (cycle, channels.take("DCM").unwrap())
}

/// Wait (generously) until `condition` holds.
fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what} never happened");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn step(shared: &Shared, n: u64) {
    assert!(shared.step_blocking(n, Duration::from_secs(10)), "the cycles never happened");
}

fn slot(shared: &Shared, key: &str) -> f64 {
    shared.slots.get(shared.slots.layout().index_of(key).unwrap())
}

#[test]
fn a_sensor_shows_its_value_gain_and_offset_together_when_its_conversion_changes() {
    let (cycle, mut channel) = start();
    let shared = Arc::clone(cycle.shared());
    let sensor = channel.model().sensor("HeadYaw/Position/Sensor/Value").unwrap();
    channel.force_sensor(sensor, Some(0.05)).unwrap();
    step(&shared, 1);
    assert_eq!(slot(&shared, &format!("{YAW_SENSOR}/Value")), 0.05);
    assert_eq!(shared.sensor_reading(sensor), 0.05, "gain 1, offset 0: the reading is the value");

    // No cycle runs: the value follows the offset all the same.
    let calibrated = Conversion { gain: 1.0, offset: -0.2 };
    channel.set_conversions(vec![(DeviceIndex::Sensor(sensor), calibrated)]).unwrap();
    wait_for("the new offset", || slot(&shared, &format!("{YAW_SENSOR}/Offset")) == -0.2);
    wait_for("the value in the new offset", || {
        (slot(&shared, &format!("{YAW_SENSOR}/Value")) - 0.25).abs() < 1e-12
    });
    assert_eq!(shared.sensor_reading(sensor), 0.05, "the hardware still reads the same");
    step(&shared, 1);
    assert!((slot(&shared, &format!("{YAW_SENSOR}/Value")) - 0.25).abs() < 1e-12);
}

/// A cycle publishes only the actuators it computed: a settled one keeps its slot, until a
/// new conversion makes the next cycle compute it again.
#[test]
fn a_settled_actuator_shows_its_value_and_from_the_next_cycle_its_value_in_a_new_conversion() {
    let (cycle, mut channel) = start();
    let shared = Arc::clone(cycle.shared());
    let actuator = channel.model().actuator("HeadYaw/Position/Actuator/Value").unwrap();
    let sent = channel.model().actuator_conversion(actuator);
    let mut request = Request::default();
    request.push(actuator, UpdateType::Merge, vec![TimedCommand { time: 0, value: 0.123 }]);
    channel.send(request).unwrap();
    // Applied at the first cycle, settled from the second on.
    step(&shared, 5);
    assert_eq!(slot(&shared, YAW_ACTUATOR), sent.from_hardware(sent.to_hardware(0.123)));
    let tenths = Conversion { gain: 10.0, offset: 0.0 };
    channel.set_conversions(vec![(DeviceIndex::Actuator(actuator), tenths)]).unwrap();
    step(&shared, 1);
    assert_eq!(slot(&shared, YAW_ACTUATOR), 0.1, "sent as 1 tenth");
    step(&shared, 2);
    assert_eq!(slot(&shared, YAW_ACTUATOR), 0.1, "settled: the slot keeps it");
}

#[test]
fn requests_naming_no_device_are_refused_before_the_cycle() {
    let (cycle, mut channel) = start();
    let shared = Arc::clone(cycle.shared());
    let sensors = channel.model().sensors.len();
    let error = channel.force_sensor(sensors, Some(1.0)).unwrap_err();
    assert_eq!(error, ChannelError::NoSensor { sensor: sensors, sensors });
    assert_eq!(error.to_string(), format!("no sensor number {sensors} (the model has {sensors})"));
    let mut request = Request::default();
    request.push(usize::MAX, UpdateType::Merge, vec![TimedCommand { time: 10, value: 0.0 }]);
    let error = channel.send(request).unwrap_err();
    assert!(matches!(error, ChannelError::NoActuator { actuator: usize::MAX, .. }), "{error}");
    assert!(error.to_string().starts_with("no actuator number"), "{error}");
    let conversion = Conversion { gain: 1.0, offset: 0.0 };
    let error = channel.set_conversions(vec![(DeviceIndex::Actuator(100_000), conversion)]).unwrap_err();
    assert_eq!(error, ChannelError::NoDevice(DeviceIndex::Actuator(100_000)));
    assert!(error.to_string().contains("no device Actuator(100000)"), "{error}");
    step(&shared, 2);
    assert_eq!(shared.cycles(), 2, "the cycle runs on");
}
