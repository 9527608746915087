//! ALMotion's Cartesian layer: the kinematic model joined to the body's motors, the
//! frames and parts the API names, and the seqlock through which the motion thread
//! publishes each cycle's Cartesian data (docs/motion.md, "Cartesian data").

use std::collections::HashMap;

use naobroker_kinematics::{Chain, Frame, Model, Part, Pose, Transform};

mod plan;
mod published;

pub use plan::{JointPlan, Planner, Waypoint};
pub use published::{Published, Snapshot};

/// NAOqi's spaces: `FRAME_TORSO = 0`, `FRAME_WORLD = 1`, `FRAME_ROBOT = 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Torso,
    World,
    Robot,
}

impl Space {
    pub fn from_code(code: i64) -> Option<Space> {
        match code {
            0 => Some(Space::Torso),
            1 => Some(Space::World),
            2 => Some(Space::Robot),
            _ => None,
        }
    }
}

/// Which of the two models: the angles the sensors measure, or the ones ALMotion commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Commanded = 0,
    Sensed = 1,
}

/// The kinematic model, and how it meets the body: which motor gives each model joint's
/// angle, and which frames and parts the API may name, in the order they are published.
#[derive(Debug)]
pub struct Kinematics {
    pub model: Model,
    /// Per model joint: the motor giving its angle (RHipYawPitch: LHipYawPitch's), if any.
    motors: Vec<Option<usize>>,
    frames: Vec<Frame>,
    frame_slots: HashMap<String, usize>,
    parts: Vec<Part>,
    part_slots: HashMap<String, usize>,
}

impl Kinematics {
    /// `motor_of` gives the motor of a joint name, for the joints the robot has.
    pub fn new(model: Model, motor_of: impl Fn(&str) -> Option<usize>) -> Kinematics {
        let motors = model.joint_names().iter().map(|name| motor_of(name)).collect();
        let frame_names = std::iter::once("Torso")
            .chain(model.joint_names().iter().map(String::as_str))
            .chain(model.effector_names().iter().map(String::as_str));
        let mut frames = Vec::new();
        let mut frame_slots = HashMap::new();
        for name in frame_names {
            if let Some(frame) = model.frame(name) {
                frame_slots.insert(name.to_string(), frames.len());
                frames.push(frame);
            }
        }
        let part_names = ["Body", "Torso"]
            .into_iter()
            .chain(Chain::ALL.map(Chain::name))
            .chain(model.joint_names().iter().map(String::as_str));
        let mut parts = Vec::new();
        let mut part_slots = HashMap::new();
        for name in part_names {
            if let Some(part) = model.part(name) {
                part_slots.insert(name.to_string(), parts.len());
                parts.push(part);
            }
        }
        Kinematics { model, motors, frames, frame_slots, parts, part_slots }
    }

    /// The model's angles (`Model::joint_names` order) from per-motor values; a joint
    /// without a motor stays at 0.
    pub fn angles_from_motors(&self, motor_values: impl Fn(usize) -> f64, angles: &mut [f64]) {
        for (angle, motor) in angles.iter_mut().zip(&self.motors) {
            *angle = motor.map_or(0.0, &motor_values);
        }
    }

    /// The publication slot of a frame name: "Torso", a joint, a chain end, a camera.
    pub fn frame_slot(&self, name: &str) -> Option<usize> {
        self.frame_slots.get(name).copied()
    }

    /// The publication slot of a part name: "Body", "Torso", a chain, a joint.
    pub fn part_slot(&self, name: &str) -> Option<usize> {
        self.part_slots.get(name).copied()
    }

    pub(crate) fn frames(&self) -> &[Frame] {
        &self.frames
    }

    pub(crate) fn parts(&self) -> &[Part] {
        &self.parts
    }
}

/// One model's Cartesian data for a cycle, as the motion thread computes it.
pub struct CartesianPose<'a> {
    pub pose: &'a Pose,
    /// FRAME_TORSO in FRAME_ROBOT.
    pub torso_in_robot: Transform,
}
