//! ALMotion's Cartesian layer against the real broker under the manual clock: positions,
//! transforms, centres of mass and masses checked against numbers worked out here from
//! NAO V6's published link lengths (Aldebaran's "Links" tables), not by the kinematics
//! crate; Cartesian control through inverse kinematics, checked on the sensors.

use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Session;
use naobroker_framework::Value;

const FRAME_TORSO: i64 = 0;
const FRAME_WORLD: i64 = 1;
const FRAME_ROBOT: i64 = 2;

/// NAO V6's links (m): Aldebaran's "NAO - Links" tables, H25 V6.
const NECK_OFFSET_Z: f64 = 0.1265;
const SHOULDER_OFFSET_Y: f64 = 0.098;
const SHOULDER_OFFSET_Z: f64 = 0.100;
const UPPER_ARM_LENGTH: f64 = 0.105;
const ELBOW_OFFSET_Y: f64 = 0.015;
const LOWER_ARM_LENGTH: f64 = 0.05595;
const HAND_OFFSET_X: f64 = 0.05775;
const HAND_OFFSET_Z: f64 = 0.01231;
const HIP_OFFSET_Y: f64 = 0.050;
const HIP_OFFSET_Z: f64 = 0.085;
const THIGH_LENGTH: f64 = 0.100;
const TIBIA_LENGTH: f64 = 0.1029;
const FOOT_HEIGHT: f64 = 0.04519;

struct Robot {
    _broker: TestBroker,
    session: Session,
}

impl Robot {
    fn new() -> Robot {
        let broker = TestBroker::start("start_time_ms = 0\n");
        let session = Session::connect(&broker.url).unwrap();
        Robot { _broker: broker, session }
    }

    fn motion(&self, method: &str, args: Vec<Value>) -> Value {
        self.session.call("ALMotion", method, args).unwrap_or_else(|e| panic!("ALMotion.{method}: {e}"))
    }

    fn error(&self, method: &str, args: Vec<Value>) -> String {
        match self.session.call("ALMotion", method, args) {
            Ok(value) => panic!("ALMotion.{method} answered {value}"),
            Err(error) => error.message,
        }
    }

    fn step(&self, n: u64) {
        self.session.call("DCM", "step", vec![n.into()]).unwrap();
    }

    /// Post a blocking ALMotion call and step until it is done, then let the joints settle.
    fn run(&self, method: &str, args: Vec<Value>) {
        let task = self.session.post("ALMotion", method, args).unwrap_or_else(|e| panic!("{method}: {e}"));
        for _ in 0..2000 {
            if self.motion("isRunning", vec![task.into()]) != Value::from(true) {
                self.step(100);
                return;
            }
            self.step(2);
        }
        panic!("{method} still running after 2000 motion cycles");
    }

    fn floats(&self, method: &str, args: Vec<Value>) -> Vec<f64> {
        let value = self.motion(method, args);
        let Value::Array(items) = &value else { panic!("{method}: {value}") };
        items.iter().map(|item| item.as_f64().unwrap_or_else(|| panic!("{method}: {value}"))).collect()
    }

    fn position(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getPosition", vec![name.into(), frame.into(), sensors.into()])
    }

    fn transform(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getTransform", vec![name.into(), frame.into(), sensors.into()])
    }

    fn com(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getCOM", vec![name.into(), frame.into(), sensors.into()])
    }

    fn angles(&self, names: &str, sensors: bool) -> Vec<f64> {
        self.floats("getAngles", vec![names.into(), sensors.into()])
    }

    /// Stiff, every joint at 0 (or the nearest limit: the elbows' roll): StandZero.
    fn stand_zero(&self) {
        self.motion("setStiffnesses", vec!["Body".into(), 1.0.into()]);
        self.run("angleInterpolation", vec!["Body".into(), 0.0.into(), 1.0.into(), true.into()]);
    }
}

fn assert_close(got: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: {got:?}");
    for (axis, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!((g - e).abs() <= tolerance, "{what}, axis {axis}: {got:?}, expected {expected:?}");
    }
}

type Matrix = [[f64; 3]; 3];

fn rx(a: f64) -> Matrix {
    let (s, c) = a.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]
}

