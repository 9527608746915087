//! A message's bytes in a buffer of their exact size, for the transport to own.
//!
//! `Bytes::from(Vec)` allocates a second block (its reference count) when the vector has
//! room left over, which a buffer sized before encoding always has: a message encoded into a
//! reused scratch buffer and then copied out takes one allocation instead of two.

use std::cell::RefCell;

use bytes::Bytes;

/// Messages longer than this are handed over in their own buffer rather than copied out of
/// the scratch one, which would otherwise keep the largest message's memory for good.
const COPIED_BYTES: usize = 16 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(256));
}

/// The bytes `write` appends to an empty buffer.
pub(crate) fn encoded(write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    SCRATCH.with(|scratch| {
        let Ok(mut buf) = scratch.try_borrow_mut() else {
            let mut own = Vec::new();
            write(&mut own);
            return Bytes::from(own);
        };
        buf.clear();
        write(&mut buf);
        if buf.len() > COPIED_BYTES {
            return Bytes::from(std::mem::replace(&mut *buf, Vec::with_capacity(256)));
        }
        Bytes::copy_from_slice(&buf)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_messages_come_out_whole() {
        assert_eq!(&encoded(|buf| buf.extend_from_slice(b"abc"))[..], b"abc");
        let large = vec![7u8; COPIED_BYTES + 1];
        assert_eq!(&encoded(|buf| buf.extend_from_slice(&large))[..], &large[..]);
        assert_eq!(&encoded(|buf| buf.push(1))[..], &[1]);
        let nested = encoded(|buf| {
            buf.push(1);
            buf.extend_from_slice(&encoded(|inner| inner.push(2)));
        });
        assert_eq!(&nested[..], &[1, 2]);
    }
}
