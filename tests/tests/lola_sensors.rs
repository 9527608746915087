//! lolasim's sensors reaching ALMemory through the real broker: a scripted or simulated
//! value of every LoLA sensor family read back under its NAOqi key, the robot's identity
//! under the RobotConfig keys, and exactly one answer per sensor map over hundreds of
//! stepped cycles while other clients call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_e2e::lola::{entry, wait_for, LolaBench, HOLD_NO_STALL};
use naobroker_framework::blocking::Session;
use naobroker_framework::Value;
use naobroker_lola::names::JOINTS;

const PREFIX: &str = "Device/SubDeviceList/";

/// Every scripted family, with values no two rows share, so that a row read from the wrong
/// index shows. Battery in the default order: charge, status, current, temperature.
const SCRIPT: [&str; 9] = [
    "Accelerometer=0.5,-0.25,-9.5",
    "Gyroscope=0.125,-0.0625,0.03125",
    "Angles=0.1,-0.05",
    "Battery=0.62,3,-1.25,36",
    "FSR=0.11,0.12,0.13,0.14,0.21,0.22,0.23,0.24",
    "Touch=0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1,0.11,0.12,0.13,0.14",
    "Sonar=0.4,0.55",
    "Status=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25",
    "RobotConfig=P0000073A03S83I00011,6.0.2,P0000074A05S93M00061,6.0.3",
];

/// Each scripted value's device (under `Device/SubDeviceList/`) and the value it reads.
const SCRIPTED: [(&str, f32); 31] = [
    ("InertialSensor/AccelerometerX/Sensor/Value", 0.5),
    ("InertialSensor/AccelerometerY/Sensor/Value", -0.25),
    ("InertialSensor/AccelerometerZ/Sensor/Value", -9.5),
    ("InertialSensor/GyroscopeX/Sensor/Value", 0.125),
    ("InertialSensor/GyroscopeY/Sensor/Value", -0.0625),
    ("InertialSensor/GyroscopeZ/Sensor/Value", 0.03125),
    ("InertialSensor/AngleX/Sensor/Value", 0.1),
    ("InertialSensor/AngleY/Sensor/Value", -0.05),
    ("Battery/Charge/Sensor/Value", 0.62),
    ("Battery/Charge/Sensor/Status", 3.0),
    ("Battery/Current/Sensor/Value", -1.25),
    ("Battery/Temperature/Sensor/Value", 36.0),
    ("LFoot/FSR/FrontLeft/Sensor/Value", 0.11),
    ("LFoot/FSR/FrontRight/Sensor/Value", 0.12),
    ("LFoot/FSR/RearLeft/Sensor/Value", 0.13),
    ("LFoot/FSR/RearRight/Sensor/Value", 0.14),
    ("RFoot/FSR/FrontLeft/Sensor/Value", 0.21),
    ("RFoot/FSR/RearRight/Sensor/Value", 0.24),
    ("ChestBoard/Button/Sensor/Value", 0.01),
    ("Head/Touch/Front/Sensor/Value", 0.02),
    ("Head/Touch/Middle/Sensor/Value", 0.03),
    ("Head/Touch/Rear/Sensor/Value", 0.04),
    ("LFoot/Bumper/Left/Sensor/Value", 0.05),
    ("LFoot/Bumper/Right/Sensor/Value", 0.06),
    ("LHand/Touch/Back/Sensor/Value", 0.07),
    ("LHand/Touch/Right/Sensor/Value", 0.09),
    ("RFoot/Bumper/Left/Sensor/Value", 0.1),
    ("RHand/Touch/Back/Sensor/Value", 0.12),
    ("RHand/Touch/Right/Sensor/Value", 0.14),
    ("US/Left/Sensor/Value", 0.4),
    ("US/Right/Sensor/Value", 0.55),
];

/// The robot's identity: ALMemory key and scripted text.
const IDENTITY: [(&str, &str); 4] = [
    ("Device/DeviceList/ChestBoard/BodyId", "P0000073A03S83I00011"),
    ("RobotConfig/Body/Version", "6.0.2"),
    ("RobotConfig/Head/FullHeadId", "P0000074A05S93M00061"),
    ("RobotConfig/Head/Version", "6.0.3"),
];

/// Every joint stiff and on its way to its own target, so that positions and currents
/// differ from joint to joint.
fn drive_every_joint(bench: &LolaBench) {
    let now = bench.time();
    for (index, joint) in JOINTS.iter().enumerate() {
        let limits = bench.call("ALMotion", "getLimits", vec![(*joint).into()]);
        let limits = &limits.as_array().unwrap()[0];
        let (min, max) = (limits[0].as_f64().unwrap(), limits[1].as_f64().unwrap());
        let target = min + (max - min) * (index + 1) as f64 / 27.0;
        bench.dcm_set(&format!("{joint}/Hardness/Actuator/Value"), "ClearAll", &[(1.0, now)]);
        bench.dcm_set(&format!("{joint}/Position/Actuator/Value"), "ClearAll", &[(target, now + 240)]);
    }
}

