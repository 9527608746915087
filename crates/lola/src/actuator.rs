//! The actuator map a client answers every sensor map with, as typed fixed arrays.

use crate::JOINT_COUNT;

/// One actuator map: every array in LoLA's own index order ([`crate::names`] lists the
/// device behind each index). LED values 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ActuatorMap {
    /// Joint targets, rad.
    pub position: [f32; JOINT_COUNT],
    /// Joint stiffness, 0..1.
    pub stiffness: [f32; JOINT_COUNT],
    /// Red ×8, green ×8, blue ×8, each at 45°, 0°, 315°, 270°, 225°, 180°, 135°, 90°.
    pub l_eye: [f32; 24],
    /// Red ×8, green ×8, blue ×8, each at 0°, 45°, 90°, … 315°.
    pub r_eye: [f32; 24],
    /// Blue, 0° to 324° by 36°.
    pub l_ear: [f32; 10],
    /// Blue, 324° down to 0° by 36°.
    pub r_ear: [f32; 10],
    /// Red, green, blue.
    pub chest: [f32; 3],
    pub l_foot: [f32; 3],
    pub r_foot: [f32; 3],
    /// Six a side, front left going round to front right ([`crate::names::SKULL`]).
    pub skull: [f32; 12],
    /// Left, right sonar enabled.
    pub sonar: [bool; 2],
}
