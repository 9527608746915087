//! ALMemory, NAOqi's blackboard: data, events and micro-events, subscriptions, read beside
//! the lock-free real-time slots (`naobroker-rtslots`) the DCM publishes its values through.
#![deny(unsafe_code, unreachable_pub)]

mod error;
mod module;
mod store;

pub use error::StoreError;
pub use module::{ALMemory, MemoryConfig};
pub use store::{EntryKind, Store, DCM_OWNED_PREFIXES};
