//! Why ALRobotPosture refuses a call.

use naobroker_framework::CallError;
use thiserror::Error;

/// A call ALRobotPosture refuses at once, before anything moves.
#[derive(Debug, Error, PartialEq)]
pub enum PostureError {
    #[error("unknown posture \"{name}\": one of {known}")]
    UnknownPosture { name: String, known: String },
    #[error("maxSpeedFraction: expected a number in (0, 1], got {0}")]
    Speed(f64),
    #[error("setMaxTryNumber: expected at least 1 try, got {0}")]
    MaxTries(i32),
}

/// Every refusal is of an argument: a posture's name, a speed, a number of tries.
impl From<PostureError> for CallError {
    fn from(error: PostureError) -> CallError {
        CallError::bad_argument(error.to_string())
    }
}
