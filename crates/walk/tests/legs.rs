//! The legs' closed-form inverse kinematics checked against naobroker-kinematics' forward
//! kinematics of the same model: the soles land where they were asked, flat, turned.

use naobroker_kinematics::transform::{axis_angle, mul, rotation_vector, transpose};
use naobroker_kinematics::{Model, Pose};
use naobroker_walk::{FootPose, LegGeometry, LEFT_LEG, RIGHT_LEG};

fn sole(model: &Model, pose: &Pose, effector: &str) -> naobroker_kinematics::Transform {
    pose.transform(model.frame(effector).unwrap())
}

/// Both soles `height` below the hips, `forward` ahead of them, `left` apart beyond the hips'
/// width, the left turned by `turn` and the right by `-turn`: each sole's centre and normal
/// exactly, its yaw within `yaw_tolerance` (rad).
fn check(forward: [f64; 2], left: f64, height: [f64; 2], turn: f64, yaw_tolerance: f64) {
    let model = Model::nao_v6();
    let geometry = LegGeometry::from_model(&model).unwrap();
    let [_, hip_y, hip_z] = geometry.left_hip;
    let target = |side: f64, index: usize| FootPose {
        position: [forward[index], side * (hip_y + left), hip_z - height[index]],
        rotation: axis_angle([0.0, 0.0, 1.0], side * turn),
    };
    let (left_target, right_target) = (target(1.0, 0), target(-1.0, 1));
    let (left_angles, right_angles) = geometry.solve(&left_target, &right_target, 0.0);
    assert_eq!(left_angles[0], right_angles[0], "one HipYawPitch motor");
    let mut angles = vec![0.0; model.joint_names().len()];
    for (names, leg) in [(LEFT_LEG, left_angles), (RIGHT_LEG, right_angles)] {
        for (name, angle) in names.iter().zip(leg) {
            angles[model.joint_index(name).unwrap()] = angle;
        }
    }
    let mut pose = Pose::new(&model);
    pose.update(&model, &angles);
    for (effector, target) in [("LLeg", left_target), ("RLeg", right_target)] {
        let reached = sole(&model, &pose, effector);
        let distance: f64 =
            (0..3).map(|i| (reached.translation[i] - target.position[i]).powi(2)).sum::<f64>().sqrt();
        assert!(distance < 1e-9, "{effector} sole {distance} m off at {forward:?} {left} {height:?} {turn}");
        let error = rotation_vector(&mul(&transpose(&target.rotation), &reached.rotation));
        let context = format!("{effector} sole turned {error:?} off at {forward:?} {left} {height:?} {turn}");
        assert!(error[0].abs() < 1e-9 && error[1].abs() < 1e-9, "{context}");
        assert!(error[2].abs() < yaw_tolerance, "{context}");
    }
}

#[test]
fn standing_soles_land_exactly_where_asked() {
    check([0.0, 0.0], 0.0, [0.225, 0.225], 0.0, 1e-9);
    check([-0.01, -0.01], 0.01, [0.2, 0.2], 0.0, 1e-9);
}

#[test]
fn stepping_soles_lifted_and_apart_land_exactly_where_asked() {
    check([0.04, -0.04], 0.0, [0.2, 0.225], 0.0, 1e-9);
    check([-0.03, 0.03], 0.03, [0.225, 0.2], 0.0, 1e-9);
}

#[test]
fn soles_turned_alike_share_one_hip_yaw_pitch_and_land_exactly_where_asked() {
    check([0.0, 0.0], 0.0, [0.225, 0.225], 0.3, 1e-9);
    check([0.02, 0.02], 0.02, [0.21, 0.21], -0.25, 1e-9);
}

/// One HipYawPitch for both legs leaves each foot one degree of freedom short: legs that
/// differ and turn cannot both turn exactly, and the compromise shares the error.
#[test]
fn soles_turned_alike_but_placed_apart_stay_flat_and_miss_their_turn_by_under_three_degrees() {
    check([0.02, -0.02], 0.02, [0.21, 0.225], -0.25, 0.05);
    check([0.04, -0.04], 0.0, [0.2, 0.225], 0.4, 0.05);
}
