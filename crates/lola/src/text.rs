//! A short text stored inline (no heap): the four `RobotConfig` strings of a sensor map.

use std::fmt;

/// The most bytes a [`ConfigText`] holds: a real robot's ids have 20, its versions 5.
pub const CONFIG_TEXT_CAPACITY: usize = 32;

/// A text longer than [`CONFIG_TEXT_CAPACITY`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a text of {len} bytes does not fit in {CONFIG_TEXT_CAPACITY}")]
pub struct TextTooLong {
    pub len: usize,
}

/// UTF-8 text of at most [`CONFIG_TEXT_CAPACITY`] bytes, inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigText {
    bytes: [u8; CONFIG_TEXT_CAPACITY],
    len: u8,
}

impl ConfigText {
    /// The empty text.
    pub const EMPTY: ConfigText = ConfigText { bytes: [0; CONFIG_TEXT_CAPACITY], len: 0 };

    pub fn new(text: &str) -> Result<ConfigText, TextTooLong> {
        let mut stored = ConfigText::EMPTY;
        stored.set(text)?;
        Ok(stored)
    }

    /// Replace the text; on error the text is unchanged.
    pub fn set(&mut self, text: &str) -> Result<(), TextTooLong> {
        let len = text.len();
        if len > CONFIG_TEXT_CAPACITY {
            return Err(TextTooLong { len });
        }
        self.bytes[..len].copy_from_slice(text.as_bytes());
        self.bytes[len..].fill(0);
        self.len = len as u8;
        Ok(())
    }

    pub fn as_str(&self) -> &str {
        // Only `set` writes the bytes, always from a whole `&str`.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for ConfigText {
    fn default() -> ConfigText {
        ConfigText::EMPTY
    }
}

impl fmt::Debug for ConfigText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ConfigText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_capacity_and_refuses_more() {
        let id = ConfigText::new("P0000073A03S83I00011").unwrap();
        assert_eq!(id.as_str(), "P0000073A03S83I00011");
        assert_eq!(id.len(), 20);
        let full = "x".repeat(CONFIG_TEXT_CAPACITY);
        assert_eq!(ConfigText::new(&full).unwrap().as_str(), full);
        let mut text = ConfigText::new("6.0.0").unwrap();
        assert_eq!(text.set(&format!("{full}y")), Err(TextTooLong { len: CONFIG_TEXT_CAPACITY + 1 }));
        assert_eq!(text.as_str(), "6.0.0");
        text.set("").unwrap();
        assert!(text.is_empty());
        assert_eq!(text, ConfigText::EMPTY);
    }
}
