//! Each arm's motors for collision protection (the self-collision model is
//! `self_collision.rs`): the joints that place its shapes, resolved once.

use crate::body::Body;
use crate::self_collision::Arm;

/// The joints placing an arm's shapes: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll,
/// and WristYaw, which turns the hand about the forearm.
const ARM_JOINTS: [&str; 5] = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw"];

/// One arm's motors, resolved once.
#[derive(Debug, Clone, Copy)]
pub struct ArmJoints {
    pub arm: Arm,
    /// The motors of [`ARM_JOINTS`], in that order.
    pub motors: [usize; 5],
    /// Bit mask of `motors`.
    pub mask: u64,
}

impl ArmJoints {
    /// The arm's motors in `body`, if it has them all, a kinematic model and collision shapes.
    pub fn find(body: &Body, arm: Arm) -> Option<ArmJoints> {
        if !body.collision.as_ref()?.has_arm(arm) {
            return None;
        }
        let prefix = if arm == Arm::Left { "L" } else { "R" };
        let mut motors = [0; 5];
        for (slot, joint) in ARM_JOINTS.iter().enumerate() {
            let name = format!("{prefix}{joint}");
            motors[slot] = body.motors.iter().position(|motor| motor.name == name)?;
        }
        let mask = motors.iter().fold(0, |mask, &motor| mask | 1u64 << motor);
        Some(ArmJoints { arm, motors, mask })
    }
}
