//! Helpers shared by the kinematics tests: angles by name, and comparisons in mm.

use naobroker_kinematics::{Model, Pose, Transform};

/// All angles zero but the named ones.
pub fn angles(model: &Model, named: &[(&str, f64)]) -> Vec<f64> {
    let mut angles = vec![0.0; model.joint_names().len()];
    for (name, angle) in named {
        angles[model.joint_index(name).unwrap_or_else(|| panic!("no joint {name}"))] = *angle;
    }
    angles
}

/// The named frame's transform for these angles.
pub fn frame_at(model: &Model, angles: &[f64], frame: &str) -> Transform {
    let mut pose = Pose::new(model);
    pose.update(model, angles);
    pose.transform(model.frame(frame).unwrap_or_else(|| panic!("no frame {frame}")))
}

/// `actual` (m) is `expected_mm` (mm) within a micrometre.
pub fn assert_mm(actual: [f64; 3], expected_mm: [f64; 3], what: &str) {
    for axis in 0..3 {
        let difference = (actual[axis] * 1000.0 - expected_mm[axis]).abs();
        assert!(difference < 1e-3, "{what}: {actual:?} m, expected {expected_mm:?} mm");
    }
}
