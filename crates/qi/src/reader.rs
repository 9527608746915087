//! A bounds-checked cursor over a payload, and the little-endian writers: every length read
//! is checked against the bytes that remain before anything is sliced or allocated.

use crate::{DecodeError, EncodeError};

/// A cursor over bytes from the wire.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, position: 0 }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// The next `count` bytes, refused (without allocating) when fewer remain.
    pub fn read_bytes(&mut self, count: u64) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if count > available as u64 {
            return Err(DecodeError::Truncated { at: self.position, needed: count, available });
        }
        let start = self.position;
        self.position += count as usize;
        Ok(&self.bytes[start..self.position])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self.read_bytes(N as u64)?;
        Ok(bytes.try_into().expect("read_bytes returned N bytes"))
    }

    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let at = self.position;
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::InvalidBool { at, value }),
        }
    }

    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        self.array().map(u16::from_le_bytes)
    }

    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }

    pub fn read_u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_le_bytes)
    }

    pub fn read_f32(&mut self) -> Result<f32, DecodeError> {
        self.array().map(f32::from_le_bytes)
    }

    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        self.array().map(f64::from_le_bytes)
    }

    /// A `u32` length then that many bytes (a string, a raw buffer or a signature).
    pub fn read_len_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.read_u32()?;
        self.read_bytes(len.into())
    }

    /// A string that must be UTF-8 (names, signatures, descriptions); `what` names it in
    /// the error.
    pub fn read_string(&mut self, what: &'static str) -> Result<String, DecodeError> {
        let bytes = self.read_len_bytes()?;
        std::str::from_utf8(bytes).map(str::to_owned).map_err(|_| DecodeError::NotUtf8(what))
    }

    /// A `u32` element count, refused when even `min_element_bytes` per element could not
    /// fit in what remains. Elements of no bytes are bounded by the caller's value budget.
    pub fn read_count(&mut self, min_element_bytes: usize) -> Result<u32, DecodeError> {
        let at = self.position;
        let count = self.read_u32()?;
        let available = self.remaining();
        if count as u64 * min_element_bytes as u64 > available as u64 {
            return Err(DecodeError::CountTooLarge { at, count, available });
        }
        Ok(count)
    }

    /// Refuse bytes left after the value.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            left => Err(DecodeError::Trailing(left)),
        }
    }
}

pub(crate) fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// A length that must fit the wire's `u32`.
pub(crate) fn put_len(out: &mut Vec<u8>, what: &'static str, len: usize) -> Result<(), EncodeError> {
    let len32 = u32::try_from(len).map_err(|_| EncodeError::TooLong { what, len })?;
    put_u32(out, len32);
    Ok(())
}

/// A `u32` length then the bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), EncodeError> {
    put_len(out, "string", bytes.len())?;
    out.extend_from_slice(bytes);
    Ok(())
}
