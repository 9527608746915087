//! The DCM (Device Communication Manager): the robot's timed-command buffers, the
//! seed's interpolation algorithm and the real-time cycle, run over any hardware behind
//! `naobroker-hardware`'s trait (the backends are crates of their own) for the devices
//! of a `naobroker-robot` description. No broker here: requests arrive typed, and the
//! DCM's face as a broker module (NAOqi's arguments, ALMemory, events) is
//! `naobroker-dcm-module`.
#![deny(unsafe_code, unreachable_pub)]

pub mod calibration;
mod conversions;
pub mod core;
pub mod cycle;

/// DCM time is the hardware's: the trait's calls carry it.
pub use naobroker_hardware::time;
