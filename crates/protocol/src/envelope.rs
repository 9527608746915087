//! The envelope: every message kind that crosses a naobroker socket, and its codec.

use rmpv::Value;
use thiserror::Error;

use crate::excerpt::value_excerpt;

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
    /// Human signature, e.g. `(key: String) -> Value`.
    pub signature: String,
    pub help: String,
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
    /// Kind 5: `[5, id, message]`. Id 0 answers a frame that could not be read.
    Error { id: u64, message: String },
    /// Kind 6, broker → client: `[6, name, value]`, or `[6, name, value, lost]` when the
    /// broker dropped `lost` events of this name for this client since the last one it sent.
    Event { name: String, value: Value, lost: u64 },
    /// Kind 7, client → broker: `[7, id, module, [[name, signature, help], ...]]`.
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
            Envelope::Error { id, message } => vec![Self::ERROR.into(), (*id).into(), s(message)],
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
                        .map(|m| Value::Array(vec![s(&m.name), s(&m.signature), s(&m.help)]))
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

    /// Encode, appending to `buf` (reuse a buffer to avoid allocating per message).
    pub fn encode_into(&self, buf: &mut Vec<u8>) {
        rmpv::encode::write_value(buf, &self.to_value()).expect("writing to a Vec cannot fail");
    }

    /// Decode one frame, checking its size against `max_frame_bytes` first, with the default
    /// nesting limit.
    pub fn decode(frame: &[u8], max_frame_bytes: usize) -> Result<Envelope, ProtocolError> {
        Self::decode_limited(frame, &DecodeLimits { max_frame_bytes, ..DecodeLimits::default() })
    }

    /// Decode one frame under `limits`: its size is checked before anything is read, and
    /// nesting while reading, so that no frame can exhaust memory or the stack.
    pub fn decode_limited(frame: &[u8], limits: &DecodeLimits) -> Result<Envelope, ProtocolError> {
        if frame.len() > limits.max_frame_bytes {
            return Err(ProtocolError::TooLarge { size: frame.len(), limit: limits.max_frame_bytes });
        }
        let mut cursor = frame;
        // rmpv spends 2 of its depth on each array or map and 3 on a string, binary or ext
        // leaf; a value sits inside at most two containers (the envelope, an argument list).
        // So a value nested max_value_depth levels always fits, and one nested 3 more never.
        let depth = 2 * limits.max_value_depth + 7;
        let value =
            rmpv::decode::read_value_with_max_depth(&mut cursor, depth).map_err(|error| match error {
                rmpv::decode::Error::DepthLimitExceeded => {
                    ProtocolError::TooDeep { limit: limits.max_value_depth }
                }
                other => ProtocolError::Malformed(other.to_string()),
            })?;
        if !cursor.is_empty() {
            return Err(ProtocolError::TrailingBytes(cursor.len()));
        }
        if !strings_are_utf8(&value) {
            return Err(ProtocolError::Malformed("a string is not valid UTF-8".into()));
        }
        Self::from_value(value)
    }

    /// The request id of a frame that could not be decoded, so that the error reply can
    /// still name the request. Only the array header, the kind and the id are read: the rest
    /// may be what was wrong (nested deep enough to overflow the stack, for one).
    pub fn salvage_id(frame: &[u8]) -> u64 {
        let mut cursor = match frame {
            [0x92..=0x9f, rest @ ..] | [0xdc, _, _, rest @ ..] | [0xdd, _, _, _, _, rest @ ..] => rest,
            _ => return 0,
        };
        let mut scalar = || rmpv::decode::read_value_with_max_depth(&mut cursor, 1).ok();
        match (scalar(), scalar()) {
            (Some(_kind), Some(id)) => id.as_u64().unwrap_or(0),
            _ => 0,
        }
    }

    pub fn from_value(value: Value) -> Result<Envelope, ProtocolError> {
        let Value::Array(items) = value else {
            return Err(bad(format!("expected an array, got {}", crate::type_name_of(&value))));
        };
        let mut fields = Fields { items: items.into_iter(), position: 0 };
        let kind = fields.uint("kind")?;
        let envelope = match kind {
            Self::HELLO => {
                let version = fields.u32("version")?;
                let client = fields.string("client")?;
                let (session, role) = match fields.optional("session") {
                    None => (Vec::new(), Role::Main),
                    Some(session) => (session_bytes(session)?, role(fields.uint("role")?)?),
                };
                Envelope::Hello { version, client, session, role }
            }
            Self::WELCOME => Envelope::Welcome {
                version: fields.u32("version")?,
                heartbeat_ms: fields.uint("heartbeat_ms")?,
            },
            Self::CALL => Envelope::Call {
                id: fields.uint("id")?,
                module: fields.string("module")?,
                method: fields.string("method")?,
                args: fields.array("args")?,
            },
            Self::POST => Envelope::Post {
                id: fields.uint("id")?,
                module: fields.string("module")?,
                method: fields.string("method")?,
                args: fields.array("args")?,
            },
            Self::REPLY => Envelope::Reply { id: fields.uint("id")?, value: fields.any("value")? },
            Self::ERROR => Envelope::Error { id: fields.uint("id")?, message: fields.string("message")? },
            Self::EVENT => Envelope::Event {
                name: fields.string("name")?,
                value: fields.any("value")?,
                lost: match fields.optional("lost") {
                    None => 0,
                    Some(lost) => lost.as_u64().ok_or_else(|| not_uint("lost", &lost))?,
                },
            },
            Self::REGISTER => Envelope::Register {
                id: fields.uint("id")?,
                module: fields.string("module")?,
                methods: fields.array("methods")?.into_iter().map(method_info).collect::<Result<_, _>>()?,
            },
            Self::UNREGISTER => {
                Envelope::Unregister { id: fields.uint("id")?, module: fields.string("module")? }
            }
            Self::SUBSCRIBE => Envelope::Subscribe { id: fields.uint("id")?, event: fields.string("event")? },
            Self::UNSUBSCRIBE => {
                Envelope::Unsubscribe { id: fields.uint("id")?, event: fields.string("event")? }
            }
            Self::HEARTBEAT => Envelope::Heartbeat,
            Self::ACK => Envelope::Ack { count: fields.u32("count")? },
            Self::CALLBACK => {
                let module = fields.string("module")?;
                let method = fields.string("method")?;
                let mut args = fields.array("args")?.into_iter();
                let (Some(Value::String(event)), Some(value), Some(message), None) =
                    (args.next(), args.next(), args.next(), args.next())
                else {
                    return Err(bad("callback args must be [event, value, message]".into()));
                };
                let event = event.into_str().ok_or_else(|| bad("callback event must be UTF-8".into()))?;
                Envelope::Callback { module, method, event, value, message, lost: fields.uint("lost")? }
            }
            other => return Err(bad(format!("unknown kind {other}"))),
        };
        fields.finish()?;
        Ok(envelope)
    }
}

