//! What the DCM keeps in ALMemory besides its real-time values, through naocli against the
//! real broker (manual clock): preferences (`DCM.preferences`), read-only for clients and
//! saved into the robot description; calibration (`DCM.calibration`) as offsets; and
//! each actuator's `Ack` / `Nack` counters.

use naobroker_e2e::TestBroker;
use serde_json::json;

/// The shipped description, copied for a broker that may write it back.
const NAO_V6: &str = include_str!("../../robots/nao-v6.toml");

const YAW_SENSOR: &str = "Device/SubDeviceList/HeadYaw/Position/Sensor";
const YAW_ACTUATOR: &str = "Device/SubDeviceList/HeadYaw/Position/Actuator";

/// A broker on its own copy of the NAO V6 description; the file's path.
fn broker_on_a_file() -> (TestBroker, std::path::PathBuf) {
    let dir = naobroker_e2e::scratch_dir("robot");
    let robot = dir.join("nao.toml");
    std::fs::write(&robot, NAO_V6).unwrap();
    let broker = TestBroker::start(&format!("start_time_ms = 0\nrobot = \"{}\"\n", robot.display()));
    (broker, robot)
}

fn preferences(broker: &TestBroker, action: &str, target: &str, key: &str, value: &str) -> serde_json::Value {
    broker.call("DCM.preferences", &[action, target, &json!(key).to_string(), value])
}

fn data(broker: &TestBroker, key: &str) -> serde_json::Value {
    broker.call("ALMemory.getData", &[key])
}

