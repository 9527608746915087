//! The `lola` backend's mapping, every row both ways: each value of a sensor map reaches
//! its NAOqi device in ALMemory, each actuator's value reaches its index of the actuator
//! map, the robot's identity reaches the actor side, and DCM time follows the robot.

mod lola_peer;

use lola_peer::{config, robot_config, sensor_map, wait_until, Bench, Peer, START_TIME_MS};
use naobroker_backend_lola::LinkLossPolicy;
use naobroker_dcm::cycle::Phase;
use naobroker_lola::names::{self, BatteryOrder, HIP_YAW_PITCH, ROBOT_CONFIG};
use naobroker_lola::{ActuatorKey, ActuatorMap, SensorKey, SensorMap};
use naobroker_robot::device::RobotDescription;

/// A sensor map's value at `key`'s `index`.
fn sent(map: &SensorMap, key: SensorKey, index: usize) -> f64 {
    let floats: &[f32] = match key {
        SensorKey::Accelerometer => &map.accelerometer,
        SensorKey::Angles => &map.angles,
        SensorKey::Battery => &map.battery,
        SensorKey::Current => &map.current,
        SensorKey::Fsr => &map.fsr,
        SensorKey::Gyroscope => &map.gyroscope,
        SensorKey::Position => &map.position,
        SensorKey::Sonar => &map.sonar,
        SensorKey::Stiffness => &map.stiffness,
        SensorKey::Temperature => &map.temperature,
        SensorKey::Touch => &map.touch,
        SensorKey::Status => return f64::from(map.status[index]),
        SensorKey::RobotConfig => unreachable!("texts"),
    };
    f64::from(floats[index])
}

/// An actuator map's value at `key`'s `index`.
fn received(map: &ActuatorMap, key: ActuatorKey, index: usize) -> f64 {
    let floats: &[f32] = match key {
        ActuatorKey::Position => &map.position,
        ActuatorKey::Stiffness => &map.stiffness,
        ActuatorKey::REar => &map.r_ear,
        ActuatorKey::LEar => &map.l_ear,
        ActuatorKey::Chest => &map.chest,
        ActuatorKey::LEye => &map.l_eye,
        ActuatorKey::REye => &map.r_eye,
        ActuatorKey::LFoot => &map.l_foot,
        ActuatorKey::RFoot => &map.r_foot,
        ActuatorKey::Skull => &map.skull,
        ActuatorKey::Sonar => return f64::from(u8::from(map.sonar[index])),
    };
    f64::from(floats[index])
}

fn check_sensors(bench: &Bench, map: &SensorMap, battery: BatteryOrder) {
    for key in
        SensorKey::ALL.into_iter().filter(|key| !matches!(key, SensorKey::RobotConfig | SensorKey::Stiffness))
    {
        for (index, name) in names::sensor_names(key, battery).iter().enumerate() {
            assert_eq!(bench.sensor(name), sent(map, key, index), "{name} ({key:?}[{index}])");
        }
    }
}

#[test]
fn every_sensor_value_reaches_its_device_and_the_identity_its_keys() {
    for battery in
        [BatteryOrder::ChargeStatusCurrentTemperature, BatteryOrder::ChargeCurrentStatusTemperature]
    {
        let mut peer = Peer::new(&format!("sensors-{}", battery.as_str()), true);
        let mut lola = config(&peer, LinkLossPolicy::Hold);
        lola.battery_order = battery;
        let bench = Bench::start(lola);
        peer.accept();
        for (cycle, seed) in [(1, 0.5f32), (2, 3.0)] {
            let map = sensor_map(seed);
            peer.send_map(&map);
            peer.answer();
            bench.wait_for_cycle(cycle);
            check_sensors(&bench, &map, battery);
        }
        let (changes, texts) = bench.link().identity().unwrap();
        assert_eq!(changes, 1, "the identity is handed over once while it does not change");
        let config = robot_config();
        let expected: Vec<(&str, String)> = ROBOT_CONFIG
            .iter()
            .zip(config.texts())
            .map(|(key, text)| (*key, text.as_str().to_owned()))
            .collect();
        assert_eq!(texts, expected);
    }
}

#[test]
fn the_battery_order_decides_which_value_is_the_current() {
    let mut peer = Peer::new("battery", true);
    let mut lola = config(&peer, LinkLossPolicy::Hold);
    lola.battery_order = BatteryOrder::ChargeCurrentStatusTemperature;
    let bench = Bench::start(lola);
    peer.accept();
    let mut map = sensor_map(0.0);
    map.battery = [0.75, -1.5, -32552.0, 31.0];
    peer.send_map(&map);
    peer.answer();
    bench.wait_for_cycle(1);
    assert_eq!(bench.sensor("Battery/Charge/Sensor/Value"), 0.75);
    assert_eq!(bench.sensor("Battery/Current/Sensor/Value"), -1.5);
    assert_eq!(bench.sensor("Battery/Charge/Sensor/Status"), -32552.0);
    assert_eq!(bench.sensor("Battery/Temperature/Sensor/Value"), 31.0);
}

