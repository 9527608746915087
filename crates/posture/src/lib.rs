//! ALRobotPosture: NAOqi's posture library (Stand, StandInit, StandZero, Crouch, Sit, SitRelax,
//! LyingBelly, LyingBack) as joint tables, `goToPosture` through safe intermediate postures,
//! each move between neighbours through its transition's key poses ([`transitions`]; from
//! lying, its stand-up motion first), and the current posture recognised from the sensors
//! (docs/posture.md).
//!
//! The module moves the robot through ALMotion's methods, as any client would; ALMotion uses
//! the library's tables for `wakeUp` and `rest` ([`library`] has no dependency).
#![deny(unsafe_code, unreachable_pub)]

mod error;
pub mod graph;
pub mod library;
mod module;
mod mover;
pub mod recognise;
pub mod transitions;

pub use error::PostureError;
pub use module::ALRobotPosture;
