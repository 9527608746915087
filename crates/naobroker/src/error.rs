//! Why the broker does not start: a configuration file it cannot use, or a part of the
//! robot (description, hardware, DCM cycle, broker, a built-in module) that does not start.

use std::path::PathBuf;

use naobroker_dcm::cycle::UnknownProducer;
use naobroker_framework::{CurveKeyError, RegistrationError};
use naobroker_robot::device::DescriptionError;
use thiserror::Error;

use crate::dcm_config::DcmConfigError;

/// A `broker.toml` that cannot be used; the message names the file or the setting.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", .path.display())]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("[broker.curve] secret_key_file {}: {source}", .path.display())]
    SecretKeyFile { path: PathBuf, source: std::io::Error },
    #[error("[broker.curve] secret_key_file {}: {source}", .path.display())]
    SecretKey { path: PathBuf, source: CurveKeyError },
    #[error("[broker.curve] clients: {key:?}: {source}")]
    ClientKey { key: String, source: CurveKeyError },
}

/// What stopped [`crate::start`].
#[derive(Debug, Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    DcmConfig(#[from] DcmConfigError),
    #[error(transparent)]
    RobotDescription(#[from] DescriptionError),
    #[error("cannot start the serial backend: {0}")]
    SerialBackend(#[source] std::io::Error),
    #[error("cannot start the DCM cycle thread: {0}")]
    CycleThread(#[source] std::io::Error),
    #[error(transparent)]
    RequestChannel(#[from] UnknownProducer),
    #[error(transparent)]
    Broker(#[from] naobroker_framework::StartError),
    #[error(transparent)]
    Module(#[from] RegistrationError),
    #[error(transparent)]
    Motion(#[from] naobroker_motion::StartError),
    #[error(transparent)]
    Sensors(#[from] naobroker_sensors::WatchError),
    #[error(transparent)]
    QiListen(#[from] naobroker_qi_wire::QiListenError),
    #[error(transparent)]
    Foxglove(#[from] naobroker_foxglove::FoxgloveError),
    #[error(transparent)]
    Zenoh(#[from] naobroker_zenoh::ZenohError),
}
