//! ALMotion's getSummary, getRobotConfig, openHand and closeHand against the real broker
//! under the manual clock.

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};

const LHAND_SENSOR: &str = "Device/SubDeviceList/LHand/Position/Sensor/Value";

/// These tests' calls beyond the shared robot's.
trait RobotInfoCalls {
    /// A joint's angle, commanded or sensed.
    fn angle(&self, joint: &str, use_sensors: bool) -> f64;

    fn summary(&self) -> String;
}

impl RobotInfoCalls for Robot {
    fn angle(&self, joint: &str, use_sensors: bool) -> f64 {
        let angles: Vec<f64> =
            from_value(self.motion("getAngles", vec![joint.into(), use_sensors.into()])).unwrap();
        angles[0]
    }

    fn summary(&self) -> String {
        self.motion("getSummary", vec![]).as_str().unwrap().to_owned()
    }
}

/// The summary's line for `joint`: stiffness, command, sensor.
fn joint_line(summary: &str, joint: &str) -> Vec<String> {
    let line = summary
        .lines()
        .find(|line| line.split_whitespace().next() == Some(joint))
        .unwrap_or_else(|| panic!("no {joint} line in\n{summary}"));
    line.split_whitespace().skip(1).map(str::to_owned).collect()
}

#[test]
fn open_and_close_hand_block_until_the_hand_is_there() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["LHand".into(), 1.0.into()]);
    robot.step(2);
    let cycles = robot.run_to_end("openHand", vec!["LHand".into()]);
    assert!(cycles > 1, "a stroke takes several cycles: {cycles}");
    assert_eq!(robot.angle("LHand", false), 1.0);
    robot.step(20);
    let sensed = robot.memory(LHAND_SENSOR);
    assert!((sensed - 1.0).abs() < 0.01, "the simulated hand opened: {sensed}");
    assert_eq!(robot.angle("RHand", false), 0.0, "the other hand did not move");

    robot.run_to_end("closeHand", vec!["LHand".into()]);
    assert_eq!(robot.angle("LHand", false), 0.0);
    robot.motion("setStiffnesses", vec!["RHand".into(), 1.0.into()]);
    robot.run_to_end("openHand", vec!["RHand".into()]);
    assert_eq!(robot.angle("RHand", false), 1.0);

    for bad in ["LArm", "Hand", "HeadYaw", ""] {
        let error = robot.error("openHand", vec![bad.into()]);
        assert!(error.contains("handName must be \"LHand\" or \"RHand\""), "{bad}: {error}");
    }
    let error = robot.error("closeHand", vec![1.into()]);
    assert!(!error.is_empty());
}

#[test]
fn the_summary_shows_each_joint_and_the_running_tasks() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), 1.0.into()]);
    robot.motion("setAngles", vec!["HeadYaw".into(), 0.5.into(), 0.1.into()]);
    robot.step(10);
    let summary = robot.summary();
    let names: Vec<String> = from_value(robot.motion("getBodyNames", vec!["Body".into()])).unwrap();
    for name in &names {
        let line = joint_line(&summary, name);
        assert_eq!(line.len(), 3, "{name}: {line:?}");
    }
    let yaw = joint_line(&summary, "HeadYaw");
    assert_eq!(yaw[0], "1.000");
    assert_eq!(yaw[1], format!("{:.3}", robot.angle("HeadYaw", false)));
    assert_eq!(yaw[2], format!("{:.3}", robot.angle("HeadYaw", true)));
    assert_eq!(joint_line(&summary, "LKneePitch")[0], "0.000");
    let tasks = summary.split("Tasks").nth(1).expect("a Tasks section");
    assert!(tasks.lines().any(|line| line.contains("setAngles") && line.contains("HeadYaw")), "{summary}");

    robot.step(200);
    let summary = robot.summary();
    let tasks = summary.split("Tasks").nth(1).unwrap();
    assert!(!tasks.contains("setAngles"), "finished tasks leave the summary:\n{summary}");
    assert_eq!(joint_line(&summary, "HeadYaw")[1], "0.500");
}

#[test]
fn the_robot_config_is_a_nao_h25() {
    let robot = Robot::start();
    let config = robot.motion("getRobotConfig", vec![]);
    let [names, values]: [Value; 2] = from_value::<Vec<Value>>(config).unwrap().try_into().unwrap();
    let names: Vec<String> = from_value(names).unwrap();
    let values = values.as_array().unwrap().clone();
    assert_eq!(names.len(), values.len());
    let get = |name: &str| values[names.iter().position(|n| n == name).unwrap()].clone();
    assert_eq!(get("Model Type"), Value::from("naoH25"));
    assert_eq!(get("Head Version"), Value::from("VERSION_60"));
    assert_eq!(get("Body Version"), Value::from("VERSION_60"));
    assert_eq!(get("Laser"), Value::from(false));
    for limb in ["Legs", "Arms", "Hands", "Extended Arms"] {
        assert_eq!(get(limb), Value::from(true), "{limb}");
    }
    for count in ["Number of Legs", "Number of Arms", "Number of Hands"] {
        assert_eq!(get(count).as_i64(), Some(2), "{count}");
    }
}
