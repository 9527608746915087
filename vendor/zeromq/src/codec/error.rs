use thiserror::Error;

/// Represents an error when encoding/decoding raw byte buffers and frames
#[non_exhaustive]
#[derive(Error, Debug)]
pub enum CodecError {
    #[error("{0}")]
    Command(&'static str),
    #[error("{0}")]
    Greeting(&'static str),
    #[error("{0}")]
    Mechanism(&'static str),
    #[error("{0}")]
    Decode(&'static str),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(&'static str),
    /// The peer announced a frame that would make its message larger than
    /// `SocketOptions::max_message_size`; `announced` is the message size it would reach.
    #[error("peer announced a message of {announced} bytes, over the {limit}-byte limit")]
    MessageTooLarge { announced: u64, limit: u64 },
    /// Holding `wanted` bytes for this connection's unfinished message would take every
    /// connection's total past `SocketOptions::unfinished_budget`'s `limit`.
    #[error("an unfinished message would hold {wanted} bytes, past the {limit}-byte total of unfinished messages")]
    UnfinishedOverBudget { wanted: usize, limit: usize },
    /// In `timeout` the connection neither finished a message nor received
    /// `STALL_MIN_PROGRESS` bytes of it (`SocketOptions::stall_timeout`).
    #[error("an unfinished message received {received} bytes in {timeout:?}")]
    Stalled {
        timeout: std::time::Duration,
        received: usize,
    },
    /// One message stayed unfinished for `STALL_MAX_PERIODS` periods of `timeout` in a row
    /// (`SocketOptions::stall_timeout`), however much of it arrived.
    #[error("a message stayed unfinished for {periods} periods of {timeout:?}")]
    TooSlow {
        timeout: std::time::Duration,
        periods: u32,
    },
}

pub(crate) type CodecResult<T> = Result<T, CodecError>;
