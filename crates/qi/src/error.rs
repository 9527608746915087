//! The codec's errors: a bad header, a bad signature, bytes that do not decode, values that
//! do not encode, and values with no counterpart on the other side of the mapping.

use thiserror::Error;

/// A message header that cannot start a message: the stream cannot be trusted past it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("bad magic {0:02x?}, expected [42, de, ad, 42]")]
    BadMagic([u8; 4]),
    #[error("unsupported message version {0} (only 0 exists)")]
    UnsupportedVersion(u16),
    #[error("unknown message type {0}")]
    UnknownType(u8),
    #[error("payload of {size} bytes exceeds the {limit}-byte limit")]
    TooLarge { size: u32, limit: u32 },
}

/// A signature text that is not a libqi type signature.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SignatureError {
    #[error("empty signature")]
    Empty,
    #[error("signature of {len} bytes exceeds the {limit}-byte limit")]
    TooLong { len: usize, limit: usize },
    #[error("signature nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error("signature has more than {limit} elements")]
    TooManyElements { limit: usize },
    #[error("unexpected {found:?} at byte {at} of the signature")]
    Unexpected { at: usize, found: char },
    #[error("signature ends inside an element")]
    UnexpectedEnd,
    #[error("signature has bytes after its type, from byte {at}")]
    Trailing { at: usize },
}

/// Bytes that do not hold a value of the expected type.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("truncated: {needed} bytes needed at offset {at}, {available} left")]
    Truncated { at: usize, needed: u64, available: usize },
    #[error("{count} elements announced at offset {at} cannot fit in the {available} bytes left")]
    CountTooLarge { at: usize, count: u32, available: usize },
    #[error("value nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error("more than {limit} values in one message")]
    TooManyValues { limit: usize },
    #[error("bad signature in a dynamic value: {0}")]
    Signature(#[from] SignatureError),
    #[error("byte {value} at offset {at} is not a bool (0 or 1)")]
    InvalidBool { at: usize, value: u8 },
    #[error("a {0} is not valid UTF-8")]
    NotUtf8(&'static str),
    #[error("type {0} cannot be decoded")]
    NotDecodable(String),
    #[error("{0} bytes left after the value")]
    Trailing(usize),
    #[error("expected {expected}, got a value of type {found}")]
    Unexpected { expected: &'static str, found: String },
}

/// A value that does not fit the type it is to be encoded as.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    #[error("cannot encode {found} as {expected}")]
    Mismatch { expected: String, found: &'static str },
    #[error("tuple of {found} members for a signature of {expected}")]
    Arity { expected: usize, found: usize },
    #[error("type {0} cannot be encoded")]
    NotEncodable(String),
    #[error("{what} of {len} bytes or elements exceeds the wire's 32-bit length")]
    TooLong { what: &'static str, len: usize },
    #[error("value nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error("object reference without the 20-byte uid the peer expects")]
    MissingObjectUid,
}

/// A value with no counterpart on the other side of the qi ↔ naobroker mapping, or (from
/// [`crate::encode_value`] and [`crate::decode_value`]) bytes that do not encode or decode.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConvertError {
    #[error("a qi {0} has no naobroker value")]
    NoValue(&'static str),
    #[error("a naobroker {0} has no qi value")]
    NoQiValue(&'static str),
    #[error("{value} does not fit in {ty}")]
    OutOfRange { value: String, ty: String },
    #[error("expected {expected}, got {found}")]
    Mismatch { expected: String, found: &'static str },
    #[error("a list of {found} elements for a tuple of {expected}")]
    Arity { expected: usize, found: usize },
    #[error("value nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error(transparent)]
    Encode(#[from] EncodeError),
    #[error(transparent)]
    Decode(#[from] DecodeError),
}
