//! Helpers shared by the kinematics tests: angles by name, comparisons in mm, the joints'
//! limits and a deterministic spread of configurations.
// Each test binary includes this module and uses only some of it.
#![allow(dead_code)]

use naobroker_kinematics::{Model, Pose, Transform};
use naobroker_robot::device::RobotDescription;

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

/// Each model joint's (min, max) from the shipped robot description's [[joint]] table
/// (RHipYawPitch shares LHipYawPitch's motor and limits).
pub fn limits(model: &Model) -> Vec<(f64, f64)> {
    let description = RobotDescription::nao_v6();
    let limit = |name: &str| {
        let name = if name == "RHipYawPitch" { "LHipYawPitch" } else { name };
        let joint = description.joints.iter().find(|joint| joint.name == name);
        let joint = joint.unwrap_or_else(|| panic!("no limits for {name}"));
        (joint.min, joint.max)
    };
    model.joint_names().iter().map(|name| limit(name)).collect()
}

/// A deterministic spread of configurations within the limits: the k-th takes each joint
/// to a fraction of its range from an additive recurrence (no clock, no randomness).
pub fn spread(limits: &[(f64, f64)], k: usize, margin: f64) -> Vec<f64> {
    limits
        .iter()
        .enumerate()
        .map(|(joint, &(min, max))| {
            let step = (2.0f64.sqrt() * (joint + 1) as f64 + 0.618_034 * (k + 1) as f64).fract();
            let fraction = margin + (1.0 - 2.0 * margin) * step;
            min + (max - min) * fraction
        })
        .collect()
}
