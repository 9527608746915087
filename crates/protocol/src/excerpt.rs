//! Short quotes of hostile input for error messages: never longer than [`EXCERPT_CHARS`].

use std::fmt::{self, Write};

use rmpv::Value;

/// Characters of a bad input an error message quotes at most.
pub const EXCERPT_CHARS: usize = 64;

/// A `fmt::Write` that keeps the first `EXCERPT_CHARS` characters and then refuses more,
/// so that rendering a 4 MiB value stops after a few bytes instead of building it whole.
struct Bounded {
    text: String,
    chars: usize,
    cut: bool,
}

impl Write for Bounded {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        for character in piece.chars() {
            if self.chars == EXCERPT_CHARS {
                self.cut = true;
                return Err(fmt::Error);
            }
            self.text.push(character);
            self.chars += 1;
        }
        Ok(())
    }
}

fn bounded(render: impl FnOnce(&mut Bounded) -> fmt::Result) -> String {
    let mut out = Bounded { text: String::new(), chars: 0, cut: false };
    let _ = render(&mut out);
    if out.cut {
        out.text.push('…');
    }
    out.text
}

/// At most [`EXCERPT_CHARS`] characters of `text`, with `…` and the full size when cut.
pub fn excerpt(text: &str) -> String {
    let mut quoted = bounded(|out| out.write_str(text));
    if quoted.ends_with('…') {
        let _ = write!(quoted, " ({} bytes)", text.len());
    }
    quoted
}

/// At most [`EXCERPT_CHARS`] characters of a value as MessagePack's text form shows it.
pub fn value_excerpt(value: &Value) -> String {
    bounded(|out| render(value, out))
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
        assert_eq!(quoted, format!("{}… ({} bytes)", "x".repeat(EXCERPT_CHARS), 10 << 20));
        let value = Value::Array(vec![Value::from(1); 1 << 20]);
        let quoted = value_excerpt(&value);
        assert!(quoted.chars().count() == EXCERPT_CHARS + 1 && quoted.ends_with('…'), "{quoted}");
    }
}
