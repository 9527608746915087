//! What ALMemory's store refuses: writing or removing what the DCM owns, a key that is not
//! there, the DCM's data where an event is.

use naobroker_framework::{excerpt, CallError, ErrorKind};
use thiserror::Error;

/// A write or removal the store refuses; keys longer than an excerpt are cut in the message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StoreError {
    #[error(
        "{} is owned by DCM: send actuator commands with DCM.set, modules cannot write it",
        excerpt(.key)
    )]
    OwnedByDcm { key: String },
    #[error("{} is owned by DCM and cannot be removed", excerpt(.key))]
    CannotRemove { key: String },
    #[error("no key named {}", excerpt(.key))]
    NoKey { key: String },
    /// [`crate::Store::insert_owned`] on a key outside the DCM's prefixes, or a real-time slot.
    #[error("{key} is not a key for the DCM's data")]
    NotDcmData { key: String },
    /// [`crate::Store::insert_owned`] on one of the DCM's events.
    #[error("{key} is an event, not a key for the DCM's data")]
    Event { key: String },
    /// A write past one of `[memory]`'s totals or a client's share of it; the message
    /// names the limit.
    #[error("{message}")]
    Full { message: String },
}

/// ALMemory's methods answer the store's refusals as they are, each of its kind.
impl From<StoreError> for CallError {
    fn from(error: StoreError) -> Self {
        let kind = match &error {
            StoreError::NoKey { .. } => ErrorKind::NotFound,
            StoreError::NotDcmData { .. } | StoreError::Event { .. } => ErrorKind::BadArgument,
            StoreError::OwnedByDcm { .. } | StoreError::CannotRemove { .. } | StoreError::Full { .. } => {
                ErrorKind::Refused
            }
        };
        CallError::of(kind, error.to_string())
    }
}
