//! Short quotes of hostile input for error messages: never longer than [`EXCERPT_BYTES`].

use std::fmt::{self, Write};

use rmpv::Value;

/// Bytes of a bad input an error message quotes at most.
pub const EXCERPT_BYTES: usize = 64;

/// A `fmt::Write` that keeps whole characters up to `limit` bytes and then refuses more,
/// so that rendering a 4 MiB value stops after a few bytes instead of building it whole.
struct Bounded {
    text: String,
    limit: usize,
    cut: bool,
}

impl Write for Bounded {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        for character in piece.chars() {
            if self.text.len() + character.len_utf8() > self.limit {
                self.cut = true;
                return Err(fmt::Error);
            }
            self.text.push(character);
        }
        Ok(())
    }
}

fn bounded(limit: usize, render: impl FnOnce(&mut Bounded) -> fmt::Result) -> String {
    let mut out = Bounded { text: String::new(), limit, cut: false };
    let _ = render(&mut out);
    if out.cut {
        out.text.push('…');
    }
    out.text
}

/// At most [`EXCERPT_BYTES`] of `text`, with `…` and the full size when cut.
pub fn excerpt(text: &str) -> String {
    cut(text, EXCERPT_BYTES)
}

/// At most `limit` bytes of `text` (whole characters), with `…` and the full size when cut.
pub fn cut(text: &str, limit: usize) -> String {
    let mut quoted = bounded(limit, |out| out.write_str(text));
    if quoted.ends_with('…') {
        let _ = write!(quoted, " ({} bytes)", text.len());
    }
    quoted
}

/// At most [`EXCERPT_BYTES`] of a value as MessagePack's text form shows it.
pub fn value_excerpt(value: &Value) -> String {
    bounded(EXCERPT_BYTES, |out| render(value, out))
}

/// `value` as rmpv's `Display` shows it, written piece by piece so that [`Bounded`] can stop
/// it: rmpv's own renders a whole array into a `String` first (over a gigabyte for a
/// 16 MiB frame of floats).
fn render(value: &Value, out: &mut Bounded) -> fmt::Result {
    match value {
        Value::Array(items) => {
            out.write_char('[')?;
            for (index, item) in items.iter().enumerate() {
                out.write_str(if index == 0 { "" } else { ", " })?;
                render(item, out)?;
            }
            out.write_char(']')
        }
        Value::Map(pairs) => {
            out.write_char('{')?;
            for (index, (key, item)) in pairs.iter().enumerate() {
                out.write_str(if index == 0 { "" } else { ", " })?;
                render(key, out)?;
                out.write_str(": ")?;
                render(item, out)?;
            }
            out.write_char('}')
        }
        scalar => write!(out, "{scalar}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole() {
        assert_eq!(excerpt("DCM"), "DCM");
        assert_eq!(value_excerpt(&Value::from(3)), "3");
    }

    #[test]
    fn long_input_is_cut_and_sized() {
        let name = "x".repeat(10 << 20);
        let quoted = excerpt(&name);
        assert_eq!(quoted, format!("{}… ({} bytes)", "x".repeat(EXCERPT_BYTES), 10 << 20));
        let value = Value::Array(vec![Value::from(1); 1 << 20]);
        let quoted = value_excerpt(&value);
        assert!(quoted.chars().count() == EXCERPT_BYTES + 1 && quoted.ends_with('…'), "{quoted}");
    }
}
