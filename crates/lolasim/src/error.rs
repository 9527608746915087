//! What can go wrong starting or driving a simulator.

use std::path::PathBuf;
use std::time::Duration;

use naobroker_lola::EncodeError;
use naobroker_robot::device::DescriptionError;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("the robot description: {0}")]
    Description(#[from] DescriptionError),
    #[error("the robot description has no joint {0}, which LoLA drives")]
    MissingJoint(&'static str),
    #[error("cannot listen on {}: {source}", path.display())]
    Listen { path: PathBuf, source: std::io::Error },
    #[error("another LoLA server already answers on {}", .0.display())]
    AlreadyServed(PathBuf),
    #[error("cannot start the simulator's threads: {0}")]
    Thread(std::io::Error),
    /// Scripted values a real robot's 896-byte sensor map cannot carry.
    #[error("the scripted sensors cannot be sent: {0}")]
    Unsendable(#[from] EncodeError),
    #[error("no client connected within {0:?}")]
    NoClient(Duration),
    #[error("the last sensor map got no answer within {0:?}")]
    NoAnswer(Duration),
    #[error("the client did not take the sensor map: {0}")]
    Send(std::io::Error),
    #[error("{0}")]
    Script(#[from] crate::script::ScriptError),
    #[error("step() drives a stepped simulator only (Cadence::Stepped)")]
    NotStepped,
    #[error("the physical robot: {0}")]
    Physics(#[from] naobroker_physics::PhysicsError),
    #[error("{0} needs the physical robot (--physics)")]
    NoPhysics(&'static str),
    #[error("{0} comes from the physical robot's body: it cannot be scripted with --physics")]
    SensedByPhysics(&'static str),
}
