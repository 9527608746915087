//! What naocli prints and how it reads arguments: JSON in, JSON or text out, one line at a time.

use std::io::Write;

use naobroker_framework::{to_value, CallError, Value};

/// How results are printed: `--json` makes every line one JSON value.
#[derive(Clone, Copy)]
pub(crate) struct Output {
    pub(crate) json: bool,
}

impl Output {
    /// A JSON value when `--json`, else `text`.
    pub(crate) fn emit(
        &self,
        json: &serde_json::Value,
        text: impl FnOnce() -> String,
    ) -> Result<(), CallError> {
        if self.json {
            print_line(&json.to_string())
        } else {
            print_line(&text())
        }
    }
}

/// An argument as JSON (`0`, `"Merge"`, `[1, 2]`); a word that is not JSON is a string.
pub(crate) fn parse_arg(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(json) => to_value(&json),
        Err(_) => Value::from(text),
    }
}

pub(crate) fn to_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value}"))
}

/// A value as a JSON tree, to nest in the lines `--json` prints and the recordings' messages
/// (its text when JSON cannot hold it).
pub(crate) fn json_of(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()))
}

/// What [`print_line`] fails with once stdout's reader is gone (`naocli watch KEY | head -1`):
/// naocli then ends quietly and successfully, as `cat` does.
pub(crate) const READER_GONE: &str = "stdout's reader is gone";

pub(crate) fn print_line(line: &str) -> Result<(), CallError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|_| out.flush()).map_err(|error| match error.kind() {
        std::io::ErrorKind::BrokenPipe => CallError::new(READER_GONE),
        _ => CallError::new(error.to_string()),
    })
}

/// A field of a map value.
pub(crate) fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    match value {
        Value::Map(entries) => entries.iter().find(|(key, _)| key.as_str() == Some(name)).map(|(_, v)| v),
        _ => None,
    }
}

/// A field of a map value as text: a string as it is, anything else as JSON, `""` when absent.
pub(crate) fn text_field(value: &Value, name: &str) -> String {
    match field(value, name) {
        Some(Value::String(text)) => text.as_str().unwrap_or_default().to_owned(),
        Some(other) => to_json(other),
        None => String::new(),
    }
}
