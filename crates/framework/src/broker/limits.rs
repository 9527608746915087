//! Size limits and per-client bounds: `[broker.limits]` in broker.toml.

use naobroker_protocol::{excerpt, DecodeLimits, Value, DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_VALUE_DEPTH};
use serde::Deserialize;
use std::time::Duration;

use crate::error::CallError;

/// What one client may send, hold and have queued. Every refusal names the limit it hit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest message: a peer whose frame header claims more is disconnected before the
    /// frame is read.
    pub max_frame_bytes: usize,
    /// Bytes held for messages not yet received whole, over every connection of every wire
    /// (past a read chunk of 64 KiB each, which any connection may hold): a connection that
    /// would take the total past it is disconnected.
    pub max_unfinished_bytes: usize,
    /// A connection in the middle of a message that neither finishes one nor receives
    /// 64 KiB in this many milliseconds is disconnected.
    pub stall_timeout_ms: u64,
    /// Longest module, method, event or key name.
    pub max_name_bytes: usize,
    /// Largest value stored in ALMemory or raised as an event (MessagePack bytes).
    pub max_value_bytes: usize,
    /// Deepest nesting of arrays and maps in any value.
    pub max_value_depth: usize,
    /// Messages waiting to be written to one client; past this the client is disconnected.
    pub max_queued_messages: usize,
    /// Bytes waiting to be written to one client; past this the client is disconnected.
    pub max_queued_bytes: usize,
    /// Calls and posts of one client under way at once; more are refused.
    pub max_calls_in_flight: usize,
    /// Modules one client may register.
    pub max_modules: usize,
    /// Event subscriptions (streams and callbacks) one client may hold.
    pub max_subscriptions: usize,
    /// Events and callbacks sent to one subscriber and not yet consumed; past this new
    /// ones are dropped for that subscriber, counted, and the count travels with the next.
    pub event_window: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_unfinished_bytes: 64 << 20,
            stall_timeout_ms: 5000,
            max_name_bytes: 256,
            max_value_bytes: 1 << 20,
            max_value_depth: DEFAULT_MAX_VALUE_DEPTH,
            max_queued_messages: 65_536,
            max_queued_bytes: 64 << 20,
            max_calls_in_flight: 1024,
            max_modules: 64,
            max_subscriptions: 4096,
            event_window: naobroker_protocol::EVENT_WINDOW,
        }
    }
}

impl Limits {
    pub fn stall_timeout(&self) -> Duration {
        Duration::from_millis(self.stall_timeout_ms)
    }

    pub fn decode_limits(&self) -> DecodeLimits {
        DecodeLimits { max_frame_bytes: self.max_frame_bytes, max_value_depth: self.max_value_depth }
    }

    /// Refuse a name (`what` says of what: "module", "event", "key") longer than allowed.
    pub fn check_name(&self, what: &str, name: &str) -> Result<(), CallError> {
        if name.len() <= self.max_name_bytes {
            return Ok(());
        }
        Err(CallError::bad_argument(format!(
            "{what} name of {} bytes exceeds max_name_bytes ({}): {}",
            name.len(),
            self.max_name_bytes,
            excerpt(name)
        )))
    }

    /// Refuse a value whose MessagePack form is larger than allowed.
    pub fn check_value(&self, what: &str, value: &Value) -> Result<(), CallError> {
        let size = encoded_size(value);
        if size <= self.max_value_bytes {
            return Ok(());
        }
        Err(CallError::bad_argument(format!(
            "value of {what} takes {size} bytes, more than max_value_bytes ({})",
            self.max_value_bytes
        )))
    }
}

/// The MessagePack size of `value`, computed without encoding it.
pub fn encoded_size(value: &Value) -> usize {
    fn header(len: usize, fix_limit: usize) -> usize {
        match len {
            n if n < fix_limit => 1,
            n if n <= 0xff && fix_limit != 16 => 2,
            n if n <= 0xffff => 3,
            _ => 5,
        }
    }
    match value {
        Value::Nil | Value::Boolean(_) => 1,
        Value::Integer(integer) => match (integer.as_u64(), integer.as_i64()) {
            (Some(n), _) if n < 128 => 1,
            (Some(n), _) if n <= 0xff => 2,
            (Some(n), _) if n <= 0xffff => 3,
            (Some(n), _) if n <= 0xffff_ffff => 5,
            (_, Some(n)) if n >= -32 => 1,
            (_, Some(n)) if n >= -128 => 2,
            (_, Some(n)) if n >= -32_768 => 3,
            (_, Some(n)) if n >= i64::from(i32::MIN) => 5,
            _ => 9,
        },
        Value::F32(_) => 5,
        Value::F64(_) => 9,
        Value::String(text) => header(text.as_bytes().len(), 32) + text.as_bytes().len(),
        Value::Binary(bytes) => header(bytes.len(), 0) + bytes.len(),
        Value::Array(items) => header(items.len(), 16) + items.iter().map(encoded_size).sum::<usize>(),
        Value::Map(pairs) => {
            header(pairs.len(), 16)
                + pairs.iter().map(|(key, value)| encoded_size(key) + encoded_size(value)).sum::<usize>()
        }
        Value::Ext(_, bytes) => 6 + bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_size_bounds_the_real_encoding() {
        let values = [
            Value::from("x".repeat(300)),
            Value::Array(vec![Value::from(1.5); 20]),
            Value::Array((-70_000i64..70_000).step_by(7).map(Value::from).collect()),
            Value::Map(vec![(Value::from("k"), Value::Binary(vec![0; 70_000]))]),
        ];
        for value in values {
            let mut bytes = Vec::new();
            rmpv::encode::write_value(&mut bytes, &value).unwrap();
            let estimate = encoded_size(&value);
            assert!(estimate == bytes.len(), "{estimate} vs {}", bytes.len());
        }
    }

    #[test]
    fn refusals_name_the_limit_and_quote_little() {
        let limits = Limits::default();
        let error = limits.check_name("module", &"M".repeat(10 << 20)).unwrap_err().message;
        assert!(error.contains("max_name_bytes (256)") && error.len() < 200, "{error}");
        let error = limits.check_value("Big/Key", &Value::Binary(vec![0; 2 << 20])).unwrap_err().message;
        assert!(error.contains("max_value_bytes"), "{error}");
    }
}
