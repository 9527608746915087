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
}

pub(crate) type CodecResult<T> = Result<T, CodecError>;
