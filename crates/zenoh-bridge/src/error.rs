//! Why the Zenoh adapter does not start.

use std::path::PathBuf;

use thiserror::Error;

use crate::bounds::{MAX_DOMAIN_ID, MAX_LISTED, MAX_RATE_HZ};

#[derive(Debug, Error)]
pub enum ZenohError {
    #[error(
        "[zenoh] robot {0:?}: the robot's name is one key chunk of 1 to 64 bytes: letters, digits, \
         '-', '_' or '.'"
    )]
    BadRobot(String),
    #[error("[zenoh] robot: not set, and the host name cannot be read ({0}); set robot = \"NAME\"")]
    NoHostName(String),
    #[error("[zenoh] {what}: {count} entries, at most {MAX_LISTED}")]
    TooMany { what: &'static str, count: usize },
    #[error("[zenoh] {what} {pattern:?}: expected Module.method or Module.prefix* (e.g. ALMotion.get*)")]
    BadPattern { what: &'static str, pattern: String },
    #[error(
        "[zenoh] calls {0:?}: it may name a method that acts on the robot (every peer may call \
         `calls`): list such methods in moves, for [zenoh.auth] movers (docs/team.md)"
    )]
    ActingCall(String),
    #[error("[zenoh] events {0:?}: an event name is a valid key expression without wildcards")]
    BadEvent(String),
    #[error("[zenoh] rate_hz {0}: expected more than 0 and at most {MAX_RATE_HZ}")]
    Rate(f64),
    #[error("[zenoh.ros2] domain_id {0}: ROS 2's domains are 0 to {MAX_DOMAIN_ID}")]
    DomainId(u32),
    #[error(
        "[zenoh] moves and [zenoh.ros2] cmd_vel move the robot: they need authenticated peers, \
         so [zenoh.auth] with a dictionary_file and at least one of its users in movers \
         (docs/security.md)"
    )]
    MovesWithoutAuth,
    #[error("[zenoh.auth] dictionary_file {}: {source}", .path.display())]
    Dictionary { path: PathBuf, source: std::io::Error },
    #[error("[zenoh.auth] dictionary_file {}: {problem}", .path.display())]
    BadDictionary { path: PathBuf, problem: String },
    #[error("[zenoh] {0}")]
    Zenoh(String),
    #[error("cannot start the Zenoh adapter: {0}")]
    Start(String),
}
