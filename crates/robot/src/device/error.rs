//! Why a robot description was refused: unreadable, malformed, or describing devices the
//! DCM cannot run.

use std::path::PathBuf;

use crate::physics::TimestepError;
use crate::preferences::{PreferenceError, PreferenceLimit};

/// A robot description refused: unreadable, malformed, or with devices no DCM can run.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionError {
    #[error("cannot read robot description {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A refusal of the description read from `path`.
    #[error("{}: {source}", path.display())]
    InFile { path: PathBuf, source: Box<DescriptionError> },
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    #[error("{0}: gain must be a non-zero number")]
    ZeroGain(String),
    #[error("{0}: min is above max")]
    MinAboveMax(String),
    #[error(transparent)]
    Timestep(#[from] TimestepError),
    #[error(transparent)]
    Preferences(#[from] PreferenceError),
    /// A device's gain or offset in the preferences is beyond its bounds.
    #[error(transparent)]
    Conversion(#[from] PreferenceLimit),
    #[error("device {0} is declared twice")]
    DeclaredTwice(String),
    /// An actuator `X/Value` beside a sensor `X` would both publish `X/Gain`.
    #[error("devices {first} and {second} both publish {key}: rename one")]
    SharedKey { first: String, second: String, key: String },
}
