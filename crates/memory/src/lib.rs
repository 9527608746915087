//! ALMemory, NAOqi's blackboard: data, events and micro-events, subscriptions, read beside
//! the lock-free real-time slots (`naobroker-rtslots`) the DCM publishes its values through,
//! which also answer to NAOqi 2.1's older key names.
#![deny(unsafe_code, unreachable_pub)]

mod aliases;
mod error;
mod module;
mod store;

pub use aliases::NAOQI_21_ALIASES;
pub use error::StoreError;
pub use module::{ALMemory, MemoryConfig};
pub use store::{entry_bytes, EntryKind, Store, StoreLimits, Usage, DCM_OWNED_PREFIXES};

/// What ALMotion, ALSensors and ALRobotPosture raise that a robot's tools watch: the events
/// the Foxglove view and the Zenoh adapter carry unless configured otherwise.
pub const WATCHED_EVENTS: [&str; 12] = [
    "robotHasFallen",
    "robotIsFalling",
    "footContactChanged",
    "PostureChanged",
    "ALMotion/MoveFailed",
    "ALMotion/RobotIsStand",
    "FrontTactilTouched",
    "MiddleTactilTouched",
    "RearTactilTouched",
    "ChestButtonPressed",
    "LeftBumperPressed",
    "RightBumperPressed",
];
