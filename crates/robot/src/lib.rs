//! The robot description (`robots/nao-v6.toml` or a file like it), parsed once and typed:
//! its devices (every actuator and sensor, with their conversions), its joints and their
//! ranges, the kinematic and mass model's numbers, what a physical simulation adds
//! (`[physics]`), and NAOqi's DCM preferences. The DCM,
//! the kinematics, the simulators and whatever draws the robot all read it from here.
#![deny(unsafe_code, unreachable_pub)]

pub mod device;
mod excerpt;
pub mod kinematics;
pub mod physics;
pub mod preferences;
mod subdevice;

pub use excerpt::excerpt;
