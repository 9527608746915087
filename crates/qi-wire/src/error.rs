//! Why the qi listener does not start (an endpoint it cannot use or may not bind), and why a
//! qi payload does not become a call or a value a qi payload.

use naobroker_framework::{CallError, Value};
use naobroker_qi::{ConvertError, DecodeError, EncodeError};
use thiserror::Error;

/// A `[qi] listen` endpoint (or `--qi-listen`) that is not bound.
#[derive(Debug, Error)]
pub enum QiListenError {
    #[error("[qi] listen {endpoint:?}: a qi endpoint is tcp://HOST:PORT")]
    BadEndpoint { endpoint: String },
    #[error(
        "refusing to listen for qi clients on {endpoint}: libqi's wire carries no authentication \
         or encryption here, so a qi listener stays on loopback; reach it from another machine \
         through an SSH tunnel (docs/qi.md)"
    )]
    NeedsAuthentication { endpoint: String },
    #[error("cannot listen for qi clients on {endpoint}: {source}")]
    Bind { endpoint: String, source: std::io::Error },
}

/// A qi payload that does not decode to a method's arguments, or a value that does not
/// encode to a qi type.
#[derive(Debug, Error)]
pub(crate) enum PayloadError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Encode(#[from] EncodeError),
    #[error(transparent)]
    Convert(#[from] ConvertError),
    #[error("arguments decoded to {0}, not a tuple")]
    NotATuple(Value),
}

/// Why the broker's call to a service a qi client hosts cannot be sent to it.
#[derive(Debug, Error)]
pub(crate) enum HostedCallError {
    #[error("a service of a qi client runs no task (post): call it")]
    Post,
    #[error("not served by this client")]
    NotServed,
    #[error("no such method")]
    NoSuchMethod,
    #[error(transparent)]
    Payload(#[from] PayloadError),
}

/// Why a qi client's answer to one of the wire's calls (a forwarded call, a MetaObject) is
/// not the value asked for.
#[derive(Debug, Error)]
pub(crate) enum AnswerError {
    /// The client answered `Error` with this message.
    #[error("{0}")]
    Failed(String),
    #[error("the call was cancelled")]
    Canceled,
    #[error(transparent)]
    Unreadable(#[from] DecodeError),
    #[error(transparent)]
    Unconverted(#[from] ConvertError),
}

/// A hosted service's answer that is no value is a failure of the method, whatever the
/// reason: the caller's arguments were taken.
impl From<AnswerError> for CallError {
    fn from(error: AnswerError) -> Self {
        CallError::new(error.to_string())
    }
}

/// A call the hosted service cannot take keeps its kind for the caller: a task refused, a
/// module or method not found, arguments that do not fit its types a bad argument.
impl From<HostedCallError> for CallError {
    fn from(error: HostedCallError) -> Self {
        let message = error.to_string();
        match error {
            HostedCallError::Post => CallError::refused(message),
            HostedCallError::NotServed | HostedCallError::NoSuchMethod => CallError::not_found(message),
            HostedCallError::Payload(_) => CallError::bad_argument(message),
        }
    }
}