fn ry(a: f64) -> Matrix {
    let (s, c) = a.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

fn rz(a: f64) -> Matrix {
    let (s, c) = a.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

fn mul(a: Matrix, b: Matrix) -> Matrix {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

fn apply(m: Matrix, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// The hand (the arm chain's end) in FRAME_TORSO, worked out from the links: shoulder at
/// (0, ±98, 100) mm, Ry(ShoulderPitch)·Rz(ShoulderRoll), (105, ±15, 0) to the elbow,
/// Rx(ElbowYaw)·Rz(ElbowRoll), 55.95 along x to the wrist, Rx(WristYaw), then
/// (57.75, 0, -12.31) to the hand. Angles: ShoulderPitch, ShoulderRoll, ElbowYaw,
/// ElbowRoll, WristYaw; `side` +1 left, -1 right.
fn hand(side: f64, angles: &[f64]) -> [f64; 3] {
    let shoulder = [0.0, side * SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z];
    let upper = mul(ry(angles[0]), rz(angles[1]));
    let elbow = add(shoulder, apply(upper, [UPPER_ARM_LENGTH, side * ELBOW_OFFSET_Y, 0.0]));
    let forearm = mul(upper, mul(rx(angles[2]), rz(angles[3])));
    let wrist = add(elbow, apply(forearm, [LOWER_ARM_LENGTH, 0.0, 0.0]));
    add(wrist, apply(mul(forearm, rx(angles[4])), [HAND_OFFSET_X, 0.0, -HAND_OFFSET_Z]))
}

/// How far below the torso the soles are with straight legs.
const LEG_DROP: f64 = HIP_OFFSET_Z + THIGH_LENGTH + TIBIA_LENGTH + FOOT_HEIGHT;

fn matrix_product(a: &[f64], b: &[f64]) -> Vec<f64> {
    (0..16).map(|at| (0..4).map(|k| a[4 * (at / 4) + k] * b[4 * k + at % 4]).sum()).collect()
}

#[test]
fn at_stand_zero_head_hands_and_feet_are_where_the_links_put_them() {
    let robot = Robot::new();
    robot.stand_zero();
    for sensors in [false, true] {
        // The sensors carry the simulator's noise (at most 0.5 mrad per joint).
        let tolerance = if sensors { 1e-3 } else { 1e-9 };
        let what = |name: &str| format!("{name}, useSensors {sensors}");
        let head = robot.position("Head", FRAME_TORSO, sensors);
        assert_close(&head, &[0.0, 0.0, NECK_OFFSET_Z, 0.0, 0.0, 0.0], tolerance, &what("Head"));
        let left_foot = [0.0, HIP_OFFSET_Y, -LEG_DROP, 0.0, 0.0, 0.0];
        assert_close(&robot.position("LLeg", FRAME_TORSO, sensors), &left_foot, tolerance, &what("LLeg"));
        let right_foot = [0.0, -HIP_OFFSET_Y, -LEG_DROP, 0.0, 0.0, 0.0];
        assert_close(&robot.position("RLeg", FRAME_TORSO, sensors), &right_foot, tolerance, &what("RLeg"));
        for (chain, side) in [("LArm", 1.0), ("RArm", -1.0)] {
            // The elbow's roll stops short of 0 (±0.0349 rad): its range ends there.
            let angles = robot.angles(chain, sensors);
            assert!((angles[3] + side * 0.0349).abs() < 2e-3, "{chain} {angles:?}");
            let got = robot.position(chain, FRAME_TORSO, sensors);
            assert_close(&got[..3], &hand(side, &angles), tolerance, &what(chain));
            // Only the elbow's roll turns the hand: about z.
            assert_close(&got[3..], &[0.0, 0.0, angles[3]], 10.0 * tolerance, &what(chain));
        }
    }
    // Straight: the hand 218.7 mm ahead of the shoulder, 12.31 mm below it (elbow roll aside).
    let left = robot.position("LArm", FRAME_TORSO, false);
    assert!((left[0] - 0.2187).abs() < 2e-4 && (left[2] - 0.08769).abs() < 1e-6, "{left:?}");
    let right = robot.position("RArm", FRAME_TORSO, false);
    assert_close(&right, &[left[0], -left[1], left[2], -left[3], left[4], -left[5]], 1e-12, "symmetry");
}

#[test]
fn frame_robot_is_on_the_ground_between_the_feet_and_frame_world_with_it() {
    let robot = Robot::new();
    robot.stand_zero();
    // Level (the simulated inertial unit reads 0): FRAME_ROBOT is FRAME_TORSO moved up to
    // the soles' height below it.
    let torso = robot.position("Torso", FRAME_ROBOT, false);
    assert_close(&torso, &[0.0, 0.0, LEG_DROP, 0.0, 0.0, 0.0], 1e-9, "Torso in FRAME_ROBOT");
    assert_close(&robot.position("Torso", FRAME_TORSO, false), &[0.0; 6], 1e-12, "Torso in FRAME_TORSO");
    let head = robot.position("Head", FRAME_ROBOT, false);
    assert_close(&head, &[0.0, 0.0, LEG_DROP + NECK_OFFSET_Z, 0.0, 0.0, 0.0], 1e-9, "Head");
    let foot = robot.position("LLeg", FRAME_ROBOT, false);
    assert_close(&foot, &[0.0, HIP_OFFSET_Y, 0.0, 0.0, 0.0, 0.0], 1e-9, "LLeg on the ground");
    // Any frame: in FRAME_ROBOT = the torso in FRAME_ROBOT × in FRAME_TORSO; FRAME_WORLD
    // stays with FRAME_ROBOT (no walk: the feet do not move on the ground).
    robot.motion("setAngles", vec!["LShoulderPitch".into(), 0.6.into(), 1.0.into()]);
    robot.motion("setAngles", vec!["HeadYaw".into(), (-0.4).into(), 1.0.into()]);
    robot.step(100);
    let torso_in_robot = robot.transform("Torso", FRAME_ROBOT, true);
    for name in ["LArm", "Head", "RLeg", "CameraTop", "LElbowRoll"] {
        for sensors in [false, true] {
            let in_torso = robot.transform(name, FRAME_TORSO, sensors);
            let in_robot = robot.transform(name, FRAME_ROBOT, sensors);
            let torso_in_robot = robot.transform("Torso", FRAME_ROBOT, sensors);
            assert_close(&in_robot, &matrix_product(&torso_in_robot, &in_torso), 1e-9, name);
            assert_close(&robot.transform(name, FRAME_WORLD, sensors), &in_robot, 1e-12, name);
            assert_eq!(&in_robot[12..], &[0.0, 0.0, 0.0, 1.0], "{name}: a rigid transform's last row");
        }
    }
    assert_eq!(torso_in_robot.len(), 16);
}

#[test]
fn at_stand_init_the_hands_follow_the_arms_angles() {
    let robot = Robot::new();
    robot.run("wakeUp", vec![]);
    for sensors in [false, true] {
        let tolerance = if sensors { 1e-3 } else { 1e-9 };
        for (chain, side) in [("LArm", 1.0), ("RArm", -1.0)] {
            let angles = robot.angles(chain, sensors);
            let got = robot.position(chain, FRAME_TORSO, sensors);
            assert_close(&got[..3], &hand(side, &angles), tolerance, chain);
        }
    }
    // StandInit's arms hang forward, hands low beside the hips.
    let left = robot.position("LArm", FRAME_TORSO, false);
    assert!(left[0] > 0.0 && left[1] > 0.05 && left[2] < 0.0, "{left:?}");
    let right = robot.position("RArm", FRAME_TORSO, false);
    assert_close(&right[..3], &[left[0], -left[1], left[2]], 1e-9, "left/right symmetry");
}

#[test]
fn sensed_and_commanded_positions_part_while_a_limp_joint_is_commanded() {
    let robot = Robot::new();
    robot.motion("setStiffnesses", vec!["Head".into(), 0.0.into()]);
    robot.motion("setAngles", vec!["HeadYaw".into(), 1.0.into(), 1.0.into()]);
    robot.step(100);
    let commanded = robot.position("Head", FRAME_TORSO, false);
    let sensed = robot.position("Head", FRAME_TORSO, true);
    assert!((commanded[5] - 1.0).abs() < 1e-9, "commanded: turned to 1 rad {commanded:?}");
    assert!(sensed[5].abs() < 1e-3, "sensed: the limp head stayed {sensed:?}");
    // Stiff, it follows: the two agree again.
    robot.motion("setStiffnesses", vec!["Head".into(), 1.0.into()]);
    robot.step(200);
    assert_close(&robot.position("Head", FRAME_TORSO, true), &commanded, 1e-3, "sensed follows");
}

#[test]
fn the_centre_of_mass_of_a_standing_robot_and_the_masses() {
    let robot = Robot::new();
    robot.stand_zero();
    let com = robot.com("Body", FRAME_ROBOT, false);
    assert!(com[1].abs() < 1e-3, "left/right symmetric: {com:?}");
    assert!(com[0].abs() < 0.03, "over the feet: {com:?}");
    assert!((0.25..0.36).contains(&com[2]), "about a third of a metre up: {com:?}");
    let in_torso = robot.com("Body", FRAME_TORSO, false);
    assert_close(&in_torso, &[com[0], com[1], com[2] - LEG_DROP], 1e-9, "FRAME_TORSO");
    let sensed = robot.com("Body", FRAME_ROBOT, true);
    assert_close(&sensed, &com, 1e-3, "sensed");
    robot.run("wakeUp", vec![]);
    let crouched = robot.com("Body", FRAME_ROBOT, false);
    assert!(crouched[2] < com[2] - 0.005, "bent knees lower it: {crouched:?} from {com:?}");
    let head = robot.com("Head", FRAME_TORSO, false);
    assert!(head[2] > NECK_OFFSET_Z, "the head's mass is above the neck: {head:?}");
    let hand = robot.com("LHand", FRAME_TORSO, false);
    assert_eq!(hand.len(), 3);

    let mass = |name: &str| robot.motion("getMass", vec![name.into()]).as_f64().unwrap();
    let body = mass("Body");
    assert!((5.0..5.8).contains(&body), "NAO V6 weighs about 5.5 kg: {body}");
    let parts: f64 = ["Torso", "Head", "LArm", "RArm", "LLeg", "RLeg"].map(mass).iter().sum();
    assert!((parts - body).abs() < 1e-9, "the parts add up: {parts} for {body}");
    assert_eq!(mass("LArm"), mass("RArm"));
    assert!(mass("LHipPitch") > 0.0);
}

#[test]
fn bad_arguments_are_refused_with_what_was_wrong() {
    let robot = Robot::new();
    let error = robot.error("getPosition", vec!["Tail".into(), FRAME_TORSO.into(), false.into()]);
    assert!(error.contains("unknown effector \"Tail\""), "{error}");
    let error = robot.error("getTransform", vec!["LArm".into(), 3.into(), false.into()]);
    assert!(error.contains("FRAME_TORSO (0), FRAME_WORLD (1) or FRAME_ROBOT (2), got 3"), "{error}");
    let error = robot.error("getCOM", vec!["Nose".into(), FRAME_TORSO.into(), false.into()]);
    assert!(error.contains("unknown part \"Nose\""), "{error}");
    let error = robot.error("getMass", vec!["Nose".into()]);
    assert!(error.contains("unknown part \"Nose\""), "{error}");
    let error = robot.error("getPosition", vec!["LArm".into(), FRAME_TORSO.into()]);
    assert!(!error.is_empty());
}

fn position_value(p: &[f64]) -> Value {
    Value::Array(p.iter().map(|&x| Value::from(x)).collect())
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).take(3).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn set_positions_takes_a_hand_to_its_target_through_inverse_kinematics() {
    let robot = Robot::new();
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

#[test]
fn position_interpolations_move_the_hand_along_straight_lines_and_block_until_there() {
    let robot = Robot::new();
    robot.stand_zero();
    let start = robot.position("RArm", FRAME_ROBOT, false);
    let first = [start[0] - 0.04, start[1], start[2] + 0.04, start[3], start[4], start[5]];
    let second = [start[0] - 0.06, start[1] - 0.03, start[2], start[3], start[4], start[5]];
    let paths = Value::Array(vec![Value::Array(vec![position_value(&first), position_value(&second)])]);
    let times = Value::Array(vec![1.0.into(), 2.0.into()]);
    let args = vec!["RArm".into(), FRAME_ROBOT.into(), paths, 7.into(), times];
    let task = robot.session.post("ALMotion", "positionInterpolations", args).unwrap();
    // Along the first segment, the commanded hand stays near the line start → first.
    let mut cycles = 0;
    while robot.motion("isRunning", vec![task.into()]) == Value::from(true) {
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
    let robot = Robot::new();
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
    let robot = Robot::new();
    let six = position_value(&[0.1, 0.1, 0.1, 0.0, 0.0, 0.0]);
    let set = |name: &str, frame: Value, position: Value, mask: Value| {
        robot.error("setPositions", vec![name.into(), frame, position, 0.5.into(), mask])
    };
    let error = set("LLeg", 0.into(), six.clone(), 7.into());
    assert!(error.contains("Cartesian control of \"LLeg\" is not supported"), "{error}");
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
