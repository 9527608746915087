//! What kind of failure an `Error` reports: the few kinds NAOqi's own exceptions tell apart,
//! so that a caller can react to a bad argument differently from a module that failed.

/// The kind an `Error` carries as its optional fourth field (`docs/protocol.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ErrorKind {
    /// The method ran, or could not, for a reason of its own (kind 0, and every error of a
    /// peer that sends no kind).
    #[default]
    Failed,
    /// An argument is missing, of the wrong type or out of range (kind 1).
    BadArgument,
    /// The caller may not do this, or a limit forbids it now (kind 2).
    Refused,
    /// No module, method, key, event or task of that name (kind 3).
    NotFound,
    /// The caller's own time limit passed before the answer came. Decided by the caller,
    /// never by a peer: a call that passes it on sends it as a failure (kind 0).
    TimedOut,
    /// The connection to the broker was not there, or dropped, with the call under way.
    /// Decided by the caller, and sent on as a failure (kind 0), like [`ErrorKind::TimedOut`].
    ConnectionLost,
}

impl ErrorKind {
    /// The number the kind has on the wire; the caller's own kinds are failures there.
    pub fn code(self) -> u64 {
        match self {
            ErrorKind::Failed | ErrorKind::TimedOut | ErrorKind::ConnectionLost => 0,
            ErrorKind::BadArgument => 1,
            ErrorKind::Refused => 2,
            ErrorKind::NotFound => 3,
        }
    }

    /// The kind of a wire number; a number this version does not know (a newer peer's kind)
    /// is `Failed`, which every error also is.
    pub fn from_code(code: u64) -> ErrorKind {
        match code {
            1 => ErrorKind::BadArgument,
            2 => ErrorKind::Refused,
            3 => ErrorKind::NotFound,
            _ => ErrorKind::Failed,
        }
    }

    /// The kind in words, for logs and text-only wires.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Failed => "failed",
            ErrorKind::BadArgument => "bad argument",
            ErrorKind::Refused => "refused",
            ErrorKind::NotFound => "not found",
            ErrorKind::TimedOut => "timed out",
            ErrorKind::ConnectionLost => "connection lost",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}
