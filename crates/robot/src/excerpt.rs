//! Short quotes of client-given names for the preferences' and the DCM's error messages,
//! cut as the broker's own errors cut them (`naobroker_protocol::excerpt`, which neither
//! links: they know no wire): a hostile megabyte-long name never comes back whole.

/// Bytes of a name an error message quotes at most.
const EXCERPT_BYTES: usize = 64;

/// At most [`EXCERPT_BYTES`] of `text` (whole characters), with `…` and the full size when cut.
pub fn excerpt(text: &str) -> String {
    if text.len() <= EXCERPT_BYTES {
        return text.to_owned();
    }
    let end = (0..=EXCERPT_BYTES).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0);
    format!("{}… ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_as_the_broker_cuts_them() {
        let long = "é".repeat(40);
        for text in ["Chest", "x".repeat(64).as_str(), "x".repeat(65).as_str(), long.as_str()] {
            assert_eq!(excerpt(text), naobroker_protocol::excerpt(text), "{text}");
        }
        assert_eq!(excerpt(&long), format!("{}… (80 bytes)", "é".repeat(32)));
    }
}
