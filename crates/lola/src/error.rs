//! What can go wrong encoding or decoding a LoLA map.

use std::fmt;

/// The kind of a MessagePack value, to say what was found where something else was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Nil,
    Bool,
    Integer,
    Float,
    Text,
    Binary,
    Array,
    Map,
    Extension,
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ValueKind::Nil => "nil",
            ValueKind::Bool => "a bool",
            ValueKind::Integer => "an integer",
            ValueKind::Float => "a float",
            ValueKind::Text => "a text",
            ValueKind::Binary => "binary data",
            ValueKind::Array => "an array",
            ValueKind::Map => "a map",
            ValueKind::Extension => "an extension",
        };
        f.write_str(name)
    }
}

/// A sensor map that cannot take a real robot's exact 896 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// Ids have 20 bytes and versions 5 on a real robot, and the 896 bytes count on it.
    #[error("RobotConfig {field} has {found} bytes, a real robot's has {expected}")]
    RobotConfigLength { field: &'static str, expected: usize, found: usize },
    /// Status values are positive fixints (0..=127), one byte each.
    #[error("Status[{index}] = {value} is not within 0..=127 (a one-byte positive fixint)")]
    StatusOutOfRange { index: usize, value: i32 },
}

/// Why bytes are not (yet) a LoLA map. Every error but [`DecodeError::Incomplete`] means
/// the message is malformed; after any error the map decoded into may hold part of it.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end before the map does: read more and decode again from its start.
    #[error("the map is incomplete: more bytes are needed")]
    Incomplete,
    #[error("the map does not end within {max} bytes")]
    TooLong { max: usize },
    #[error("the message is {found}, not a map")]
    NotAMap { found: ValueKind },
    #[error("the map has {entries} entries, at most {max} are accepted")]
    TooManyEntries { entries: u32, max: u32 },
    #[error("a key is {found}, not a text")]
    KeyNotText { found: ValueKind },
    #[error("a key of {len} bytes is longer than {max}")]
    KeyTooLong { len: u32, max: u32 },
    #[error("key {key} appears twice")]
    DuplicateKey { key: &'static str },
    #[error("{key} holds {found} where {expected} is due")]
    WrongType { key: &'static str, expected: &'static str, found: ValueKind },
    #[error("{key} has {found} values, not {expected}")]
    WrongLength { key: &'static str, expected: usize, found: u32 },
    #[error("{key} holds {value}, out of its range")]
    OutOfRange { key: &'static str, value: f64 },
    #[error("{key} holds a text of {len} bytes, at most {max} are kept")]
    TextTooLong { key: &'static str, len: u32, max: usize },
    #[error("{key} holds a text that is not UTF-8")]
    NotUtf8 { key: &'static str },
    /// Unknown keys are skipped when their value is a scalar or a flat array of scalars.
    #[error("an unknown key's value nests {found}: only scalars and flat arrays are skipped")]
    Nested { found: ValueKind },
    #[error("an unknown key holds {found} of {len} elements or bytes, at most {max} are skipped")]
    Oversized { found: ValueKind, len: u32, max: u32 },
    #[error("the byte 0xc1 appears where a value starts: MessagePack never uses it")]
    InvalidMarker,
}
