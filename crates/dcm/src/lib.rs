//! The DCM (Device Communication Manager): the robot's timed-command buffers, the
//! seed's interpolation algorithm, the real-time cycle and the hardware behind it.
#![deny(unsafe_code, unreachable_pub)]

pub mod core;
pub mod device;
pub mod cycle;
pub mod hardware;
pub mod time;
mod config;
mod module;

pub use config::{Backend, DcmConfig};
pub use module::{Dcm, DcmHandle, HookConnection};
