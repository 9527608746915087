//! ALMotion's Cartesian control against the real broker under the manual clock:
//! setPositions, positionInterpolations, transformInterpolations and NAOqi 1.x's
//! positionInterpolation through inverse kinematics, checked on the sensors; bad calls
//! refused with nothing started.

use naobroker_e2e::cartesian::{assert_close, distance, position_value};
use naobroker_e2e::robot::Robot;
use naobroker_framework::Value;

const FRAME_TORSO: i64 = 0;
const FRAME_ROBOT: i64 = 2;

#[test]
fn set_positions_takes_a_hand_to_its_target_through_inverse_kinematics() {
    let robot = Robot::start();
    robot.stand_zero();
    let start = robot.position("LArm", FRAME_TORSO, false);
    let target = [start[0] - 0.05, start[1] + 0.02, start[2] + 0.04, 0.0, 0.0, 0.0];
    let args = vec!["LArm".into(), FRAME_TORSO.into(), position_value(&target), 0.5.into(), 7.into()];
    assert_eq!(robot.motion("setPositions", args), Value::Nil, "non-blocking");
    robot.step(300);
    let commanded = robot.position("LArm", FRAME_TORSO, false);
    assert!(distance(&commanded, &target) < 1e-3, "commanded {commanded:?}, target {target:?}");
    let sensed = robot.position("LArm", FRAME_TORSO, true);
    assert!(distance(&sensed, &target) < 3e-3, "sensed {sensed:?}, target {target:?}");
    // The other arm did not move.
    assert_close(
        &robot.position("RArm", FRAME_TORSO, false)[..3],
        &[start[0], -start[1], start[2]],
        1e-9,
        "RArm",
    );

    // The head by its orientation alone: wy, wz (mask 16 + 32), in FRAME_ROBOT.
    let args = vec![
        Value::Array(vec!["Head".into()]),
        FRAME_ROBOT.into(),
        position_value(&[0.0, 0.0, 0.0, 0.0, 0.2, 0.5]),
        1.0.into(),
        48.into(),
    ];
    robot.motion("setPositions", args);
    robot.step(200);
    let head = robot.angles("Head", true);
    assert_close(&head, &[0.5, 0.2], 3e-3, "HeadYaw, HeadPitch");
}

/// Planning runs on ALMotion's planning thread; calls still start in the order they came:
/// a posted far move, planned first, is replaced by the near one that follows it.
#[test]
fn a_later_set_positions_replaces_an_earlier_one_planned_first() {
    let robot = Robot::start();
    robot.stand_zero();
    let start = robot.position("LArm", FRAME_TORSO, false);
    let far = [start[0] - 0.06, start[1] + 0.03, start[2] + 0.06, 0.0, 0.0, 0.0];
    let near = [start[0] - 0.02, start[1], start[2] + 0.02, 0.0, 0.0, 0.0];
    let set = |target: &[f64]| {
        vec!["LArm".into(), FRAME_TORSO.into(), position_value(target), 0.5.into(), 7.into()]
    };
    robot.session.post("ALMotion", "setPositions", set(&far)).unwrap();
    robot.motion("setPositions", set(&near));
    robot.step(300);
    let commanded = robot.position("LArm", FRAME_TORSO, false);
    assert!(distance(&commanded, &near) < 1e-3, "commanded {commanded:?}, the later target {near:?}");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "both ended");
}

#[test]
fn position_interpolations_move_the_hand_along_straight_lines_and_block_until_there() {
    let robot = Robot::start();
    robot.stand_zero();
    let start = robot.position("RArm", FRAME_ROBOT, false);
    let first = [start[0] - 0.04, start[1], start[2] + 0.04, start[3], start[4], start[5]];
    let second = [start[0] - 0.06, start[1] - 0.03, start[2], start[3], start[4], start[5]];
    let paths = Value::Array(vec![Value::Array(vec![position_value(&first), position_value(&second)])]);
    let times = Value::Array(vec![1.0.into(), 2.0.into()]);
    let args = vec!["RArm".into(), FRAME_ROBOT.into(), paths, 7.into(), times];
    let task = robot.post("positionInterpolations", args);
    // Along the first segment, the commanded hand stays near the line start → first.
    let mut cycles = 0;
    while robot.is_running(task) {
        robot.step(2);
        cycles += 1;
        assert!(cycles < 500, "still running after 500 motion cycles");
        if cycles < 45 {
            let at = robot.position("RArm", FRAME_ROBOT, false);
            let line: Vec<f64> = (0..3).map(|i| first[i] - start[i]).collect();
            let along: Vec<f64> = (0..3).map(|i| at[i] - start[i]).collect();
            let t = (0..3).map(|i| along[i] * line[i]).sum::<f64>()
                / (0..3).map(|i| line[i] * line[i]).sum::<f64>();
            let off: f64 = (0..3).map(|i| (along[i] - t * line[i]).powi(2)).sum::<f64>().sqrt();
            assert!(off < 2e-3, "cycle {cycles}: {off} m off the straight line");
        }
    }
    assert!((95..=110).contains(&cycles), "2 s of motion cycles: {cycles}");
    robot.step(100);
    assert!(distance(&robot.position("RArm", FRAME_ROBOT, false), &second) < 1e-3);
    assert!(distance(&robot.position("RArm", FRAME_ROBOT, true), &second) < 3e-3);
}

