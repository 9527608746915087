//! libqi's binary protocol (NAOqi 2.x "qimessaging") as a pure codec: no I/O, no actors.
//!
//! - [`Header`] and [`Message`]: the 28-byte little-endian header and a streaming
//!   [`decode_message`] over a byte buffer that says [`Decoded::Incomplete`] until a whole
//!   message arrived and refuses a bad magic or a payload over the caller's maximum from the
//!   header alone, before anything is allocated.
//! - [`Type`]: libqi's type signatures (`s`, `I`, `[m]`, `{sm}`, `(sIs)<Name,a,b,c>`, ...),
//!   parsed into a tree and printed back to the same text.
//! - [`QiValue`]: a value encoded and decoded according to a [`Type`], the dynamic `m`
//!   (signature, then value) included; [`to_value`] and [`from_value`] map it to and from
//!   naobroker's [`Value`] the way NAOqi's ALValue does (`docs/qi.md`, "Values").
//! - The structures the ServiceDirectory and objects exchange: [`CapabilityMap`],
//!   [`ServiceInfo`], [`MetaObject`] (with [`MetaMethod`], [`MetaSignal`], [`MetaProperty`])
//!   and [`ObjectRef`] (`o`).
//!
//! Every input is taken as hostile: each length and count read from the wire is checked
//! against the bytes that remain before anything is allocated, and nesting and the number of
//! values per decode are bounded by [`Limits`].
#![deny(unsafe_code, unreachable_pub)]

mod call;
mod capabilities;
mod convert;
mod error;
mod header;
mod message;
mod meta;
mod object;
mod reader;
mod service_info;
mod signature;
mod value;

pub use call::{decode_arguments, Arguments};
pub use capabilities::{AuthState, CapabilityMap};
pub use convert::{decode_value, dynamic_of, encode_value, from_value, to_value};
pub use error::{ConvertError, DecodeError, EncodeError, FrameError, SignatureError};
pub use header::{Address, Flags, Header, MessageType, HEADER_SIZE, MAGIC};
pub use message::{decode_message, error_message, error_payload, Decoded, Message};
pub use meta::{MetaMethod, MetaMethodParameter, MetaObject, MetaProperty, MetaSignal};
pub use naobroker_protocol::Value;
pub use object::{ObjectRef, OBJECT_UID_BYTES};
pub use reader::Reader;
pub use service_info::ServiceInfo;
pub use signature::{TupleType, Type};
pub use value::{QiValue, Typed};

/// Service 0: the server itself, which only answers `authenticate`.
pub const SERVICE_SERVER: u32 = 0;
/// Service 1: the ServiceDirectory.
pub const SERVICE_DIRECTORY: u32 = 1;
/// Object 0, used with service 0.
pub const OBJECT_NONE: u32 = 0;
/// Object 1: the main object of every service.
pub const OBJECT_MAIN: u32 = 1;
/// Action of `authenticate` on service 0.
pub const ACTION_AUTHENTICATE: u32 = 8;

/// Bounds on what one decode (or encode) may build, so that no input can exhaust memory or
/// the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nesting of lists, maps, tuples, optionals and dynamic values inside one another, and
    /// of brackets inside one signature. A naobroker array holds its elements as dynamic
    /// values (`[m]`), so it takes two levels: the default lets through every value the
    /// MessagePack wire accepts (`max_value_depth` arrays deep) inside a call's arguments.
    pub max_depth: usize,
    /// Values and signature elements one decode may build in all (a list of a million empty
    /// tuples takes no bytes on the wire but a million values in memory).
    pub max_values: usize,
    /// Longest signature text accepted, inside a dynamic value or anywhere else.
    pub max_signature_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 2 * naobroker_protocol::DEFAULT_MAX_VALUE_DEPTH + 4,
            max_values: 1 << 20,
            max_signature_bytes: 64 * 1024,
        }
    }
}

/// What a decode or encode needs beyond the bytes: the limits, and whether the peers share
/// the `ObjectPtrUID` capability (object references then carry a 20-byte uid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    pub limits: Limits,
    pub object_uid: bool,
}
