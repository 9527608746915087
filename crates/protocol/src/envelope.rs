//! The envelope: every message kind that crosses a naobroker socket, its kind numbers and
//! its encoding; `envelope/decode.rs` reads frames back, checking every limit.

use rmpv::Value;
use thiserror::Error;

use crate::{ErrorKind, MethodType};

pub use direct::{CallFrame, Decoded};

mod decode;
mod direct;
#[cfg(test)]
mod tests;

/// What a connection is for, sent in `Hello` (see `docs/protocol.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// Calls, registrations and subscriptions.
    #[default]
    Main,
    /// Only heartbeats, from a thread that never runs user code, on behalf of the main
    /// connection of the same session.
    Liveness,
}

/// How much a frame may hold before it is even decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    pub max_frame_bytes: usize,
    /// Nesting of arrays and maps inside one value (an argument, a reply, an event value).
    pub max_value_depth: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_frame_bytes: crate::DEFAULT_MAX_FRAME_BYTES,
            max_value_depth: crate::DEFAULT_MAX_VALUE_DEPTH,
        }
    }
}

/// Description of one method of a module, as sent in `Register` and `getMethodHelp`.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodInfo {
    pub name: String,
    /// Human signature, e.g. `(String) -> Value`: for a Rust method its `types` in words,
    /// for a Python one what `inspect.signature` prints.
    pub signature: String,
    pub help: String,
    /// The parameters' and result's types, from a Rust method's own types; `None` for a
    /// method whose types are not known (a Python method's, a peer's from before types).
    pub types: Option<MethodType>,
}

/// A NAOqi callback on an ALMemory event, as [`Envelope::SubscribeCallback`] carries it: the
/// broker calls `module.method(event, value, message)` on each raise of `event`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackSubscription {
    pub event: String,
    /// A module the subscribing client serves.
    pub module: String,
    pub method: String,
    /// `Some(message)` subscribes to a micro event (NAOqi's `subscribeToMicroEvent`, whose
    /// callbacks get `message` as their third argument), `None` to an event
    /// (`subscribeToEvent`).
    pub micro_message: Option<Value>,
}

/// Every message that crosses a naobroker socket.
///
/// On the wire each is a MessagePack array whose first element is the kind number
/// (see `docs/protocol.md`).
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// Kind 0, client → broker: `[0, version, client_name]` or
    /// `[0, version, client_name, session, role]`; an empty `session` is the short form.
    Hello { version: u32, client: String, session: Vec<u8>, role: Role },
    /// Kind 1, broker → client: `[1, version, heartbeat_ms]`.
    Welcome { version: u32, heartbeat_ms: u64 },
    /// Kind 2: `[2, id, module, method, args]`.
    Call { id: u64, module: String, method: String, args: Vec<Value> },
    /// Kind 3: `[3, id, module, method, args]`, answered with a task id.
    Post { id: u64, module: String, method: String, args: Vec<Value> },
    /// Kind 4: `[4, id, value]`.
    Reply { id: u64, value: Value },
    /// Kind 5: `[5, id, message]` or `[5, id, message, kind]`; the short form is kind
    /// `Failed` (the only form of protocol 1 before kinds). Id 0 answers a frame that could
    /// not be read.
    Error { id: u64, message: String, kind: ErrorKind },
    /// Kind 6, broker → client: `[6, name, value]`, or `[6, name, value, lost]` when the
    /// broker dropped `lost` events of this name for this client since the last one it sent.
    Event { name: String, value: Value, lost: u64 },
    /// Kind 7, client → broker: `[7, id, module, [[name, signature, help], ...]]`, each
    /// method with its types as a fourth element when it has them.
    Register { id: u64, module: String, methods: Vec<MethodInfo> },
    /// Kind 8, client → broker: `[8, id, module]`.
    Unregister { id: u64, module: String },
    /// Kind 9, client → broker: `[9, id, event]`.
    Subscribe { id: u64, event: String },
    /// Kind 10, client → broker: `[10, id, event]`.
    Unsubscribe { id: u64, event: String },
    /// Kind 11, both ways: `[11]`.
    Heartbeat,
    /// Kind 12, client → broker: `[12, count]`, events consumed since the last `Ack`.
    Ack { count: u32 },
    /// Kind 13, broker → client: `[13, module, method, [event, value, message], lost]`, a
    /// NAOqi-style ALMemory callback for a module the client serves. One-way: the client runs
    /// `module.method(event, value, message)` and counts it toward its next `Ack`.
    Callback { module: String, method: String, event: String, value: Value, message: Value, lost: u64 },
    /// Kind 14, client → broker: `[14, id]`, the client is leaving: the broker answers
    /// `Reply true`, then forgets the session (its connections, modules and subscriptions)
    /// at once instead of waiting out the client timeout.
    Goodbye { id: u64 },
    /// Kind 15, client → broker: `[15, id, event, module, method]` (NAOqi's
    /// `ALMemory.subscribeToEvent`) or `[15, id, event, module, method, message]`
    /// (`subscribeToMicroEvent`): a callback for a module the client serves, answered as
    /// ALMemory's method answers. A message of its own, so that a client knows what to
    /// subscribe again after a reconnect without reading method names.
    SubscribeCallback { id: u64, subscription: CallbackSubscription },
    /// Kind 16, client → broker: `[16, id, event, module]`, NAOqi's `unsubscribeToEvent`.
    UnsubscribeCallback { id: u64, event: String, module: String },
}