#[test]
fn transform_interpolations_and_naoqi_1_position_interpolation() {
    let robot = Robot::start();
    robot.stand_zero();
    // NAOqi's almotion_cartesianArm1 way: getTransform, move its translation column.
    let current = robot.transform("LArm", FRAME_TORSO, false);
    let mut target = current.clone();
    target[3] -= 0.03;
    target[11] += 0.03;
    let path = Value::Array(vec![position_value(&target), position_value(&current)]);
    let times = Value::Array(vec![1.0.into(), 2.0.into()]);
    robot.run("transformInterpolations", vec!["LArm".into(), FRAME_TORSO.into(), path, 7.into(), times]);
    assert!(distance(&robot.position("LArm", FRAME_TORSO, false), &matrix_translation(&current)) < 1e-3);

    // 1.x: relative to where the hand is.
    let before = robot.position("LArm", FRAME_TORSO, false);
    let delta = position_value(&[0.0, 0.0, 0.03, 0.0, 0.0, 0.0]);
    robot.run(
        "positionInterpolation",
        vec!["LArm".into(), FRAME_TORSO.into(), delta, 7.into(), 1.0.into(), false.into()],
    );
    let after = robot.position("LArm", FRAME_TORSO, false);
    assert!(distance(&after, &[before[0], before[1], before[2] + 0.03]) < 1e-3, "{before:?} → {after:?}");
}

/// The translation of a 4x4 matrix row-major.
fn matrix_translation(matrix: &[f64]) -> [f64; 3] {
    [matrix[3], matrix[7], matrix[11]]
}

#[test]
fn bad_cartesian_commands_are_refused_with_what_was_wrong() {
    let robot = Robot::start();
    let six = position_value(&[0.1, 0.1, 0.1, 0.0, 0.0, 0.0]);
    let set = |name: &str, frame: Value, position: Value, mask: Value| {
        robot.error("setPositions", vec![name.into(), frame, position, 0.5.into(), mask])
    };
    // The whole body moves LLeg (docs/whole-body.md), alone in its call.
    let both = Value::Array(vec!["LLeg".into(), "LArm".into()]);
    let error = robot.error("setPositions", vec![both, 0.into(), six.clone(), 0.5.into(), 7.into()]);
    assert!(error.contains("the whole body moves Torso, LLeg and RLeg, one per call and alone"), "{error}");
    let error = set("Tail", 0.into(), six.clone(), 7.into());
    assert!(error.contains("unknown effector \"Tail\""), "{error}");
    let error = set("LArm", 0.into(), position_value(&[0.1, 0.2, 0.3]), 7.into());
    assert!(error.contains("a Position6D (6 floats)"), "{error}");
    let error = set("LArm", 5.into(), six.clone(), 7.into());
    assert!(error.contains("FRAME_ROBOT (2), got 5"), "{error}");
    let error = set("LArm", 0.into(), six.clone(), 64.into());
    assert!(error.contains("axisMasks"), "{error}");
    let error = robot.error(
        "positionInterpolations",
        vec!["LArm".into(), 0.into(), six, 7.into(), Value::Array(vec![1.0.into(), 2.0.into()])],
    );
    assert!(error.contains("2 time(s) for 1 path point(s)"), "{error}");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "nothing started");
}

/// Hostile arguments are refused at once, naming what was wrong, or planned in bounded time:
/// NaN, a path too long to plan, an effector twice, a target a million kilometres away.
#[test]
fn hostile_cartesian_arguments_are_refused_or_bounded() {
    let robot = Robot::start();
    robot.stand_zero();
    let set = |names: Value, position: Value| vec![names, FRAME_TORSO.into(), position, 0.5.into(), 7.into()];
    let nan = position_value(&[0.1, f64::NAN, 0.1, 0.0, 0.0, 0.0]);
    let error = robot.error("setPositions", set("LArm".into(), nan));
    assert!(error.contains("paths: LArm point 1: not finite"), "{error}");
    let twice = Value::Array(vec!["LArm".into(), "LArm".into()]);
    let six = position_value(&[0.1, 0.1, 0.1, 0.0, 0.0, 0.0]);
    let error = robot.error("setPositions", set(twice, Value::Array(vec![six.clone(), six.clone()])));
    assert!(error.contains("effectorNames: LArm named twice"), "{error}");
    // As many points as the broker's 16 MB frame lets through comfortably.
    let points = 100_000;
    let path = Value::Array(vec![six; points]);
    let times = Value::Array((1..=points).map(|second| Value::from(second as f64)).collect());
    let error = robot.error("positionInterpolations", vec!["LArm".into(), 0.into(), path, 7.into(), times]);
    assert!(error.contains("a path of 100000 points; at most 200"), "{error}");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "nothing started");
    // Out of reach by far: the hand heads for the nearest pose, planned in bounded time.
    let far = position_value(&[1e9, 1e9, 1e9, 0.0, 0.0, 0.0]);
    assert_eq!(robot.motion("setPositions", set("LArm".into(), far)), Value::Nil);
    robot.step(300);
    let hand = robot.position("LArm", FRAME_TORSO, false);
    assert!(hand.iter().all(|v| v.is_finite()) && hand[0] > 0.1, "stretched forward: {hand:?}");
}
