//! Why a DCM method refused a call: the DCM's own refusals and the arguments' problems,
//! typed, put into words for the caller once.

use naobroker_dcm::cycle::ChannelError;
use naobroker_framework::{CallError, ErrorKind};
use naobroker_robot::device::{DescriptionError, SaveError};
use naobroker_robot::preferences::{PreferenceError, PreferenceLimit};

use crate::parse::{CalibrationRequestError, PreferenceValueError, RequestError};
use crate::UnknownActuator;

/// A refused DCM call.
#[derive(Debug, thiserror::Error)]
pub enum DcmError {
    /// `set`, `setAlias` or `createAlias` as sent.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The cycle's queue is full, or the request could overflow a buffer.
    #[error(transparent)]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    UnknownActuator(#[from] UnknownActuator),
    #[error("unknown sensor {0:?}")]
    UnknownSensor(String),
    #[error("simulateSensor needs the sim backend")]
    NotSimulated,
    #[error("unknown special {0:?} (Version, Reset, Config, Chain, Diagnostic)")]
    UnknownSpecial(String),
    #[error("step needs the manual clock (naobroker --clock manual)")]
    NotManualClock,
    #[error(
        "step cannot run a cycle here: the robot clocks this DCM (backend = \"lola\": one cycle per LoLA \
         sensor map, every 12 ms); the manual clock is for the sim and serial backends"
    )]
    HardwareClock,
    #[error("the DCM cycle stopped")]
    CycleStopped,
    #[error("unknown preferences action {0:?} (Save, Load or Add)")]
    UnknownPreferencesAction(String),
    #[error("Add puts a key in one target: Chest, Head or Local")]
    AddToOneTarget,
    #[error("{0} is a value the DCM publishes every cycle, not a preference")]
    PublishedEveryCycle(String),
    #[error(transparent)]
    Preference(#[from] PreferenceError),
    #[error(transparent)]
    PreferenceValue(#[from] PreferenceValueError),
    /// A device's new gain or offset is beyond its bounds.
    #[error(transparent)]
    Conversion(#[from] PreferenceLimit),
    #[error(
        "Save writes the robot description file this DCM was started from, and it was started without \
         one: the broker runs the built-in NAO V6 description unless [dcm] robot = \"path/to/robot.toml\" \
         names a file (a program embedding the DCM names it with Dcm::with_preferences)"
    )]
    NoDescriptionFile,
    #[error(transparent)]
    Load(#[from] DescriptionError),
    #[error(transparent)]
    Save(#[from] SaveError),
    #[error(transparent)]
    CalibrationRequest(#[from] CalibrationRequestError),
    /// The joint's new offsets were refused (`source`).
    #[error("cannot calibrate {joint} to {reference} where it reads {reads}: {source}")]
    Calibration { joint: String, reference: f64, reads: f64, source: Box<DcmError> },
    /// The broker's own bounds on names and values.
    #[error(transparent)]
    Broker(#[from] CallError),
}

impl From<DcmError> for CallError {
    fn from(error: DcmError) -> CallError {
        let kind = match &error {
            DcmError::Broker(error) => return error.clone(),
            DcmError::UnknownActuator(_) | DcmError::UnknownSensor(_) | DcmError::UnknownSpecial(_) => {
                ErrorKind::NotFound
            }
            DcmError::Request(_)
            | DcmError::UnknownPreferencesAction(_)
            | DcmError::AddToOneTarget
            | DcmError::PublishedEveryCycle(_)
            | DcmError::Preference(_)
            | DcmError::PreferenceValue(_)
            | DcmError::Conversion(_)
            | DcmError::CalibrationRequest(_)
            | DcmError::Calibration { .. } => ErrorKind::BadArgument,
            DcmError::Channel(_)
            | DcmError::NotSimulated
            | DcmError::NotManualClock
            | DcmError::HardwareClock => ErrorKind::Refused,
            DcmError::CycleStopped | DcmError::NoDescriptionFile | DcmError::Load(_) | DcmError::Save(_) => {
                ErrorKind::Failed
            }
        };
        CallError::of(kind, error.to_string())
    }
}
