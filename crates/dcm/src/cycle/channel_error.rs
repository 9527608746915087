//! Why a request channel refused a message for the cycle thread: a full queue (the same
//! message may pass a cycle later), a request that could overflow a buffer (refused whole),
//! or a device the model does not have.

use naobroker_robot::device::DeviceIndex;

use crate::core::Overflow;

/// A message the cycle thread was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The queue to the cycle thread is full: retrying after a cycle may succeed.
    #[error("the DCM request queue is full: retry later")]
    QueueFull,
    /// Applying the request could overflow an actuator's buffer: nothing of it was queued.
    #[error(transparent)]
    Overflow(#[from] Overflow),
    #[error("no actuator number {actuator} (the model has {actuators})")]
    NoActuator { actuator: usize, actuators: usize },
    #[error("no sensor number {sensor} (the model has {sensors})")]
    NoSensor { sensor: usize, sensors: usize },
    #[error("no device {0:?} in the model")]
    NoDevice(DeviceIndex),
}
