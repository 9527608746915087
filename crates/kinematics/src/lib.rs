//! NAO's kinematic and mass model (Aldebaran's published tables, from the robot
//! description): forward kinematics of every joint and chain end, centres of mass,
//! FRAME_ROBOT, Position6D and 4x4 conversions, and inverse kinematics. Metres and radians.
#![deny(unsafe_code)]

mod ik;
mod model;
mod pose;
pub mod transform;

pub use ik::{
    solve, IkError, Solution, AXIS_MASK_ALL, AXIS_MASK_POSITION, REACHED_POSITION, REACHED_ROTATION,
};
pub use model::{Chain, Frame, Model, ModelError, Part};
pub use pose::Pose;
pub use transform::Transform;
