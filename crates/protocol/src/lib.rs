//! The naobroker wire protocol: one MessagePack array per ZeroMQ frame.
//!
//! `docs/protocol.md` describes the bytes; this crate is the reference codec.
#![deny(unsafe_code, unreachable_pub)]

mod envelope;
mod error_kind;
mod excerpt;
mod types;

pub use envelope::{
    CallFrame, CallbackSubscription, DecodeLimits, Decoded, Envelope, MethodInfo, ProtocolError, Role,
};
pub use error_kind::ErrorKind;
pub use excerpt::{cut, excerpt, value_excerpt, EXCERPT_BYTES};
pub use rmpv::Value;
pub use types::{MethodType, ValueType};

/// Protocol version carried in every `Hello` and `Welcome`: 2 adds the kind of an `Error`.
pub const PROTOCOL_VERSION: u32 = 2;

/// The oldest version a broker still speaks: to a peer that said it in `Hello` (or said
/// nothing), an `Error` goes without its kind, the only form such a peer reads.
pub const OLDEST_PROTOCOL_VERSION: u32 = 1;

/// Default largest frame the broker accepts (16 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Default deepest nesting of arrays and maps inside one value.
pub const DEFAULT_MAX_VALUE_DEPTH: usize = 32;

/// Interval at which both sides send `Heartbeat` when otherwise idle.
pub const HEARTBEAT_INTERVAL_MS: u64 = 1000;

/// Silence after which a peer is considered dead.
pub const HEARTBEAT_TIMEOUT_MS: u64 = 2000;

/// Events the broker sends to one client before it waits for an `Ack`.
pub const EVENT_WINDOW: u32 = 1024;

/// Convert any serde value into a dynamic [`Value`].
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Value {
    rmpv::ext::to_value(value).unwrap_or(Value::Nil)
}

/// Convert a dynamic [`Value`] into a typed one.
pub fn from_value<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, rmpv::ext::Error> {
    rmpv::ext::from_value(value)
}

/// A short human description of a value's type, used in error messages.
pub fn type_name_of(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "bool",
        Value::Integer(_) => "integer",
        Value::F32(_) | Value::F64(_) => "float",
        Value::String(_) => "string",
        Value::Binary(_) => "binary",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Ext(..) => "ext",
    }
}
