//! How many bytes a MessagePack value takes, found from its headers alone: the way past a
//! map the sensor-map decoder refused, so that the stream stays in step. Bounded by
//! [`MAX_MESSAGE_BYTES`], without recursion or allocation.

use naobroker_lola::MAX_MESSAGE_BYTES;

/// What the bytes at the start of a buffer are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Skim {
    /// One whole value of this many bytes.
    Complete(usize),
    /// The start of a value: more bytes are needed.
    Incomplete,
    /// A value that does not end within [`MAX_MESSAGE_BYTES`].
    TooLong,
    /// No MessagePack value starts here (the byte 0xc1).
    Invalid,
}

/// `(header bytes, payload bytes, values that follow)` of the value whose header starts
/// `bytes`, or `None` when the header is not all there yet.
fn header(bytes: &[u8]) -> Option<Result<(usize, usize, usize), Skim>> {
    let marker = *bytes.first()?;
    let length = |width: usize| -> Option<usize> {
        let field = bytes.get(1..1 + width)?;
        Some(field.iter().fold(0usize, |length, &byte| (length << 8) | usize::from(byte)))
    };
    let parts = match marker {
        0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => (1, 0, 0),
        0x80..=0x8f => (1, 0, 2 * usize::from(marker & 0x0f)),
        0x90..=0x9f => (1, 0, usize::from(marker & 0x0f)),
        0xa0..=0xbf => (1, usize::from(marker & 0x1f), 0),
        0xc1 => return Some(Err(Skim::Invalid)),
        0xc4 | 0xd9 => (2, length(1)?, 0),
        0xc5 | 0xda => (3, length(2)?, 0),
        0xc6 | 0xdb => (5, length(4)?, 0),
        0xc7 => (3, length(1)?, 0),
        0xc8 => (4, length(2)?, 0),
        0xc9 => (6, length(4)?, 0),
        0xca => (5, 0, 0),
        0xcb => (9, 0, 0),
        0xcc | 0xd0 => (2, 0, 0),
        0xcd | 0xd1 => (3, 0, 0),
        0xce | 0xd2 => (5, 0, 0),
        0xcf | 0xd3 => (9, 0, 0),
        0xd4 => (3, 0, 0),
        0xd5 => (4, 0, 0),
        0xd6 => (6, 0, 0),
        0xd7 => (10, 0, 0),
        0xd8 => (18, 0, 0),
        0xdc => (3, 0, length(2)?),
        0xdd => (5, 0, length(4)?),
        0xde => (3, 0, 2 * length(2)?),
        0xdf => (5, 0, 2 * length(4)?),
    };
    Some(Ok(parts))
}

/// How many bytes the value at the start of `bytes` takes.
pub(super) fn skim(bytes: &[u8]) -> Skim {
    let mut position = 0usize;
    let mut pending = 1usize;
    while pending > 0 {
        if position >= MAX_MESSAGE_BYTES {
            return Skim::TooLong;
        }
        let Some(rest) = bytes.get(position..) else { return Skim::Incomplete };
        let (header_bytes, payload, values) = match header(rest) {
            None => return Skim::Incomplete,
            Some(Err(skim)) => return skim,
            Some(Ok(parts)) => parts,
        };
        pending = pending - 1 + values;
        // Every value takes a byte at least: more than the message may hold is too long.
        if pending > MAX_MESSAGE_BYTES || payload > MAX_MESSAGE_BYTES {
            return Skim::TooLong;
        }
        position += header_bytes + payload;
    }
    if position > MAX_MESSAGE_BYTES {
        Skim::TooLong
    } else if position > bytes.len() {
        Skim::Incomplete
    } else {
        Skim::Complete(position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_measured_whole_and_never_past_their_bounds() {
        // {"Position": [1.0f32, 2], "x": "ab"} then the next message's first byte.
        let mut map = vec![0x82, 0xa8];
        map.extend_from_slice(b"Position");
        map.extend_from_slice(&[0x92, 0xca, 0x3f, 0x80, 0x00, 0x00, 0x02, 0xa1, b'x', 0xa2, b'a', b'b']);
        let whole = map.len();
        map.push(0x8d);
        assert_eq!(skim(&map), Skim::Complete(whole));
        for cut in 0..whole {
            assert_eq!(skim(&map[..cut]), Skim::Incomplete, "{cut} bytes");
        }
        assert_eq!(skim(&[0xc1]), Skim::Invalid);
        assert_eq!(skim(&[0x91, 0xc1]), Skim::Invalid);
        assert_eq!(skim(&[0xdf, 0xff, 0xff, 0xff, 0xff]), Skim::TooLong, "a map32 of 2³² entries");
        assert_eq!(skim(&[0xc6, 0x00, 0x01, 0x00, 0x00]), Skim::TooLong, "a bin32 of 64 KiB");
        assert_eq!(skim(&[0xd8, 7]), Skim::Incomplete, "a fixext16's payload not there yet");
        assert_eq!(skim(&[0xcb, 0, 0, 0, 0, 0, 0, 0, 0]), Skim::Complete(9));
    }
}
