//! ALMotion's Cartesian queries against the real broker under the manual clock: positions,
//! transforms, centres of mass and masses checked against numbers worked out here from
//! NAO V6's published link lengths (Aldebaran's "Links" tables), not by the kinematics
//! crate.

use naobroker_e2e::cartesian::assert_close;
use naobroker_e2e::robot::Robot;

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
    let robot = Robot::start();
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
    let robot = Robot::start();
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
    let robot = Robot::start();
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
    // NAOqi's StandInit table mirrors the arms to float precision only (LShoulderRoll
    // 0.299999982, RShoulderRoll -0.300000042): symmetric within a micrometre.
    assert_close(&right[..3], &[left[0], -left[1], left[2]], 1e-6, "left/right symmetry");
}

#[test]
fn sensed_and_commanded_positions_part_while_a_limp_joint_is_commanded() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), 0.0.into()]);
    robot.motion("setAngles", vec!["HeadYaw".into(), 1.0.into(), 1.0.into()]);
    robot.step(100);
    let commanded = robot.position("Head", FRAME_TORSO, false);
    let sensed = robot.position("Head", FRAME_TORSO, true);
    assert!((commanded[5] - 1.0).abs() < 1e-9, "commanded: turned to 1 rad {commanded:?}");
    assert!(sensed[5].abs() < 1e-3, "sensed: the limp head stayed {sensed:?}");
    // Stiffened, it is held where it is, as NAOqi holds a limp joint moved by hand, and the
    // command model takes the sensed angle: the two agree again.
    robot.motion("setStiffnesses", vec!["Head".into(), 1.0.into()]);
    robot.step(200);
    let held = robot.position("Head", FRAME_TORSO, true);
    assert!(held[5].abs() < 1e-3, "held where the limp head was: {held:?}");
    assert_close(&robot.position("Head", FRAME_TORSO, false), &held, 1e-3, "commanded is sensed");
}

#[test]
fn the_centre_of_mass_of_a_standing_robot_and_the_masses() {
    let robot = Robot::start();
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
    let robot = Robot::start();
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
