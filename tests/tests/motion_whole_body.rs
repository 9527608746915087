//! ALMotion's whole-body API against the real broker under the manual clock (the kinematic
//! simulated NAO): wbGoToBalance blocks and puts the centre of mass over the foot, a free
//! foot follows its Cartesian path while the other stays, the tasks are listed and killed,
//! and every call outside NAOqi's rules is refused naming why.

use naobroker_e2e::robot::Robot;
use naobroker_framework::Value;
use naobroker_kinematics::Transform;

const FRAME_TORSO: i64 = 0;
const FRAME_ROBOT: i64 = 2;

fn transform(robot: &Robot, name: &str, frame: i64) -> Transform {
    let value = robot.motion("getTransform", vec![name.into(), frame.into(), false.into()]);
    let numbers: Vec<f64> = value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    Transform::from_matrix16(&numbers.try_into().unwrap()).unwrap()
}

fn matrix(transform: &Transform) -> Value {
    Value::Array(transform.to_matrix16().iter().map(|&v| Value::from(v)).collect())
}

/// The right sole seen from the left one.
fn right_from_left(robot: &Robot) -> Transform {
    transform(robot, "LLeg", FRAME_TORSO).inverse().then(&transform(robot, "RLeg", FRAME_TORSO))
}

fn awake() -> Robot {
    let robot = Robot::start();
    robot.run_to_end("wakeUp", vec![]);
    robot
}

#[test]
fn go_to_balance_blocks_and_a_free_foot_follows_its_path_while_the_other_stays() {
    let robot = awake();
    let feet = right_from_left(&robot);
    robot.motion("wbEnable", vec![true.into()]);
    robot.motion("wbFootState", vec!["Fixed".into(), "Legs".into()]);
    robot.motion("wbEnableBalanceConstraint", vec![true.into(), "Legs".into()]);
    let task = robot.session.post("ALMotion", "wbGoToBalance", vec!["LLeg".into(), 1.0.into()]).unwrap();
    robot.step(10);
    let tasks = robot.motion("getTaskList", vec![]);
    assert!(tasks.to_string().contains("wbGoToBalance"), "listed: {tasks}");
    let mut cycles = 10;
    while robot.is_running(task) {
        robot.step(1);
        cycles += 1;
    }
    assert!((100..=106).contains(&cycles), "blocked its 1 s: {cycles} DCM cycles");
    let com = robot.motion("getCOM", vec!["Body".into(), FRAME_TORSO.into(), false.into()]);
    let com: Vec<f64> = com.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let left = transform(&robot, "LLeg", FRAME_TORSO);
    let over = left.inverse().apply([com[0], com[1], com[2]]);
    // The middle of the sole: 25 mm ahead of the ankle (heel 50 mm behind, toe 100 mm ahead),
    // 5.6 mm outward (38.8 mm inward, 50 mm outward).
    assert!(
        (over[0] - 0.025).hypot(over[1] - 0.0056) < 2e-3,
        "the centre of mass over the left sole: {over:?}"
    );
    assert!((right_from_left(&robot).translation[1] - feet.translation[1]).abs() < 1e-3, "feet stayed");

    let refused = robot.error(
        "positionInterpolations",
        vec!["RLeg".into(), FRAME_ROBOT.into(), Value::Array(vec![0.0.into(); 6]), 63.into(), 1.0.into()],
    );
    assert!(refused.contains("RLeg is Fixed: call wbFootState(\"Free\", \"RLeg\")"), "{refused}");
    robot.motion("wbFootState", vec!["Free".into(), "RLeg".into()]);
    let up = Transform::translation([0.0, 0.0, 0.03]).then(&transform(&robot, "RLeg", FRAME_TORSO));
    let args = vec!["RLeg".into(), FRAME_TORSO.into(), matrix(&up), 63.into(), 1.0.into()];
    let cycles = robot.run_to_end("transformInterpolations", args);
    assert!((100..=106).contains(&cycles), "blocked its 1 s: {cycles} DCM cycles");
    let lifted = right_from_left(&robot);
    let torso_up = transform(&robot, "LLeg", FRAME_TORSO).inverse().apply_rotation([0.0, 0.0, 0.03]);
    // Up by the torso's 3 cm (the torso leans: a little less on the ground's vertical), as far
    // from the left foot on the ground as before (the feet's yaw, one HipYawPitch for both,
    // turns their offset a little).
    let rose = lifted.translation[2] - feet.translation[2];
    assert!(
        (rose - torso_up[2]).abs() < 1e-3,
        "the right foot rose {rose} m, not {}: {lifted:?}",
        torso_up[2]
    );
    let apart = |t: &Transform| t.translation[0].hypot(t.translation[1]);
    assert!((apart(&lifted) - apart(&feet)).abs() < 5e-3, "{lifted:?} {feet:?}");
    // Killed by its id, a path ends at once, and by the legs' resources; wbEnable(False)
    // gives the legs back.
    let down = vec![
        "RLeg".into(),
        FRAME_TORSO.into(),
        matrix(&up.then(&Transform::translation([0.0, 0.0, -0.03]))),
        63.into(),
        2.0.into(),
    ];
    let task = robot.session.post("ALMotion", "transformInterpolations", down).unwrap();
    robot.step(20);
    let tasks = robot.motion("getTaskList", vec![]);
    let listed = tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|task| task.as_array().unwrap()[0] == Value::from("transformInterpolations"));
    let id = listed.unwrap_or_else(|| panic!("the path is listed: {tasks}")).as_array().unwrap()[1].clone();
    assert_eq!(robot.motion("killTask", vec![id]), Value::from(true));
    robot.step(4);
    assert!(!robot.is_running(task));
    let task = robot.session.post("ALMotion", "wbGoToBalance", vec!["Legs".into(), 2.0.into()]).unwrap();
    robot.step(20);
    robot.motion("killTasksUsingResources", vec!["RLeg".into()]);
    robot.step(4);
    assert!(!robot.is_running(task));
    robot.motion("wbEnable", vec![false.into()]);
    let refused = robot.error("wbGoToBalance", vec!["Legs".into(), 1.0.into()]);
    assert!(refused.contains("the whole body is not enabled: call wbEnable(True) first"), "{refused}");
}

