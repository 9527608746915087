//! The robot on a Zenoh network (`[zenoh]`): its ALMemory values, events, exported methods
//! and liveliness under `naobroker/<robot>/`, for tools and off-board modules that watch a
//! team of robots without knowing their addresses (docs/team.md).
#![deny(unsafe_code, unreachable_pub)]

mod bounds;
mod bridge;
mod caller;
mod config;
mod error;
mod events;
mod exports;
mod feed;
mod keys;
mod module;
mod queries;
mod ros2;
mod session;
mod tf;
mod watch;

pub use bounds::{
    CALL_DEADLINE, EVENT_QUEUE, EVENT_QUEUE_BYTES, MAX_CALLS_IN_FLIGHT, MAX_CALL_PAYLOAD_BYTES,
    MAX_DOMAIN_ID, MAX_LISTED, MAX_MEMORY_REPLIES, MAX_MEMORY_REPLY_BYTES, MAX_MESSAGE_BYTES, MAX_RATE_HZ,
    QUERY_QUEUE,
};
pub use bridge::{start, ZenohBridge, ZenohSources};
pub use config::{AuthConfig, Mode, ZenohConfig};
pub use error::ZenohError;
pub use keys::ROOT;
pub use module::ZenohModule;
pub use ros2::Ros2Config;
