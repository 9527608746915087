//! The SDK's errors: the one a call ends with (and the result every call answers), arguments
//! that do not fit a method, a broker that cannot listen or host a module, a connection to
//! the broker that cannot be opened.

use naobroker_protocol::{Envelope, ErrorKind, ProtocolError};
use thiserror::Error;
use zeromq::ZmqError;

/// The error a call ends with, as carried by the protocol's `Error` message: its kind, which
/// crosses every wire that can carry it, and a message naming the problem. The kind is the
/// deepest failing call's: a handler that passes on a nested call's error with `?` answers
/// that call's kind (docs/protocol.md); one that wants its own maps the error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct CallError {
    pub kind: ErrorKind,
    pub message: String,
}

impl CallError {
    /// A failure of kind `Failed`: the method could not do its work.
    pub fn new(message: impl Into<String>) -> Self {
        Self::of(ErrorKind::Failed, message)
    }

    pub fn of(kind: ErrorKind, message: impl Into<String>) -> Self {
        CallError { kind, message: message.into() }
    }

    /// An argument is missing, of the wrong type or out of range.
    pub fn bad_argument(message: impl Into<String>) -> Self {
        Self::of(ErrorKind::BadArgument, message)
    }

    /// The caller may not do this, or a limit forbids it now.
    pub fn refused(message: impl Into<String>) -> Self {
        Self::of(ErrorKind::Refused, message)
    }

    /// No module, method, key, event or task of that name.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::of(ErrorKind::NotFound, message)
    }

    /// The same error, its message led by the method it comes from: `module.method: ...`.
    pub fn in_method(self, module: &str, method: &str) -> Self {
        CallError { kind: self.kind, message: format!("{module}.{method}: {}", self.message) }
    }
}

impl From<String> for CallError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for CallError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

pub type CallResult = Result<naobroker_protocol::Value, CallError>;

/// A call's argument array that does not fit the method's parameters; positions count from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgsError {
    #[error("takes no arguments, got {provided}")]
    NoneTaken { provided: usize },
    #[error("takes {taken} arguments, got {provided}")]
    TooMany { taken: usize, provided: usize },
    #[error("missing argument {position} ({expected})")]
    Missing { position: usize, expected: String },
    #[error("argument {position} must be {expected}, got {got}")]
    WrongType { position: usize, expected: String, got: &'static str },
}

impl From<ArgsError> for CallError {
    fn from(error: ArgsError) -> Self {
        CallError::bad_argument(error.to_string())
    }
}

/// An endpoint the broker does not bind ([`crate::Broker::start`]).
#[derive(Debug, Error)]
pub enum ListenError {
    #[error("cannot listen on {endpoint}: {source}")]
    Bind { endpoint: String, source: ZmqError },
    #[error(
        "refusing to listen on {endpoint}: a listener beyond loopback needs authentication: \
         put it in [broker.curve] listen (see docs/security.md)"
    )]
    NeedsAuthentication { endpoint: String },
    #[error("cannot listen on {endpoint}: another process is listening on {path}")]
    SocketInUse { endpoint: String, path: String },
    #[error("cannot listen on {endpoint}: cannot remove the old socket: {source}")]
    StaleSocket { endpoint: String, source: std::io::Error },
    #[error(
        "cannot listen on {endpoint}: {path} exists and is not a socket; remove it or choose \
         another path"
    )]
    NotASocket { endpoint: String, path: String },
    #[error("[broker.curve] lists no client keys: nobody could connect")]
    NoCurveClients,
}

/// A module or blackboard the broker cannot host: the place is taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegistrationError {
    #[error("a module named {0} is already registered")]
    ModuleNameTaken(String),
    #[error("a blackboard is already registered")]
    BlackboardTaken,
}

/// A broker that does not start ([`crate::Broker::start_with_directory`]).
#[derive(Debug, Error)]
pub enum StartError {
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error(transparent)]
    Directory(#[from] RegistrationError),
}

/// Why a client's connection to the broker could not be opened.
#[derive(Debug, Error)]
pub(crate) enum ConnectError {
    #[error("connection timed out")]
    TimedOut,
    #[error(transparent)]
    Socket(#[from] ZmqError),
    #[error("no welcome from the broker")]
    NoWelcome,
    #[error(transparent)]
    Unreadable(#[from] ProtocolError),
    /// The broker answered the hello with an error.
    #[error("{0}")]
    Refused(String),
    #[error("expected Welcome, got {0:?}")]
    Unexpected(Box<Envelope>),
}
