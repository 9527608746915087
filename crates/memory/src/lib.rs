//! ALMemory, NAOqi's blackboard: data, events and micro-events, subscriptions, and the
//! lock-free real-time slots the DCM publishes its values through.
#![deny(unsafe_code, unreachable_pub)]

mod module;
mod slots;
mod store;

pub use module::{ALMemory, MemoryConfig};
pub use slots::{FastAccess, RtSlots, SlotKind, SlotLayout};
pub use store::{timestamp_now, EntryKind, Store, DCM_OWNED_PREFIXES};