#[test]
fn preferences_are_almemory_data_only_the_dcm_writes() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    assert_eq!(data(&broker, "RobotConfig/Body/Type"), json!("NAO"));
    assert_eq!(data(&broker, "Device/DeviceList/ChestBoard/BodyNickName"), json!("Nao"));
    assert_eq!(data(&broker, "RobotConfig/Head/BaseVersion"), json!("V6"));
    let refused = broker.call_error("ALMemory.insertData", &["RobotConfig/Body/Type", r#""Pepper""#]);
    assert!(refused.contains("owned by DCM"), "{refused}");
    assert!(broker.call_error("ALMemory.removeData", &["RobotConfig/Body/Type"]).contains("owned by DCM"));
    // Nor as an event: raising one would have replaced the value and made it removable.
    for method in ["ALMemory.raiseEvent", "ALMemory.raiseMicroEvent"] {
        let refused = broker.call_error(method, &["RobotConfig/Body/Type", r#""x""#]);
        assert!(refused.contains("owned by DCM"), "{method}: {refused}");
    }
    assert!(broker.call_error("ALMemory.removeData", &["RobotConfig/Body/Type"]).contains("owned by DCM"));
    assert!(broker.call_error("ALMemory.removeEvent", &["RobotConfig/Body/Type"]).contains("owned by DCM"));
    assert_eq!(data(&broker, "RobotConfig/Body/Type"), json!("NAO"));
    assert_eq!(broker.call("ALMemory.getType", &["RobotConfig/Body/Type"]), json!("Data"));

    // Added through the DCM: shown at once, of any simple type.
    assert_eq!(preferences(&broker, "Add", "Head", "RobotConfig/Head/FullHeadId", r#""HEAD-42""#), json!(1));
    assert_eq!(data(&broker, "RobotConfig/Head/FullHeadId"), json!("HEAD-42"));
    preferences(&broker, "Add", "Local", "RobotConfig/Body/Flag", "true");
    assert_eq!(data(&broker, "RobotConfig/Body/Flag"), json!(true));

    // The built-in description cannot be saved; Load brings its values back.
    let error = broker.call_error("DCM.preferences", &["Save", "All", r#""""#, "0.0"]);
    assert!(error.contains("started without one: the broker runs the built-in NAO V6"), "{error}");
    assert_eq!(preferences(&broker, "Load", "All", "", "0.0"), json!(6), "the shipped keys");
    assert_eq!(data(&broker, "RobotConfig/Head/FullHeadId"), json!("SIMULATED-HEAD-0001"));
    assert!(broker.call_error("ALMemory.getData", &["RobotConfig/Body/Flag"]).contains("no key named"));

    let long_text = json!("x".repeat(257)).to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["Add", "Arm", "\"RobotConfig/X\"", "1"], "unknown preference target \"Arm\""),
        (&["Add", "All", "\"RobotConfig/X\"", "1"], "Add puts a key in one target"),
        (&["Add", "Chest", "\"Motion/X\"", "1"], "must start with one of RobotConfig/, Device/"),
        (&["Add", "Chest", "\"DCM/PostProcess\"", "1"], "must start with one of RobotConfig/, Device/"),
        (&["Add", "Chest", "\"DCM/Time\"", "1"], "publishes every cycle, not a preference"),
        (&["Add", "Chest", "\"RobotConfig/X\"", "[1, 2]"], "a string, a number or a boolean"),
        (&["Add", "Local", &format!("\"{YAW_SENSOR}/Offset\""), "\"x\""], "must be a number"),
        (&["Add", "Local", &format!("\"{YAW_SENSOR}/Gain\""), "1e-310"], "0.5× to 2× the description's 1.0"),
        (
            &["Add", "Local", &format!("\"{YAW_ACTUATOR}/Offset\""), "1e12"],
            "widened by 10% of the range each side",
        ),
        (&["Add", "Head", "\"RobotConfig/Long\"", &long_text], "the longest text value is 256 bytes"),
        (&["Erase", "Chest", "\"\"", "0"], "unknown preferences action \"Erase\""),
        (&["Save", "Main", "\"\"", "0"], "does not change while the broker runs"),
    ];
    for (args, expected) in cases {
        let error = broker.call_error("DCM.preferences", args);
        assert!(error.contains(expected), "{args:?}: {error}");
    }
    assert_eq!(data(&broker, &format!("{YAW_ACTUATOR}/Offset")), json!(0.0), "refused, nothing changed");
    assert!(broker.call_error("ALMemory.getData", &["RobotConfig/Long"]).contains("no key named"));
}

#[test]
fn saved_preferences_survive_a_restart_and_load_undoes_unsaved_ones() {
    let (mut broker, robot) = broker_on_a_file();
    let nickname = "Device/DeviceList/ChestBoard/BodyNickName";
    preferences(&broker, "Add", "Chest", nickname, r#""Tintin""#);
    assert_eq!(preferences(&broker, "Save", "Chest", "", "0.0"), json!(4));
    let text = std::fs::read_to_string(&robot).unwrap();
    assert!(text.contains(r#""Device/DeviceList/ChestBoard/BodyNickName" = "Tintin""#), "{text}");
    assert!(text.contains("[[joint]]") && text.contains("# NAOqi's DCM preferences"), "the rest is kept");

    preferences(&broker, "Add", "Chest", nickname, r#""Milou""#);
    assert_eq!(data(&broker, nickname), json!("Milou"));
    preferences(&broker, "Load", "Chest", "", "0.0");
    assert_eq!(data(&broker, nickname), json!("Tintin"), "Load reads the file back");

    broker.restart();
    assert_eq!(data(&broker, nickname), json!("Tintin"));
}

#[test]
fn calibration_moves_the_joint_frame_and_is_saved_as_local_offsets() {
    let (mut broker, robot) = broker_on_a_file();
    let calibrate = |reference: f64| {
        let input = json!([format!("{YAW_ACTUATOR}/Value"), "Manual", "InPosition", reference]);
        broker.call("DCM.calibration", &[&input.to_string()]);
    };
    // The joint is held where its sensor reads 0.05; it is really at 0.25.
    broker.call("DCM.simulateSensor", &["HeadYaw/Position/Sensor/Value", "0.05"]);
    broker.step(1);
    assert_eq!(broker.memory(&format!("{YAW_SENSOR}/Value")), 0.05);
    calibrate(0.25);
    broker.step(1);
    assert!((broker.memory(&format!("{YAW_SENSOR}/Value")) - 0.25).abs() < 1e-9);
    assert!((broker.memory(&format!("{YAW_SENSOR}/Offset")) + 0.2).abs() < 1e-9);
    assert!((broker.memory(&format!("{YAW_ACTUATOR}/Offset")) + 0.2 * 4096.0).abs() < 1e-6);

    // Released, the simulated joint is at its hardware zero, which now reads 0.2; a
    // command of 0.25 drives it where the sensor read 0.05 before, and it reads 0.25.
    broker.call("DCM.simulateSensor", &["HeadYaw/Position/Sensor/Value", "null"]);
    broker.step(1);
    assert!((broker.memory(&format!("{YAW_SENSOR}/Value")) - 0.2).abs() < 0.001);
    broker.call("DCM.set", &[r#"["HeadYaw/Hardness/Actuator/Value", "ClearAll", [[1.0, 30]]]"#]);
    broker.call("DCM.set", &[r#"["HeadYaw/Position/Actuator/Value", "ClearAll", [[0.25, 40]]]"#]);
    broker.step(100);
    let sent = broker.memory(&format!("{YAW_ACTUATOR}/Value"));
    assert!((sent - 0.25).abs() <= 0.5 / 4096.0, "the command, rounded to the hardware's steps: {sent}");
    assert!((broker.memory(&format!("{YAW_SENSOR}/Value")) - 0.25).abs() < 0.002);

    // Kept as Local preferences: saved, they are the offsets after a restart.
    assert_eq!(preferences(&broker, "Save", "Local", "", "0.0"), json!(2));
    assert!(std::fs::read_to_string(&robot).unwrap().contains(&format!("\"{YAW_SENSOR}/Offset\" = -0.2")));
    broker.restart();
    assert!((broker.memory(&format!("{YAW_SENSOR}/Offset")) + 0.2).abs() < 1e-9);
    broker.step(1);
    assert!(
        (broker.memory(&format!("{YAW_SENSOR}/Value")) - 0.2).abs() < 0.001,
        "the joint at zero reads 0.2"
    );

    let error = broker.call_error(
        "DCM.calibration",
        &[r#"["HeadYaw/Position/Actuator/Value", "Manual", "InPosition", 9]"#],
    );
    assert!(error.contains("outside HeadYaw's range"), "{error}");
}

#[test]
fn calibrating_twice_before_a_cycle_shifts_once() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let calibrate = |reference: f64| {
        let input = json!([format!("{YAW_ACTUATOR}/Value"), "Manual", "InPosition", reference]);
        broker.call("DCM.calibration", &[&input.to_string()]);
    };
    broker.call("DCM.simulateSensor", &["HeadYaw/Position/Sensor/Value", "0.05"]);
    broker.step(1);
    calibrate(0.25);
    calibrate(0.25);
    broker.step(1);
    assert!((broker.memory(&format!("{YAW_SENSOR}/Value")) - 0.25).abs() < 1e-9);
    assert!((broker.memory(&format!("{YAW_SENSOR}/Offset")) + 0.2).abs() < 1e-9);
    assert!((broker.memory(&format!("{YAW_ACTUATOR}/Offset")) + 0.2 * 4096.0).abs() < 1e-6);
}

#[test]
fn calibration_keeps_the_joint_within_a_tenth_of_its_range_of_the_description() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    broker.call("DCM.simulateSensor", &["HeadYaw/Position/Sensor/Value", "-1.5"]);
    broker.step(1);
    let input = json!([format!("{YAW_ACTUATOR}/Value"), "Manual", "InPosition", 1.5]);
    let error = broker.call_error("DCM.calibration", &[&input.to_string()]);
    assert!(error.contains("cannot calibrate HeadYaw to 1.5 where it reads -1.5"), "{error}");
    assert!(error.contains("widened by 10% of the range each side"), "{error}");
    broker.step(1);
    assert_eq!(broker.memory(&format!("{YAW_SENSOR}/Offset")), 0.0, "nothing changed");
    assert_eq!(broker.memory(&format!("{YAW_ACTUATOR}/Offset")), 0.0);
}

#[test]
fn every_actuator_counts_its_acknowledged_writes() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    broker.step(3);
    assert_eq!(data(&broker, &format!("{YAW_ACTUATOR}/Ack")), json!(3), "the simulation answers every write");
    assert_eq!(data(&broker, &format!("{YAW_ACTUATOR}/Nack")), json!(0));
    assert_eq!(data(&broker, "Device/SubDeviceList/ChestBoard/Led/Red/Actuator/Ack"), json!(3));
}
