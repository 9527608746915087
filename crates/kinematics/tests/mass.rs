//! Masses and centres of mass against Aldebaran's Masses table, summed by hand here.

mod common;

use common::angles;
use naobroker_kinematics::{Chain, Model, Part, Pose};

/// The zero posture's links: mass (kg) and centre of mass in FRAME_TORSO (mm), each the
/// joint's position from the Links table plus the link's centre of mass from the Masses
/// table (every joint frame has the torso's axes at the zero posture).
const LEFT_ARM_AND_LEG: [(f64, [f64; 3]); 12] = [
    (0.09304, [-1.65, 98.0 - 26.63, 100.14]), // LShoulderPitch at (0, 98, 100)
    (0.15777, [24.55, 98.0 + 5.63, 103.30]),  // LShoulderRoll at (0, 98, 100)
    (0.06483, [105.0 - 27.44, 113.0, 100.0 - 0.14]), // LElbowYaw at (105, 113, 100)
    (0.07761, [105.0 + 25.56, 113.0 + 2.81, 100.76]), // LElbowRoll at (105, 113, 100)
    (0.18533, [160.95 + 34.34, 113.0 - 0.88, 103.08]), // LWristYaw at (160.95, 113, 100)
    (0.0, [0.0; 3]),                          // LHand: the wrist's link holds its mass
    (0.06981, [-7.81, 50.0 - 11.14, -85.0 + 26.61]), // LHipYawPitch at (0, 50, -85)
    (0.14053, [-15.49, 50.29, -85.0 - 5.15]), // LHipRoll at (0, 50, -85)
    (0.38968, [1.38, 52.21, -85.0 - 53.73]),  // LHipPitch at (0, 50, -85)
    (0.30142, [4.53, 52.25, -185.0 - 49.36]), // LKneePitch at (0, 50, -185)
    (0.13416, [0.45, 50.29, -287.9 + 6.85]),  // LAnklePitch at (0, 50, -287.9)
    (0.17184, [25.42, 53.30, -287.9 - 32.39]), // LAnkleRoll at (0, 50, -287.9)
];
const TORSO: (f64, [f64; 3]) = (1.04956, [-4.13, 0.09, 43.42]);
const NECK: (f64, [f64; 3]) = (0.07842, [-0.01, 0.0, 126.5 - 27.42]);
const HEAD: (f64, [f64; 3]) = (0.65973, [1.09, 1.46, 126.5 + 57.19]);

fn all_links() -> Vec<(f64, [f64; 3])> {
    let mut links = vec![TORSO, NECK, HEAD];
    for (mass, [x, y, z]) in LEFT_ARM_AND_LEG {
        links.push((mass, [x, y, z]));
        links.push((mass, [x, -y, z]));
    }
    links
}

#[test]
fn total_mass_is_the_tables_sum_and_nao_v6s_weight() {
    let model = Model::nao_v6();
    let by_hand: f64 = all_links().iter().map(|(mass, _)| mass).sum();
    assert!((model.total_mass() - by_hand).abs() < 1e-9, "{} vs {by_hand}", model.total_mass());
    // Aldebaran gives NAO V6 about 5.3-5.5 kg.
    assert!((5.3..5.5).contains(&model.total_mass()), "{}", model.total_mass());
    assert_eq!(model.mass("Body"), Some(model.total_mass()));
    assert_eq!(model.mass("Torso"), Some(1.04956));
    assert_eq!(model.mass("HeadPitch"), Some(0.65973));
    let arm = 0.09304 + 0.15777 + 0.06483 + 0.07761 + 0.18533;
    assert!((model.mass("LArm").unwrap() - arm).abs() < 1e-12);
    assert!((model.mass("RArm").unwrap() - arm).abs() < 1e-12);
    assert!((model.mass("LLeg").unwrap() - model.mass("RLeg").unwrap()).abs() < 1e-12);
    assert_eq!(model.mass("Nose"), None);
}

#[test]
fn zero_posture_centre_of_mass_is_the_mass_weighted_sum() {
    let model = Model::nao_v6();
    let pose = Pose::new(&model);
    let links = all_links();
    let total: f64 = links.iter().map(|(mass, _)| mass).sum();
    for axis in 0..3 {
        let by_hand: f64 = links.iter().map(|(mass, com)| mass * com[axis]).sum::<f64>() / total;
        let computed = pose.com(&model, Part::Body)[axis] * 1000.0;
        assert!((computed - by_hand).abs() < 1e-6, "axis {axis}: {computed} mm vs {by_hand} mm");
    }
    let head = pose.com(&model, Part::Chain(Chain::Head));
    let by_hand_z = (NECK.0 * NECK.1[2] + HEAD.0 * HEAD.1[2]) / (NECK.0 + HEAD.0);
    assert!((head[2] * 1000.0 - by_hand_z).abs() < 1e-6, "{head:?}");
    let shoulder = pose.com(&model, Part::Joint(model.joint_index("LShoulderPitch").unwrap()));
    assert!((shoulder[1] * 1000.0 - 71.37).abs() < 1e-6, "{shoulder:?}");
    // A link without mass: its joint's position.
    let hand = pose.com(&model, Part::Joint(model.joint_index("LHand").unwrap()));
    assert!((hand[0] * 1000.0 - 160.95).abs() < 1e-6, "{hand:?}");
}

#[test]
fn centre_of_mass_follows_the_arms_symmetrically() {
    let model = Model::nao_v6();
    let mut pose = Pose::new(&model);
    // Both arms hanging: the body's centre of mass stays on the sagittal plane (but for the
    // torso's and head's own 0.09 and 1.46 mm) and moves back and down.
    let zero = pose.com(&model, Part::Body);
    let hanging = angles(&model, &[("LShoulderPitch", 1.5), ("RShoulderPitch", 1.5)]);
    pose.update(&model, &hanging);
    let com = pose.com(&model, Part::Body);
    assert!((com[1] - zero[1]).abs() < 1e-12, "{com:?} vs {zero:?}");
    assert!(com[0] < zero[0] && com[2] < zero[2], "{com:?} vs {zero:?}");
    let left = pose.com(&model, Part::Chain(Chain::LArm));
    let right = pose.com(&model, Part::Chain(Chain::RArm));
    assert!((left[0] - right[0]).abs() < 1e-12 && (left[1] + right[1]).abs() < 1e-12);
}