#[derive(Debug, Error, PartialEq)]
pub enum ProtocolError {
    #[error("frame is not valid MessagePack: {0}")]
    Malformed(String),
    #[error("frame has {0} trailing bytes after the MessagePack value")]
    TrailingBytes(usize),
    #[error("frame is not an envelope: {0}")]
    NotAnEnvelope(String),
    #[error("frame of {size} bytes exceeds the {limit}-byte limit (max_frame_bytes)")]
    TooLarge { size: usize, limit: usize },
    #[error("value nested deeper than {limit} levels (max_value_depth)")]
    TooDeep { limit: usize },
}

impl Envelope {
    pub const HELLO: u64 = 0;
    pub const WELCOME: u64 = 1;
    pub const CALL: u64 = 2;
    pub const POST: u64 = 3;
    pub const REPLY: u64 = 4;
    pub const ERROR: u64 = 5;
    pub const EVENT: u64 = 6;
    pub const REGISTER: u64 = 7;
    pub const UNREGISTER: u64 = 8;
    pub const SUBSCRIBE: u64 = 9;
    pub const UNSUBSCRIBE: u64 = 10;
    pub const HEARTBEAT: u64 = 11;
    pub const ACK: u64 = 12;
    pub const CALLBACK: u64 = 13;
    pub const GOODBYE: u64 = 14;
    pub const SUBSCRIBE_CALLBACK: u64 = 15;
    pub const UNSUBSCRIBE_CALLBACK: u64 = 16;

    /// A short form of `Hello`, for clients without a liveness connection.
    pub fn hello(client: &str) -> Envelope {
        Envelope::Hello {
            version: crate::PROTOCOL_VERSION,
            client: client.to_owned(),
            session: Vec::new(),
            role: Role::Main,
        }
    }

