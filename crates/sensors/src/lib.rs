//! ALSensors: NAOqi's standard sensor events (touch, bumpers, chest button, foot contact,
//! sonar, battery) raised from the DCM's sensor values, on their edges (docs/sensors.md);
//! and ALSonar, which starts and stops the sonars for its subscribers.
//!
//! A postProcess hook reads the sensors on the DCM cycle thread and queues compact
//! records; the module's actor raises the events in ALMemory, off the real-time thread.
#![deny(unsafe_code, unreachable_pub)]

pub mod catalog;
mod detect;
mod error;
mod module;
mod signals;
mod sonar;
pub mod watch;

use naobroker_dcm_module::DcmHandle;
use naobroker_framework::Broker;

pub use error::WatchError;
pub use module::ALSensors;
pub use sonar::{ALSonar, SONAR_DEVICE};

/// Install the hook on the DCM; the module to add to the broker.
pub fn start(dcm: &DcmHandle, broker: Broker) -> Result<ALSensors, WatchError> {
    Ok(ALSensors::new(watch::install(dcm)?, broker))
}
