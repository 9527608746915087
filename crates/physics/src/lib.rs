//! A physically simulated NAO V6 on MuJoCo (`naobroker-mujoco`): the MJCF model generated
//! from the robot description (`mjcf`), so that the kinematics, the collision checker and
//! the physics read one source; the body stepped deterministically with servos whose torque
//! follows NAOqi's stiffness (`body`); what its sensors read; the worlds it stands in. The
//! description's `[physics]` is `naobroker-robot`'s.
//! `naobroker-lolasim --physics` serves it through LoLA (docs/physics.md).
#![deny(unsafe_code)]

mod body;
mod mjcf;
mod robot;
mod world;

pub use body::{InertialReading, PhysicalBody, Truth, FALLEN_TILT_RAD, GRAVITY};
pub use mjcf::{generate, JointRange};
pub use naobroker_mujoco::MujocoError;
pub use robot::RobotModel;
pub use world::{World, ROOM_WALL_X_M};

/// Why the simulated robot could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PhysicsError {
    #[error(transparent)]
    Mujoco(#[from] MujocoError),
    #[error("the robot description has no [physics] section")]
    NoPhysics,
    #[error("the robot description has no [kinematics] section")]
    NoKinematics,
    #[error("no servo in [physics] drives {0}")]
    NoServo(String),
    #[error("no [[joint]] gives {0}'s range")]
    NoRange(String),
    #[error("{0} has no inertia_kg_m2 in [kinematics]")]
    NoInertia(String),
    #[error("the generated model has no {0}")]
    NotInModel(String),
}