    pub fn to_value(&self) -> Value {
        let s = |x: &str| Value::from(x);
        let items: Vec<Value> = match self {
            Envelope::Hello { version, client, session, role } => {
                let mut items = vec![Self::HELLO.into(), (*version).into(), s(client)];
                if !session.is_empty() {
                    items.push(Value::Binary(session.clone()));
                    items.push(Value::from(matches!(role, Role::Liveness) as u8));
                }
                items
            }
            Envelope::Welcome { version, heartbeat_ms } => {
                vec![Self::WELCOME.into(), (*version).into(), (*heartbeat_ms).into()]
            }
            Envelope::Call { id, module, method, args } => {
                vec![Self::CALL.into(), (*id).into(), s(module), s(method), Value::Array(args.clone())]
            }
            Envelope::Post { id, module, method, args } => {
                vec![Self::POST.into(), (*id).into(), s(module), s(method), Value::Array(args.clone())]
            }
            Envelope::Reply { id, value } => vec![Self::REPLY.into(), (*id).into(), value.clone()],
            Envelope::Error { id, message, kind } => {
                let mut items = vec![Self::ERROR.into(), (*id).into(), s(message)];
                // A failure goes in the short form, which peers from before kinds read too.
                if kind.code() != ErrorKind::Failed.code() {
                    items.push(kind.code().into());
                }
                items
            }
            Envelope::Event { name, value, lost } => {
                let mut items = vec![Self::EVENT.into(), s(name), value.clone()];
                if *lost > 0 {
                    items.push((*lost).into());
                }
                items
            }
            Envelope::Register { id, module, methods } => vec![
                Self::REGISTER.into(),
                (*id).into(),
                s(module),
                Value::Array(
                    methods
                        .iter()
                        .map(|m| {
                            let mut items = vec![s(&m.name), s(&m.signature), s(&m.help)];
                            items.extend(m.types.as_ref().map(MethodType::to_value));
                            Value::Array(items)
                        })
                        .collect(),
                ),
            ],
            Envelope::Unregister { id, module } => {
                vec![Self::UNREGISTER.into(), (*id).into(), s(module)]
            }
            Envelope::Subscribe { id, event } => vec![Self::SUBSCRIBE.into(), (*id).into(), s(event)],
            Envelope::Unsubscribe { id, event } => {
                vec![Self::UNSUBSCRIBE.into(), (*id).into(), s(event)]
            }
            Envelope::Heartbeat => vec![Self::HEARTBEAT.into()],
            Envelope::Ack { count } => vec![Self::ACK.into(), (*count).into()],
            Envelope::Goodbye { id } => vec![Self::GOODBYE.into(), (*id).into()],
            Envelope::SubscribeCallback { id, subscription } => {
                let CallbackSubscription { event, module, method, micro_message } = subscription;
                let mut items =
                    vec![Self::SUBSCRIBE_CALLBACK.into(), (*id).into(), s(event), s(module), s(method)];
                items.extend(micro_message.clone());
                items
            }
            Envelope::UnsubscribeCallback { id, event, module } => {
                vec![Self::UNSUBSCRIBE_CALLBACK.into(), (*id).into(), s(event), s(module)]
            }
            Envelope::Callback { module, method, event, value, message, lost } => vec![
                Self::CALLBACK.into(),
                s(module),
                s(method),
                Value::Array(vec![s(event), value.clone(), message.clone()]),
                (*lost).into(),
            ],
        };
        Value::Array(items)
    }

    /// Encode into a fresh buffer.
    pub fn encode(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(64);
        self.encode_into(&mut buf);
        buf
    }

    /// Encode, appending to `buf` (reuse a buffer to avoid allocating per message). The
    /// messages of every call and event (Call, Post, Reply, Event, Callback) are written field
    /// by field from their parts; the others through [`Self::to_value`], which copies them
    /// into a value tree first.
    pub fn encode_into(&self, buf: &mut Vec<u8>) {
        match self {
            Envelope::Call { id, module, method, args } => {
                Self::encode_call_into(buf, *id, module, method, args, false)
            }
            Envelope::Post { id, module, method, args } => {
                Self::encode_call_into(buf, *id, module, method, args, true)
            }
            Envelope::Reply { id, value } => Self::encode_reply_into(buf, *id, value),
            Envelope::Event { name, value, lost } => Self::encode_event_into(buf, name, value, *lost),
            Envelope::Callback { module, method, event, value, message, lost } => {
                Self::encode_callback_into(buf, module, method, event, value, message, *lost)
            }
            other => write::value(buf, &other.to_value()),
        }
    }

