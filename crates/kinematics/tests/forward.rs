//! Forward kinematics against poses worked out by hand from Aldebaran's link lengths
//! (NeckOffsetZ 126.5, ShoulderOffsetY 98, ShoulderOffsetZ 100, UpperArmLength 105,
//! ElbowOffsetY 15, LowerArmLength 55.95, HandOffsetX 57.75, HandOffsetZ 12.31, HipOffsetY 50,
//! HipOffsetZ 85, ThighLength 100, TibiaLength 102.9, FootHeight 45.19 mm), and left/right
//! symmetry.

mod common;

use std::f64::consts::FRAC_PI_2;

use common::{angles, assert_mm, frame_at};
use naobroker_kinematics::{Model, Pose};

#[test]
fn zero_pose_puts_every_chain_end_where_the_link_table_adds_up() {
    let model = Model::nao_v6();
    let zero = angles(&model, &[]);
    assert_mm(frame_at(&model, &zero, "Head").translation, [0.0, 0.0, 126.5], "Head");
    // Shoulder (0, 98, 100) + upper arm (105, 15, 0) + forearm (55.95, 0, 0) + hand (57.75, 0, -12.31).
    assert_mm(frame_at(&model, &zero, "LArm").translation, [218.7, 113.0, 87.69], "LArm");
    assert_mm(frame_at(&model, &zero, "RArm").translation, [218.7, -113.0, 87.69], "RArm");
    // Hip (0, ±50, -85), thigh 100, tibia 102.9, foot height 45.19 straight down.
    assert_mm(frame_at(&model, &zero, "LLeg").translation, [0.0, 50.0, -333.09], "LLeg");
    assert_mm(frame_at(&model, &zero, "RLeg").translation, [0.0, -50.0, -333.09], "RLeg");
    assert_mm(frame_at(&model, &zero, "LElbowYaw").translation, [105.0, 113.0, 100.0], "LElbowYaw");
    assert_mm(frame_at(&model, &zero, "RKneePitch").translation, [0.0, -50.0, -185.0], "RKneePitch");
    assert_mm(frame_at(&model, &zero, "Torso").translation, [0.0; 3], "Torso");
    let hand = frame_at(&model, &zero, "LArm").to_position6d();
    assert!(hand[3..].iter().all(|w| w.abs() < 1e-12), "zero pose, no rotation: {hand:?}");
}

#[test]
fn arms_hanging_point_straight_down() {
    let model = Model::nao_v6();
    let hanging = angles(&model, &[("LShoulderPitch", FRAC_PI_2), ("RShoulderPitch", FRAC_PI_2)]);
    // Pitching 90° about y maps (x, y, z) to (z, y, -x) below the shoulder at (0, ±98, 100).
    // Elbow: (0, 98 + 15, 100 - 105); hand: + (0, 0, -55.95) + (-12.31, 0, -57.75).
    assert_mm(frame_at(&model, &hanging, "LElbowRoll").translation, [0.0, 113.0, -5.0], "elbow");
    assert_mm(frame_at(&model, &hanging, "LArm").translation, [-12.31, 113.0, -118.7], "LArm");
    assert_mm(frame_at(&model, &hanging, "RArm").translation, [-12.31, -113.0, -118.7], "RArm");
    let wy = frame_at(&model, &hanging, "LArm").to_position6d()[4];
    assert!((wy - FRAC_PI_2).abs() < 1e-9, "the hand pitched down: {wy}");
}

#[test]
fn shoulder_rolled_out_points_the_arm_sideways() {
    let model = Model::nao_v6();
    let rolled = angles(&model, &[("LShoulderRoll", FRAC_PI_2)]);
    // Rolling 90° about z maps (x, y, z) to (-y, x, z): the arm along +y.
    let expected = [-15.0, 98.0 + 105.0 + 55.95 + 57.75, 87.69];
    assert_mm(frame_at(&model, &rolled, "LArm").translation, expected, "LArm");
}

#[test]
fn elbow_rolled_in_folds_the_forearm_across() {
    let model = Model::nao_v6();
    let folded = angles(&model, &[("LElbowRoll", -FRAC_PI_2)]);
    // From the elbow (105, 113, 100), -90° about z maps (x, y, z) to (y, -x, z).
    let expected = [105.0, 113.0 - 55.95 - 57.75, 100.0 - 12.31];
    assert_mm(frame_at(&model, &folded, "LArm").translation, expected, "LArm");
    // Elbow yaw then turns the folded forearm and hand, (0, -113.7, -12.31) from the elbow,
    // about the upper arm (x): 90° maps (x, y, z) to (x, -z, y).
    let turned = angles(&model, &[("LElbowRoll", -FRAC_PI_2), ("LElbowYaw", FRAC_PI_2)]);
    let expected = [105.0, 113.0 + 12.31, 100.0 - 55.95 - 57.75];
    assert_mm(frame_at(&model, &turned, "LArm").translation, expected, "elbow yawed");
}

