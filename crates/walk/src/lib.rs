//! NAO's walk: an omnidirectional walk of Walk2014's family (docs/walk.md), pure like
//! naobroker-kinematics: ALMotion's motion cycle drives it, tests drive it on the physically
//! simulated robot.
#![deny(unsafe_code, unreachable_pub)]

mod gait;
mod legs;
mod parameters;

pub use gait::{Foot, FootStep, Odometry, PlanFull, Walk, WalkOutput, WalkSensors, WalkState, MAX_FOOTSTEPS};
pub use legs::{FootPose, LegAngles, LegGeometry, MissingLeg, LEFT_LEG, RIGHT_LEG};
pub use parameters::{Step, WalkParameters};