/// Whether every string in `value` is UTF-8, as MessagePack requires: rmpv reads one that is
/// not and writes it back as binary, so it would change type on its way through the broker.
fn strings_are_utf8(value: &Value) -> bool {
    match value {
        Value::String(text) => text.is_str(),
        Value::Array(items) => items.iter().all(strings_are_utf8),
        Value::Map(pairs) => pairs.iter().all(|(key, item)| strings_are_utf8(key) && strings_are_utf8(item)),
        _ => true,
    }
}

fn bad(message: String) -> ProtocolError {
    ProtocolError::NotAnEnvelope(message)
}

fn not_uint(name: &str, value: &Value) -> ProtocolError {
    bad(format!("field {name} must be an unsigned integer, got {}", value_excerpt(value)))
}

/// Longest session tag a client may send in `Hello`.
const MAX_SESSION_BYTES: usize = 64;

fn session_bytes(value: Value) -> Result<Vec<u8>, ProtocolError> {
    match value {
        Value::Binary(bytes) if !bytes.is_empty() && bytes.len() <= MAX_SESSION_BYTES => Ok(bytes),
        other => Err(bad(format!(
            "field session must be 1 to {MAX_SESSION_BYTES} bytes of binary, got {}",
            value_excerpt(&other)
        ))),
    }
}

