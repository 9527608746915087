//! The DCM (Device Communication Manager): the robot's timed-command buffers, the
//! seed's interpolation algorithm, the real-time cycle and the hardware behind it.
#![deny(unsafe_code, unreachable_pub)]

pub mod calibration;
mod config;
pub mod core;
pub mod cycle;
pub mod device;
pub mod hardware;
mod module;
pub mod preferences;
pub mod time;

pub use config::{Backend, DcmConfig};
pub use module::{Dcm, DcmHandle, HookConnection};