#[test]
fn every_lola_sensor_family_reaches_almemory_under_its_naoqi_key() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    bench.steps(2);
    for assignment in SCRIPT {
        bench.sim.assign(assignment).unwrap();
    }
    drive_every_joint(&bench);
    bench.steps(15);
    let sent = bench.sim.last_sensors();
    for (index, joint) in JOINTS.iter().enumerate() {
        let rows = [
            ("Position/Sensor/Value", sent.position[index]),
            ("ElectricCurrent/Sensor/Value", sent.current[index]),
            ("Temperature/Sensor/Value", sent.temperature[index]),
            ("Temperature/Sensor/Status", sent.status[index] as f32),
        ];
        for (device, value) in rows {
            let key = format!("{PREFIX}{joint}/{device}");
            assert_eq!(bench.number(&key), f64::from(value), "{key} ({index} in LoLA's order)");
        }
    }
    assert!(sent.current.iter().any(|&current| current > 0.0), "the joints work: {:?}", sent.current);
    for (device, value) in SCRIPTED {
        assert_eq!(bench.number(&format!("{PREFIX}{device}")), f64::from(value), "{device}");
    }
    wait_for("the robot's identity reaches ALMemory", || {
        IDENTITY.iter().all(|&(key, text)| bench.memory(key) == Value::from(text))
    });
    // A value that changes reaches ALMemory at the next cycle.
    bench.sim.assign("Touch[1]=1").unwrap();
    bench.step();
    assert_eq!(bench.number(&format!("{PREFIX}Head/Touch/Front/Sensor/Value")), 1.0);
}

/// Another client's calls, in a loop until told to stop: reads, a timed LED command, a
/// motion query. Counts the calls made.
fn busy_client(url: String, stop: Arc<AtomicBool>, calls: Arc<AtomicU64>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let session = Session::connect(&url).unwrap();
        let mut blink = 0.0;
        while !stop.load(Ordering::Relaxed) {
            let yaw = format!("{PREFIX}HeadYaw/Position/Sensor/Value");
            session.call("ALMemory", "getData", vec![yaw.into()]).unwrap();
            let now = session.call("DCM", "getTime", vec![0.into()]).unwrap().as_i64().unwrap();
            blink = 1.0 - blink;
            let command = Value::Array(vec![Value::F64(blink), (now + 24).into()]);
            let set = Value::Array(vec![
                "ChestBoard/Led/Green/Actuator/Value".into(),
                "ClearAll".into(),
                Value::Array(vec![command]),
            ]);
            session.call("DCM", "set", vec![set]).unwrap();
            session.call("ALMotion", "getAngles", vec!["Body".into(), true.into()]).unwrap();
            calls.fetch_add(4, Ordering::Relaxed);
        }
    })
}

#[test]
fn every_sensor_map_gets_exactly_one_answer_over_hundreds_of_cycles_while_clients_call() {
    const CYCLES: u64 = 300;
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    let (stop, calls) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let client = busy_client(bench.broker.url.clone(), Arc::clone(&stop), Arc::clone(&calls));
    wait_for("the other client calls", || calls.load(Ordering::Relaxed) > 0);
    bench.steps(CYCLES as usize);
    stop.store(true, Ordering::Relaxed);
    client.join().unwrap();
    assert!(calls.load(Ordering::Relaxed) >= 8, "the other client called while the robot cycled");

    let stats = bench.sim.stats();
    assert_eq!((stats.sent, stats.answers), (CYCLES, CYCLES), "{stats}");
    assert_eq!((stats.missing, stats.double, stats.malformed), (0, 0, 0), "{stats}");
    let answered: Vec<u64> = bench.sim.take_answers().iter().map(|answer| answer.cycle).collect();
    assert_eq!(answered, (1..=CYCLES).collect::<Vec<_>>(), "each map answered once, in order");

    let link = bench.link();
    let count = |key: &str| entry(&link, key).as_u64().unwrap();
    assert_eq!((count("sensor_maps"), count("actuator_maps")), (CYCLES, CYCLES));
    assert_eq!((count("late_cycles"), count("malformed"), count("stalls")), (0, 0, 0));
    let dcm = bench.call("DCM", "stats", vec![]);
    assert_eq!(entry(&dcm, "cycles").as_u64(), Some(CYCLES));
    let motion = bench.call("ALMotion", "stats", vec![]);
    assert_eq!(entry(&motion, "skipped").as_u64(), Some(0), "ALMotion ran each of its cycles");
    assert_eq!(bench.number("HAL/Link/LateCycles"), 0.0);
}
