//! The error a call ends with, and the result every call answers.

use thiserror::Error;

/// The error a call ends with, as carried by the protocol's `Error` message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct CallError {
    pub message: String,
}

impl CallError {
    pub fn new(message: impl Into<String>) -> Self {
        CallError { message: message.into() }
    }
}

impl From<String> for CallError {
    fn from(message: String) -> Self {
        CallError { message }
    }
}

impl From<&str> for CallError {
    fn from(message: &str) -> Self {
        CallError { message: message.to_owned() }
    }
}

pub type CallResult = Result<naobroker_protocol::Value, CallError>;
