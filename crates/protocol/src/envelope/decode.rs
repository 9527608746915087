//! Reading a frame back into an [`Envelope`]: its size checked before anything is read,
//! nesting while reading, strings checked for UTF-8, then each field named in the error
//! when it is missing or of the wrong type.
//!
//! Calls, replies and events, the messages of every call and event, are read first straight
//! from the bytes (`direct.rs`); any other frame, and any of those that path does not take
//! whole, goes through rmpv's value tree here, where every error is found and named.

use rmpv::Value;

use super::direct::{self, Decoded};
use super::{CallbackSubscription, DecodeLimits, Envelope, MethodInfo, ProtocolError, Role};
use crate::excerpt::value_excerpt;
use crate::{ErrorKind, MethodType};

impl Envelope {
    /// Decode one frame, checking its size against `max_frame_bytes` first, with the default
    /// nesting limit.
    pub fn decode(frame: &[u8], max_frame_bytes: usize) -> Result<Envelope, ProtocolError> {
        Self::decode_limited(frame, &DecodeLimits { max_frame_bytes, ..DecodeLimits::default() })
    }

    /// Decode one frame under `limits`: its size is checked before anything is read, and
    /// nesting while reading, so that no frame can exhaust memory or the stack.
    pub fn decode_limited(frame: &[u8], limits: &DecodeLimits) -> Result<Envelope, ProtocolError> {
        Self::decode_frame(frame, limits).map(Decoded::into_envelope)
    }

    /// [`Self::decode_limited`], a call's module and method names left in `frame`: what a
    /// broker routes a call by without copying its names.
    pub fn decode_frame<'a>(frame: &'a [u8], limits: &DecodeLimits) -> Result<Decoded<'a>, ProtocolError> {
        let depth = Self::tree_depth(frame, limits)?;
        if let Ok(decoded) = direct::call_reply_or_event(frame, depth.min(usize::from(u16::MAX)) as u16) {
            return Ok(decoded);
        }
        Self::decode_tree(frame, limits, depth).map(Decoded::Envelope)
    }

    /// [`Self::decode_limited`] by the general decoder alone, the direct path skipped: what
    /// the fuzzer holds every envelope of the direct path to.
    #[doc(hidden)]
    pub fn decode_general(frame: &[u8], limits: &DecodeLimits) -> Result<Envelope, ProtocolError> {
        Self::decode_tree(frame, limits, Self::tree_depth(frame, limits)?)
    }

    /// The depth rmpv may read `frame` to, once its size is within `max_frame_bytes`.
    fn tree_depth(frame: &[u8], limits: &DecodeLimits) -> Result<usize, ProtocolError> {
        if frame.len() > limits.max_frame_bytes {
            return Err(ProtocolError::TooLarge { size: frame.len(), limit: limits.max_frame_bytes });
        }
        Ok(Self::rmpv_depth(limits))
    }

    /// The depth rmpv may read an envelope to under `limits`.
    pub(super) fn rmpv_depth(limits: &DecodeLimits) -> usize {
        // rmpv spends 2 of its depth on each array or map, 3 on a string and 2 on a binary or
        // ext leaf; a value sits inside at most two containers (the envelope, an argument list).
        // So a value nested max_value_depth levels always fits, and one nested 3 more never.
        2 * limits.max_value_depth + 7
    }

    /// The general decoder: the frame read into rmpv's value tree, then each field checked.
    pub(super) fn decode_tree(
        frame: &[u8],
        limits: &DecodeLimits,
        depth: usize,
    ) -> Result<Envelope, ProtocolError> {
        let mut cursor = frame;
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
            Self::ERROR => Envelope::Error {
                id: fields.uint("id")?,
                message: fields.string("message")?,
                kind: match fields.optional("kind") {
                    None => ErrorKind::Failed,
                    Some(kind) => ErrorKind::from_code(kind.as_u64().ok_or_else(|| not_uint("kind", &kind))?),
                },
            },
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
            Self::GOODBYE => Envelope::Goodbye { id: fields.uint("id")? },
            Self::SUBSCRIBE_CALLBACK => Envelope::SubscribeCallback {
                id: fields.uint("id")?,
                subscription: CallbackSubscription {
                    event: fields.string("event")?,
                    module: fields.string("module")?,
                    method: fields.string("method")?,
                    micro_message: fields.optional("message"),
                },
            },
            Self::UNSUBSCRIBE_CALLBACK => Envelope::UnsubscribeCallback {
                id: fields.uint("id")?,
                event: fields.string("event")?,
                module: fields.string("module")?,
            },
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
        Value::Array(parts) if matches!(parts.len(), 3 | 4) => Ok(MethodInfo {
            name: text(parts.first()).ok_or_else(|| bad("method name must be a string".into()))?,
            signature: text(parts.get(1)).ok_or_else(|| bad("method signature must be a string".into()))?,
            help: text(parts.get(2)).ok_or_else(|| bad("method help must be a string".into()))?,
            types: parts.get(3).map(MethodType::from_value).transpose()?,
        }),
        _ => Err(bad("each method must be [name, signature, help] or [name, signature, help, types]".into())),
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