#[test]
fn head_yaw_and_pitch_carry_the_cameras() {
    let model = Model::nao_v6();
    let yawed = angles(&model, &[("HeadYaw", FRAC_PI_2)]);
    // CameraTop (58.71, 0, 63.64) from the neck, turned 90° left.
    assert_mm(frame_at(&model, &yawed, "CameraTop").translation, [0.0, 58.71, 190.14], "CameraTop");
    let head = frame_at(&model, &yawed, "Head").to_position6d();
    assert!((head[5] - FRAC_PI_2).abs() < 1e-9 && head[4].abs() < 1e-9, "{head:?}");
    let pitch: f64 = 0.4;
    let pitched = angles(&model, &[("HeadPitch", pitch)]);
    let (s, c) = pitch.sin_cos();
    let expected = [50.71 * c + 17.74 * s, 0.0, 126.5 - 50.71 * s + 17.74 * c];
    assert_mm(frame_at(&model, &pitched, "CameraBottom").translation, expected, "CameraBottom");
    let camera = frame_at(&model, &pitched, "CameraBottom").to_position6d();
    assert!((camera[4] - (pitch + 0.6929)).abs() < 1e-9, "the bottom camera looks down: {camera:?}");
}

#[test]
fn bent_knee_moves_the_foot_by_hand_trigonometry() {
    let model = Model::nao_v6();
    let knee: f64 = 1.0;
    let bent = angles(&model, &[("LKneePitch", knee)]);
    // Below the knee (0, 50, -185) the tibia and the foot height (148.09 mm) swing back.
    let (s, c) = knee.sin_cos();
    let expected = [-148.09 * s, 50.0, -185.0 - 148.09 * c];
    assert_mm(frame_at(&model, &bent, "LLeg").translation, expected, "LLeg");
    // Crouched: hip -0.5, knee 1.0, ankle -0.5 keep the sole flat under the hip.
    let crouch = angles(&model, &[("RHipPitch", -0.5), ("RKneePitch", 1.0), ("RAnklePitch", -0.5)]);
    let (s, c) = 0.5f64.sin_cos();
    let expected = [100.0 * s - 102.9 * s, -50.0, -85.0 - 100.0 * c - 102.9 * c - 45.19];
    let foot = frame_at(&model, &crouch, "RLeg");
    assert_mm(foot.translation, expected, "RLeg");
    assert!(foot.to_position6d()[3..].iter().all(|w| w.abs() < 1e-9), "flat sole");
}

#[test]
fn hip_yaw_pitch_turns_the_leg_about_the_45_degree_axis() {
    let model = Model::nao_v6();
    // A vector (0, 0, -L) turned by θ about a = (0, 1, -1)/√2: the part along a,
    // (0, L/2, -L/2), stays; the rest, (0, -L/2, -L/2), turns: cos θ of it plus sin θ of
    // a × (0, 0, -L) = (-L/√2, 0, 0).
    let length = 100.0 + 102.9 + 45.19;
    let theta: f64 = -0.6;
    let (s, c) = theta.sin_cos();
    let turned = angles(&model, &[("LHipYawPitch", theta)]);
    let expected = [
        -length * s / 2f64.sqrt(),
        50.0 + length / 2.0 - length * c / 2.0,
        -85.0 - length / 2.0 - length * c / 2.0,
    ];
    assert_mm(frame_at(&model, &turned, "LLeg").translation, expected, "LLeg");
}

/// NAOqi's mirror image of a joint's angle: pitches stay, rolls and yaws change sign (the
/// hip's yaw-pitch joint too: its axis is mirrored).
fn mirrored_name_and_sign(name: &str) -> (String, f64) {
    let other =
        if let Some(rest) = name.strip_prefix('L') { format!("R{rest}") } else { format!("L{}", &name[1..]) };
    let sign = if name.ends_with("Pitch") { 1.0 } else { -1.0 };
    (other, sign)
}

#[test]
fn mirrored_angles_give_mirrored_positions() {
    let model = Model::nao_v6();
    let left: [(&str, f64); 11] = [
        ("LShoulderPitch", 0.7),
        ("LShoulderRoll", 0.4),
        ("LElbowYaw", -1.1),
        ("LElbowRoll", -0.8),
        ("LWristYaw", 0.5),
        ("LHipYawPitch", -0.3),
        ("LHipRoll", 0.2),
        ("LHipPitch", -0.6),
        ("LKneePitch", 1.2),
        ("LAnklePitch", -0.4),
        ("LAnkleRoll", -0.1),
    ];
    let mut right = Vec::new();
    for (name, angle) in left {
        let (other, sign) = mirrored_name_and_sign(name);
        right.push((other, sign * angle));
    }
    let right: Vec<(&str, f64)> = right.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let left_angles = angles(&model, &left);
    let right_angles = angles(&model, &right);
    let mut pose_left = Pose::new(&model);
    pose_left.update(&model, &left_angles);
    let mut pose_right = Pose::new(&model);
    pose_right.update(&model, &right_angles);
    for (l, r) in
        [("LArm", "RArm"), ("LLeg", "RLeg"), ("LElbowRoll", "RElbowRoll"), ("LKneePitch", "RKneePitch")]
    {
        let a = pose_left.transform(model.frame(l).unwrap()).to_position6d();
        let b = pose_right.transform(model.frame(r).unwrap()).to_position6d();
        let mirrored = [b[0], -b[1], b[2], -b[3], b[4], -b[5]];
        for k in 0..6 {
            assert!((a[k] - mirrored[k]).abs() < 1e-9, "{l} {a:?} vs mirrored {r} {mirrored:?}");
        }
    }
}