fn role(code: u64) -> Result<Role, ProtocolError> {
    match code {
        0 => Ok(Role::Main),
        1 => Ok(Role::Liveness),
        other => Err(bad(format!("field role must be 0 (main) or 1 (liveness), got {other}"))),
    }
}

fn method_info(value: Value) -> Result<MethodInfo, ProtocolError> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    match &value {
        Value::Array(parts) if parts.len() == 3 => Ok(MethodInfo {
            name: text(parts.first()).ok_or_else(|| bad("method name must be a string".into()))?,
            signature: text(parts.get(1)).ok_or_else(|| bad("method signature must be a string".into()))?,
            help: text(parts.get(2)).ok_or_else(|| bad("method help must be a string".into()))?,
        }),
        _ => Err(bad("each method must be [name, signature, help]".into())),
    }
}

struct Fields {
    items: std::vec::IntoIter<Value>,
    position: usize,
}

impl Fields {
    fn any(&mut self, name: &str) -> Result<Value, ProtocolError> {
        self.position += 1;
        self.items.next().ok_or_else(|| bad(format!("missing field {} ({name})", self.position - 1)))
    }

    /// The next field if there is one: for trailing fields newer than the short form.
    fn optional(&mut self, _name: &str) -> Option<Value> {
        let next = self.items.next();
        if next.is_some() {
            self.position += 1;
        }
        next
    }

    fn uint(&mut self, name: &str) -> Result<u64, ProtocolError> {
        let value = self.any(name)?;
        value.as_u64().ok_or_else(|| not_uint(name, &value))
    }

    fn u32(&mut self, name: &str) -> Result<u32, ProtocolError> {
        let value = self.uint(name)?;
        u32::try_from(value).map_err(|_| bad(format!("field {name} out of range: {value}")))
    }

    fn string(&mut self, name: &str) -> Result<String, ProtocolError> {
        match self.any(name)? {
            Value::String(s) if s.is_str() => Ok(s.into_str().unwrap_or_default()),
            other => Err(bad(format!("field {name} must be a string, got {}", value_excerpt(&other)))),
        }
    }

    fn array(&mut self, name: &str) -> Result<Vec<Value>, ProtocolError> {
        match self.any(name)? {
            Value::Array(items) => Ok(items),
            other => Err(bad(format!("field {name} must be an array, got {}", value_excerpt(&other)))),
        }
    }

