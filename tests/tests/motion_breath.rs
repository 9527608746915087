//! Breath under the manual clock: NAOqi's defaults, the idle animation on the chains asked
//! for, a task taking a breathing joint over at once and breath taking it back, breath
//! switched off ending on the rest angle, the configuration clipped and checked.

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};

/// DCM cycles (10 ms) in one breath at NAOqi's default 12 breaths a minute.
const BREATH: u64 = 500;
/// A weight-1 joint's swing at amplitude 0.5: 5° × 1.5.
const SWING: f64 = 7.5 * std::f64::consts::PI / 180.0;

fn angle(robot: &Robot, joint: &str) -> f64 {
    from_value::<Vec<f64>>(robot.motion("getAngles", vec![joint.into(), false.into()])).unwrap()[0]
}

fn config(pairs: &[(&str, f64)]) -> Value {
    Value::Array(
        pairs.iter().map(|(name, value)| Value::Array(vec![(*name).into(), Value::F64(*value)])).collect(),
    )
}

#[test]
fn the_arms_breathe_yield_to_a_task_and_stop_at_rest() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Body".into(), Value::F64(1.0)]);
    robot.step(4);
    assert_eq!(robot.motion("getBreathConfig", vec![]), config(&[("Bpm", 12.0), ("Amplitude", 0.5)]));
    let (rest, head) = (angle(&robot, "LShoulderPitch"), angle(&robot, "HeadPitch"));
    robot.motion("setBreathEnabled", vec!["Arms".into(), true.into()]);
    for (chain, on) in [("Arms", true), ("LArm", true), ("RArm", true), ("Head", false), ("Body", false)] {
        assert_eq!(robot.motion("getBreathEnabled", vec![chain.into()]), Value::from(on), "{chain}");
    }
    // Half a breath: the shoulders at the top of their swing; the head still.
    robot.step(BREATH / 2);
    let lifted = angle(&robot, "LShoulderPitch") - rest;
    assert!((lifted - SWING).abs() < 0.01, "lifted {lifted} rad");
    assert_eq!(angle(&robot, "HeadPitch"), head, "the head does not breathe");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "breath is no task");
    // A task on a breathing joint takes it at once and arrives exactly; then breath again.
    robot.run_to_end(
        "angleInterpolation",
        vec!["LShoulderPitch".into(), Value::F64(1.0), Value::F64(0.5), true.into()],
    );
    assert!((angle(&robot, "LShoulderPitch") - 1.0).abs() < 1e-3, "the task had the joint");
    robot.step(BREATH / 2);
    assert!(
        (angle(&robot, "LShoulderPitch") - 1.0 - SWING).abs() < 0.01,
        "breathing from where the task left it"
    );
    // Off: the breath ends at rest, within one breath, and stays there.
    robot.motion("setBreathEnabled", vec!["Arms".into(), false.into()]);
    assert_eq!(robot.motion("getBreathEnabled", vec!["LArm".into()]), Value::from(false));
    robot.step(BREATH);
    let stopped = angle(&robot, "LShoulderPitch");
    assert!((stopped - 1.0).abs() < 1e-3, "back at rest: {stopped}");
    robot.step(BREATH / 2);
    assert_eq!(angle(&robot, "LShoulderPitch"), stopped);
}

#[test]
fn the_configuration_is_clipped_as_naoqi_clips_it_and_checked() {
    let robot = Robot::start();
    robot.motion("setBreathConfig", vec![config(&[("Bpm", 30.0), ("Amplitude", 1.0)])]);
    // At the highest rate only the least amplitude.
    assert_eq!(robot.motion("getBreathConfig", vec![]), config(&[("Bpm", 30.0), ("Amplitude", 0.0)]));
    robot.motion("setBreathConfig", vec![config(&[("Bpm", 17.5), ("Amplitude", 1.0)])]);
    assert_eq!(robot.motion("getBreathConfig", vec![]), config(&[("Bpm", 17.5), ("Amplitude", 0.5)]));
    for bad in [config(&[("Bpm", 50.0)]), config(&[("Amplitude", -0.1)]), config(&[("Rate", 10.0)])] {
        let error = robot.error("setBreathConfig", vec![bad]);
        assert!(error.contains("expected [[\"Bpm\", 5 to 30], [\"Amplitude\", 0 to 1]]"), "{error}");
    }
    assert_eq!(
        robot.motion("getBreathConfig", vec![]),
        config(&[("Bpm", 17.5), ("Amplitude", 0.5)]),
        "unchanged"
    );
    let error = robot.error("setBreathEnabled", vec!["LLeg".into(), true.into()]);
    assert!(error.contains("chainName: expected one of Body, Legs, Arms, LArm, RArm, Head"), "{error}");
}
