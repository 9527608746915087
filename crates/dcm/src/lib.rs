//! The DCM (Device Communication Manager): the robot's timed-command buffers, the
//! seed's interpolation algorithm, the real-time cycle and the hardware behind it. No
//! broker here: requests arrive typed, and the DCM's face as a broker module (NAOqi's
//! arguments, ALMemory, events) is `naobroker-dcm-module`.
#![deny(unsafe_code, unreachable_pub)]

pub mod calibration;
mod config;
pub mod core;
pub mod cycle;
pub mod hardware;
pub mod time;

pub use config::{Backend, DcmConfig, DcmConfigError};