#[test]
fn calls_outside_naoqis_rules_are_refused_naming_why() {
    let robot = awake();
    let position = Value::Array(vec![0.0.into(); 6]);
    let error = robot.error("wbGoToBalance", vec!["LLeg".into(), 1.0.into()]);
    assert!(error.contains("wbEnable(True) first"), "{error}");
    robot.motion("wbEnable", vec![true.into()]);
    let error = robot.error("wbFootState", vec!["Floating".into(), "LLeg".into()]);
    assert!(
        error.contains("stateName: expected \"Fixed\", \"Plane\" or \"Free\", got \"Floating\""),
        "{error}"
    );
    let error = robot.error("wbFootState", vec!["Free".into(), "Arms".into()]);
    assert!(error.contains("supportLeg: expected \"LLeg\", \"RLeg\" or \"Legs\""), "{error}");
    let error = robot.error("wbEnableBalanceConstraint", vec![true.into(), "Torso".into()]);
    assert!(error.contains("supportLeg"), "{error}");
    for duration in [0.0, -1.0, f64::NAN, 1e9] {
        let error = robot.error("wbGoToBalance", vec!["LLeg".into(), duration.into()]);
        assert!(error.contains("duration: expected seconds"), "{duration}: {error}");
    }
    let error = robot.error("wbSetEffectorControl", vec!["LArm".into(), Value::Array(vec![0.1.into(); 3])]);
    assert!(error.contains("call wbEnableEffectorControl(\"LArm\", True) first"), "{error}");
    let error = robot.error("wbEnableEffectorControl", vec!["LLeg".into(), true.into()]);
    assert!(error.contains("effectorName: expected \"Head\", \"LArm\" or \"RArm\""), "{error}");
    robot.motion("wbEnableEffectorControl", vec!["LArm".into(), true.into()]);
    let error = robot.error("wbSetEffectorControl", vec!["LArm".into(), Value::Array(vec![0.1.into(); 2])]);
    assert!(error.contains("targetCoordinate: expected 3 finite numbers"), "{error}");
    let names = Value::Array(vec!["Torso".into(), "LArm".into()]);
    let error = robot.error("setPositions", vec![names, FRAME_ROBOT.into(), position, 0.5.into(), 63.into()]);
    assert!(error.contains("one per call and alone"), "{error}");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "nothing started");
}

