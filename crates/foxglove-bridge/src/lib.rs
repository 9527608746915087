//! The live view for Foxglove and Lichtblick (`[foxglove] listen`): the official Foxglove
//! SDK's WebSocket server with the robot's joints, link transforms, odometry, inertial unit,
//! foot pressure, battery, sonars, events, log lines, robot description and chosen ALMemory
//! keys, fed from what the real-time threads already publish (docs/visualisation.md); and the
//! same channels for `naocli record`'s MCAP files.
#![deny(unsafe_code, unreachable_pub)]

mod bounds;
mod config;
mod error;
mod gate;
mod live;
mod module;
pub mod robot;

pub use bounds::{
    MAX_EVENTS, MAX_FRAME_BYTES, MAX_KEYS, MAX_KEYS_RATE_HZ, MAX_KEY_BYTES, MAX_VIEWERS, VIEWER_QUEUE_BYTES,
};
pub use config::FoxgloveConfig;
pub use error::FoxgloveError;
pub use live::{start, LiveSources, LiveView};
pub use module::{FoxgloveModule, KeysError};