    /// `Call` (or, `post`, `Post`) `{ id, module, method, args }`'s bytes, appended to `buf`,
    /// from borrowed parts.
    pub fn encode_call_into(
        buf: &mut Vec<u8>,
        id: u64,
        module: &str,
        method: &str,
        args: &[Value],
        post: bool,
    ) {
        write::call(buf, if post { Self::POST } else { Self::CALL }, id, module, method, args)
    }

    /// `Callback { module, method, event, value, message, lost }`'s bytes, appended to `buf`,
    /// from borrowed parts: what a broker sends a callback's module without copying the event.
    pub fn encode_callback_into(
        buf: &mut Vec<u8>,
        module: &str,
        method: &str,
        event: &str,
        value: &Value,
        message: &Value,
        lost: u64,
    ) {
        write::array_len(buf, 5);
        write::uint(buf, Self::CALLBACK);
        write::string(buf, module);
        write::string(buf, method);
        write::array_len(buf, 3);
        write::string(buf, event);
        write::value(buf, value);
        write::value(buf, message);
        write::uint(buf, lost);
    }

    /// `Reply { id, value }`'s bytes, appended to `buf`, from a borrowed value.
    pub fn encode_reply_into(buf: &mut Vec<u8>, id: u64, value: &Value) {
        write::array_len(buf, 3);
        write::uint(buf, Self::REPLY);
        write::uint(buf, id);
        write::value(buf, value);
    }

    /// `Event { name, value, lost }`'s bytes, appended to `buf`, from borrowed parts: what a
    /// broker sends each subscriber without copying the event first.
    pub fn encode_event_into(buf: &mut Vec<u8>, name: &str, value: &Value, lost: u64) {
        write::array_len(buf, if lost > 0 { 4 } else { 3 });
        write::uint(buf, Self::EVENT);
        write::string(buf, name);
        write::value(buf, value);
        if lost > 0 {
            write::uint(buf, lost);
        }
    }
}

/// MessagePack pieces written straight into a buffer, as rmpv writes them.
mod write {
    use rmpv::Value;

    pub(super) fn value(buf: &mut Vec<u8>, value: &Value) {
        rmpv::encode::write_value(buf, value).expect("writing to a Vec cannot fail");
    }

    pub(super) fn uint(buf: &mut Vec<u8>, number: u64) {
        value(buf, &Value::from(number));
    }

    /// An array header for at most 15 items (fixarray): every envelope's.
    pub(super) fn array_len(buf: &mut Vec<u8>, len: u8) {
        debug_assert!(len < 16);
        buf.push(0x90 | len);
    }

    pub(super) fn string(buf: &mut Vec<u8>, text: &str) {
        let len = text.len();
        match len {
            0..=31 => buf.push(0xa0 | len as u8),
            32..=0xff => buf.extend_from_slice(&[0xd9, len as u8]),
            0x100..=0xffff => {
                buf.push(0xda);
                buf.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                buf.push(0xdb);
                buf.extend_from_slice(&(len as u32).to_be_bytes());
            }
        }
        buf.extend_from_slice(text.as_bytes());
    }

    /// `[kind, id, module, method, args]`.
    pub(super) fn call(buf: &mut Vec<u8>, kind: u64, id: u64, module: &str, method: &str, args: &[Value]) {
        array_len(buf, 5);
        uint(buf, kind);
        uint(buf, id);
        string(buf, module);
        string(buf, method);
        let len = args.len();
        match len {
            0..=15 => buf.push(0x90 | len as u8),
            16..=0xffff => {
                buf.push(0xdc);
                buf.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                buf.push(0xdd);
                buf.extend_from_slice(&(len as u32).to_be_bytes());
            }
        }
        for arg in args {
            value(buf, arg);
        }
    }
}