    fn finish(mut self) -> Result<(), ProtocolError> {
        match self.items.next() {
            None => Ok(()),
            Some(_) => Err(bad(format!("unexpected field {} after the last one", self.position))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(envelope: Envelope) {
        let bytes = envelope.encode();
        assert_eq!(Envelope::decode(&bytes, 1 << 20), Ok(envelope));
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(Envelope::hello("naocli"));
        round_trip(Envelope::Hello {
            version: 1,
            client: "Echo".into(),
            session: vec![7; 16],
            role: Role::Liveness,
        });
        round_trip(Envelope::Welcome { version: 1, heartbeat_ms: 1000 });
        round_trip(Envelope::Call {
            id: 7,
            module: "ALMemory".into(),
            method: "getData".into(),
            args: vec!["key".into()],
        });
        round_trip(Envelope::Post { id: 8, module: "M".into(), method: "m".into(), args: vec![] });
        round_trip(Envelope::Reply { id: 7, value: Value::F64(0.5) });
        round_trip(Envelope::Error { id: 7, message: "no".into() });
        round_trip(Envelope::Event { name: "E".into(), value: Value::Nil, lost: 0 });
        round_trip(Envelope::Event { name: "E".into(), value: Value::Nil, lost: 3 });
        round_trip(Envelope::Callback {
            module: "M".into(),
            method: "onTouched".into(),
            event: "E".into(),
            value: Value::F64(1.0),
            message: "".into(),
            lost: 2,
        });
        round_trip(Envelope::Register {
            id: 1,
            module: "Echo".into(),
            methods: vec![MethodInfo {
                name: "echo".into(),
                signature: "(value: Value) -> Value".into(),
                help: "returns its argument".into(),
            }],
        });
        round_trip(Envelope::Unregister { id: 2, module: "Echo".into() });
        round_trip(Envelope::Subscribe { id: 3, event: "E".into() });
        round_trip(Envelope::Unsubscribe { id: 4, event: "E".into() });
        round_trip(Envelope::Heartbeat);
        round_trip(Envelope::Ack { count: 256 });
    }

    /// The bytes quoted in docs/protocol.md.
    #[test]
    fn call_and_reply_bytes_match_the_documentation() {
        let call = Envelope::Call {
            id: 1,
            module: "ALMemory".into(),
            method: "getData".into(),
            args: vec!["x".into()],
        };
        assert_eq!(call.encode(), b"\x95\x02\x01\xa8ALMemory\xa7getData\x91\xa1x".to_vec());
        let reply = Envelope::Reply { id: 1, value: Value::F64(0.5) };
        assert_eq!(reply.encode(), b"\x93\x04\x01\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00".to_vec());
        assert_eq!(Envelope::Heartbeat.encode(), b"\x91\x0b".to_vec());
        assert_eq!(Envelope::Ack { count: 256 }.encode(), b"\x92\x0c\xcd\x01\x00".to_vec());
    }

    #[test]
    fn errors_quote_a_short_excerpt_of_the_bad_field() {
        let huge = Envelope::Reply { id: 1, value: Value::from("x".repeat(4 << 20)) };
        let mut frame = huge.to_value();
        if let Value::Array(items) = &mut frame {
            items[0] = Envelope::EVENT.into();
            items[1] = Value::Array(vec![Value::from(1); 1 << 16]);
        }
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &frame).unwrap();
        let error = Envelope::decode(&bytes, 64 << 20).unwrap_err().to_string();
        assert!(error.len() < 200, "{error}");
    }

    #[test]
    fn bad_frames_are_named() {
        assert!(matches!(Envelope::decode(b"\xa5ab", 100), Err(ProtocolError::Malformed(_))));
        assert!(matches!(Envelope::decode(b"\x95\x02", 100), Err(ProtocolError::Malformed(_))));
        assert!(matches!(Envelope::decode(b"\x01", 100), Err(ProtocolError::NotAnEnvelope(_))));
        assert!(matches!(Envelope::decode(b"\x91\x63", 100), Err(ProtocolError::NotAnEnvelope(_))));
        assert!(matches!(Envelope::decode(b"\x91\x0b\x00", 100), Err(ProtocolError::TrailingBytes(1))));
        assert_eq!(Envelope::decode(&[0x90; 10], 4), Err(ProtocolError::TooLarge { size: 10, limit: 4 }));
        let mut nested = vec![0x93, 0x06, 0xa1, b'E'];
        nested.extend(std::iter::repeat_n(0x91, 40));
        nested.push(0xc0);
        assert_eq!(Envelope::decode(&nested, 1 << 20), Err(ProtocolError::TooDeep { limit: 32 }));
        let not_call = b"\x95\x02\x09\xa1M\x05\x90";
        assert_eq!(Envelope::salvage_id(not_call), 9);
        assert!(Envelope::decode(not_call, 100).is_err());
    }
}