/// A distinct value within `actuator`'s range.
fn command(bench: &Bench, actuator: usize) -> f64 {
    let spec = &bench.model.actuators[actuator];
    spec.min + (spec.max - spec.min) * ((actuator * 7 % 13) as f64 + 1.0) / 14.0
}

#[test]
fn every_actuator_value_reaches_its_index_of_the_actuator_map() {
    let mut peer = Peer::new("actuators", true);
    let mut bench = Bench::start(config(&peer, LinkLossPolicy::Hold));
    let sonar = bench.model.actuator("US/Actuator/Value").unwrap();
    let commands: Vec<(usize, f64)> = (0..bench.model.actuators.len())
        .filter(|&actuator| actuator != sonar)
        .map(|actuator| (actuator, command(&bench, actuator)))
        .collect();
    let hook = bench
        .channel
        .add_hook(
            Phase::Pre,
            "every actuator",
            Box::new(move |cycle| {
                for &(actuator, value) in &commands {
                    cycle.set(actuator, value);
                }
            }),
        )
        .unwrap();
    wait_until("the hook is in the cycle", || {
        bench.shared.stats.hooks.iter().any(|stats| stats.id() == hook)
    });
    peer.accept();
    peer.send_map(&sensor_map(0.0));
    let (answer, _) = peer.answer();
    for key in ActuatorKey::ALL.into_iter().filter(|&key| key != ActuatorKey::Sonar) {
        for (index, name) in names::actuator_names(key).iter().enumerate() {
            let actuator = bench.model.actuator(name).unwrap_or_else(|| panic!("no device for {name}"));
            let spec = &bench.model.actuators[actuator];
            // The boards take integers: the value comes back within half a step of the gain.
            let tolerance = 0.5 / spec.gain + 1e-6;
            let (expected, got) = (command(&bench, actuator), received(&answer, key, index));
            assert!((got - expected).abs() <= tolerance, "{name} ({key:?}[{index}]): {got} for {expected}");
        }
    }
    assert_eq!(answer.sonar, [false, false], "no sonar mode asked: no measurement");
    // NAOqi's continuous mode (64 and above) enables both sides, every cycle.
    bench
        .channel
        .add_hook(
            Phase::Pre,
            "sonar",
            Box::new(move |cycle| {
                cycle.set(sonar, 68.0);
            }),
        )
        .unwrap();
    for _ in 0..3 {
        peer.send_map(&sensor_map(0.0));
        let (answer, _) = peer.answer();
        if answer.sonar == [true, true] {
            return;
        }
    }
    panic!("the sonar's continuous mode never reached LoLA");
}

#[test]
fn dcm_time_advances_twelve_ms_per_sensor_map_and_stands_still_between() {
    let mut peer = Peer::new("time", true);
    let bench = Bench::start(config(&peer, LinkLossPolicy::Hold));
    assert_eq!(bench.shared.period_us, 12_000);
    assert_eq!(bench.shared.now(), START_TIME_MS);
    peer.accept();
    for cycle in 1..=3 {
        peer.send_map(&sensor_map(0.0));
        peer.answer();
        bench.wait_for_cycle(cycle);
        assert_eq!(bench.shared.now(), START_TIME_MS + 12 * cycle as i32);
    }
}

#[test]
fn a_declared_rhipyawpitch_position_sensor_reads_lhipyawpitchs() {
    let mut description = RobotDescription::nao_v6();
    let mut coupled =
        description.devices.iter().find(|d| d.name == "LHipYawPitch/Position/Sensor/Value").unwrap().clone();
    coupled.name = "RHipYawPitch/Position/Sensor/Value".into();
    description.devices.push(coupled);
    let mut peer = Peer::new("hip", true);
    let bench = Bench::start_on(description, config(&peer, LinkLossPolicy::Hold));
    peer.accept();
    let map = sensor_map(0.0);
    peer.send_map(&map);
    peer.answer();
    bench.wait_for_cycle(1);
    let left = f64::from(map.position[HIP_YAW_PITCH]);
    assert_eq!(bench.sensor("LHipYawPitch/Position/Sensor/Value"), left);
    assert_eq!(bench.sensor("RHipYawPitch/Position/Sensor/Value"), left);
}
