//! Why ALSensors cannot watch the robot's sensors.

use naobroker_dcm::cycle::ChannelError;
use naobroker_rtslots::NotRealTimeKey;
use thiserror::Error;

/// What stopped [`crate::watch::install`] (and so [`crate::start`]).
#[derive(Debug, Error)]
pub enum WatchError {
    /// A sensor of the table, present in the robot description, that the DCM does not publish.
    #[error(transparent)]
    Sensor(#[from] NotRealTimeKey),
    /// The socket that wakes the module's actor after a cycle that queued records.
    #[error("wake-up socket: {0}")]
    WakeSocket(#[source] std::io::Error),
    /// The DCM did not take the postProcess hook.
    #[error(transparent)]
    Hook(#[from] ChannelError),
}
