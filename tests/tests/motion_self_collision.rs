//! Self-collision under the manual clock: NAOqi's collisionDetection and
//! reflexesCollisionAvoidance examples' moves (the left arm from their Init pose to their
//! Final pose, the forearm folded into the chest, then into the face), with collision
//! protection off (the arm gets there: `isCollision` says "collision") and on (it stops
//! short of the body: "near", never "collision").

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};

const DEG: f64 = std::f64::consts::PI / 180.0;
/// The examples' Init: LShoulderPitch, LShoulderRoll, LElbowYaw, LElbowRoll, LWristYaw, LHand.
const INIT: [f64; 6] = [80.0, 20.0, -80.0, -60.0, 0.0, 0.0];

/// Their Final: the forearm folded against the torso (ShoulderPitch 50°) or the head (-50°).
fn bump(shoulder_pitch: f64) -> [f64; 6] {
    [shoulder_pitch, 6.0, 0.0, -150.0, 0.0, 0.0]
}

fn move_left_arm(robot: &Robot, degrees: [f64; 6]) {
    let angles = Value::Array(degrees.iter().map(|d| Value::F64(d * DEG)).collect());
    robot.run_to_end("angleInterpolationWithSpeed", vec!["LArm".into(), angles, Value::F64(0.5)]);
}

fn is_collision(robot: &Robot) -> String {
    from_value(robot.motion("isCollision", vec!["LArm".into()])).unwrap()
}

fn left_arm(robot: &Robot) -> Vec<f64> {
    from_value(robot.motion("getAngles", vec!["LArm".into(), false.into()])).unwrap()
}

fn collision_stops(robot: &Robot) -> u64 {
    robot
        .motion("stats", vec![])
        .as_map()
        .unwrap()
        .iter()
        .find(|(k, _)| k.as_str() == Some("collision_stops"))
        .unwrap()
        .1
        .as_u64()
        .unwrap()
}

#[test]
fn protection_stops_the_arm_before_the_torso_and_the_head() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["LArm".into(), Value::F64(1.0)]);
    robot.step(4);
    move_left_arm(&robot, INIT);
    assert_eq!(is_collision(&robot), "none", "Init is clear");
    for (target, pitch) in [("torso", 50.0), ("head", -50.0)] {
        // Off: the arm bumps into the body; the elbow folds as far as it goes.
        assert_eq!(
            robot.motion("setCollisionProtectionEnabled", vec!["LArm".into(), false.into()]),
            Value::from(true)
        );
        move_left_arm(&robot, bump(pitch));
        assert_eq!(is_collision(&robot), "collision", "{target}, unprotected");
        let bumped = left_arm(&robot);
        assert!((bumped[3] + 88.5 * DEG).abs() < 0.01, "{target}: the elbow folded to its limit");
        move_left_arm(&robot, INIT);
        assert_eq!(is_collision(&robot), "none");
        // On: the same move stops short of the body.
        robot.motion("setCollisionProtectionEnabled", vec!["LArm".into(), true.into()]);
        let stops = collision_stops(&robot);
        move_left_arm(&robot, bump(pitch));
        assert_eq!(is_collision(&robot), "near", "{target}, protected");
        let held = left_arm(&robot);
        let short = bumped.iter().zip(&held).map(|(b, h)| (b - h).abs()).fold(0.0, f64::max);
        assert!(short > 0.05, "{target}: held short of the bump ({held:?} against {bumped:?})");
        assert!(collision_stops(&robot) > stops, "{target}: protection held the arm");
        move_left_arm(&robot, INIT);
        assert_eq!(is_collision(&robot), "none", "{target}: free to leave");
    }
}

#[test]
fn is_collision_takes_an_arm_or_both_and_refuses_other_chains() {
    let robot = Robot::start();
    robot.step(2);
    for chain in ["LArm", "RArm", "Arms"] {
        assert_eq!(robot.motion("isCollision", vec![chain.into()]), Value::from("none"), "{chain}");
    }
    let error = robot.error("isCollision", vec!["Head".into()]);
    assert!(error.contains("\"LArm\", \"RArm\" or \"Arms\", got \"Head\""), "{error}");
}

/// External collision protection of the walk, on the kinematic NAO: an obstacle the left
/// sonar sees within 0.4 m stops a forward walk, with `ALMotion/MoveFailed`.
#[test]
fn external_protection_stops_a_forward_walk_at_a_close_obstacle() {
    let robot = Robot::start();
    for name in ["Move", "LArm", "RArm", "Arms", "All"] {
        let on = robot.motion("getExternalCollisionProtectionEnabled", vec![name.into()]);
        assert_eq!(on, Value::from(false), "{name}: off by default");
    }
    let error = robot.error("setExternalCollisionProtectionEnabled", vec!["Head".into(), true.into()]);
    assert!(error.contains("\"Move\", \"Arms\", \"LArm\", \"RArm\" or \"All\", got \"Head\""), "{error}");
    robot.run_to_end("wakeUp", vec![]);
    let walk = |robot: &Robot| {
        robot.motion("moveToward", vec![Value::F64(0.5), Value::F64(0.0), Value::F64(0.0)]);
        robot.step(100);
        assert_eq!(robot.motion("moveIsActive", vec![]), Value::from(true));
    };
    // Off: a close obstacle changes nothing.
    walk(&robot);
    robot.call("DCM", "simulateSensor", vec!["US/Left/Sensor/Value".into(), Value::F64(0.3)]);
    robot.step(20);
    assert_eq!(robot.motion("moveIsActive", vec![]), Value::from(true), "unprotected, it walks on");
    robot.call("DCM", "simulateSensor", vec!["US/Left/Sensor/Value".into(), Value::F64(1.5)]);
    // On, the obstacle 0.3 m ahead: the walk stops.
    robot.motion("setExternalCollisionProtectionEnabled", vec!["All".into(), true.into()]);
    assert_eq!(robot.motion("getExternalCollisionProtectionEnabled", vec!["Move".into()]), Value::from(true));
    robot.step(20);
    assert_eq!(robot.motion("moveIsActive", vec![]), Value::from(true), "clear at 1.5 m");
    robot.call("DCM", "simulateSensor", vec!["US/Left/Sensor/Value".into(), Value::F64(0.3)]);
    robot.step(4);
    assert_eq!(robot.motion("moveIsActive", vec![]), Value::from(false), "stopped");
    let failed = robot.data("ALMotion/MoveFailed");
    let failed = failed.as_array().unwrap();
    assert_eq!(
        (failed[0].clone(), failed[1].clone()),
        ("an obstacle is within the security distance".into(), 1.into())
    );
}
