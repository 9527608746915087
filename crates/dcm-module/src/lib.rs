//! The DCM as a broker module, above the real-time DCM (`naobroker-dcm`): NAOqi's DCM API
//! (`set`, `setAlias`, `createAlias`, `preferences`, `calibration`...) read from the wire's
//! values into the DCM's types, its preferences shown in ALMemory, `DCM/PreProcess` and
//! `DCM/PostProcess` raised, and the [`DcmHandle`] in-process modules hook the cycle with.
#![deny(unsafe_code, unreachable_pub)]

mod cycle_events;
mod dcm;
mod error;
mod handle;
mod link;
mod methods;
mod module;
pub mod parse;
mod recording;
mod settings;
mod stats;

pub use dcm::Dcm;
pub use error::DcmError;
pub use handle::{DcmHandle, HookConnection, UnknownActuator};