#[test]
fn the_torso_moves_over_fixed_feet_and_a_hand_follows_wb_set_effector_control() {
    let robot = awake();
    let feet = right_from_left(&robot);
    let torso = transform(&robot, "Torso", FRAME_ROBOT);
    robot.motion("wbEnable", vec![true.into()]);
    robot.motion("wbEnableBalanceConstraint", vec![true.into(), "Legs".into()]);
    // 2 cm down, reactive: answered at once, there within a second.
    let lower = Transform::translation([0.0, 0.0, -0.02]).then(&torso);
    let args = vec!["Torso".into(), FRAME_ROBOT.into(), matrix(&lower), 0.5.into(), 63.into()];
    assert_eq!(robot.motion("setTransforms", args), Value::Nil);
    robot.step(100);
    let lowered = transform(&robot, "Torso", FRAME_ROBOT);
    assert!((lowered.translation[2] - lower.translation[2]).abs() < 1e-3, "{lowered:?} {lower:?}");
    let after = right_from_left(&robot);
    assert!((after.translation[1] - feet.translation[1]).abs() < 1e-3, "the feet stayed: {after:?} {feet:?}");

    robot.motion("wbEnableEffectorControl", vec!["LArm".into(), true.into()]);
    let hand = transform(&robot, "LArm", FRAME_ROBOT).translation;
    let target = [hand[0] + 0.03, hand[1], hand[2] + 0.03];
    let args = vec!["LArm".into(), Value::Array(target.iter().map(|&v| Value::from(v)).collect())];
    robot.motion("wbSetEffectorControl", args);
    robot.step(200);
    let reached = transform(&robot, "LArm", FRAME_ROBOT).translation;
    let missed = (0..3).map(|axis| (reached[axis] - target[axis]).powi(2)).sum::<f64>().sqrt();
    assert!(missed < 3e-3, "the hand at {reached:?}, not {target:?}");
}

/// Without `wbEnable`, NAOqi's classic Cartesian control of a foot (its `almotion_cartesianFoot.py`
/// moves LLeg that way): the foot follows its path, the torso and the other foot stay.
#[test]
fn without_the_whole_body_a_foot_moves_alone_as_naoqis_classic_control_moves_it() {
    let robot = awake();
    let right = transform(&robot, "RLeg", FRAME_TORSO);
    let left = transform(&robot, "LLeg", FRAME_TORSO);
    let target = Transform::translation([0.0, 0.02, 0.01]).then(&left);
    let args = vec!["LLeg".into(), FRAME_TORSO.into(), matrix(&target), 63.into(), 1.0.into()];
    let cycles = robot.run_to_end("transformInterpolations", args);
    assert!((100..=106).contains(&cycles), "blocked its 1 s: {cycles} DCM cycles");
    let moved = transform(&robot, "LLeg", FRAME_TORSO).translation;
    let stayed = transform(&robot, "RLeg", FRAME_TORSO).translation;
    for axis in 0..3 {
        assert!((moved[axis] - target.translation[axis]).abs() < 1e-3, "LLeg at {moved:?}, not {target:?}");
        assert!((stayed[axis] - right.translation[axis]).abs() < 1e-3, "RLeg moved: {stayed:?}, {right:?}");
    }
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]), "the legs given back");
}

/// A limp leg is not driven: the whole body's tasks end at once, the legs' commands stay.
#[test]
fn on_limp_legs_the_whole_body_drives_nothing() {
    let robot = Robot::start();
    let legs = robot.motion("getAngles", vec!["Legs".into(), false.into()]);
    robot.motion("wbEnable", vec![true.into()]);
    let task = robot.session.post("ALMotion", "wbGoToBalance", vec!["LLeg".into(), 1.0.into()]).unwrap();
    robot.step(10);
    assert!(!robot.is_running(task), "ended at once on limp legs");
    assert_eq!(robot.motion("getAngles", vec!["Legs".into(), false.into()]), legs);
}
