//! A streaming MessagePack reader over a byte slice: value headers and payloads, saying
//! `Incomplete` when the slice ends early. It never allocates and reads no length it was
//! not asked to (callers bound every count before looping over it).

use crate::error::{DecodeError, ValueKind};

/// A value's header: scalars whole, the lengths of texts, binaries, arrays and maps (whose
/// contents follow), the payload length of extensions (their type byte included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Header {
    Nil,
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float32(f32),
    Float64(f64),
    Text(u32),
    Binary(u32),
    Array(u32),
    Map(u32),
    Extension(u32),
}

impl Header {
    pub(crate) fn kind(self) -> ValueKind {
        match self {
            Header::Nil => ValueKind::Nil,
            Header::Bool(_) => ValueKind::Bool,
            Header::Signed(_) | Header::Unsigned(_) => ValueKind::Integer,
            Header::Float32(_) | Header::Float64(_) => ValueKind::Float,
            Header::Text(_) => ValueKind::Text,
            Header::Binary(_) => ValueKind::Binary,
            Header::Array(_) => ValueKind::Array,
            Header::Map(_) => ValueKind::Map,
            Header::Extension(_) => ValueKind::Extension,
        }
    }

    /// A number's value, whatever its width.
    pub(crate) fn number(self) -> Option<f64> {
        match self {
            Header::Signed(value) => Some(value as f64),
            Header::Unsigned(value) => Some(value as f64),
            Header::Float32(value) => Some(f64::from(value)),
            Header::Float64(value) => Some(value),
            _ => None,
        }
    }
}

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, position: 0 }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    pub(crate) fn take(&mut self, count: u32) -> Result<&'a [u8], DecodeError> {
        let count = count as usize;
        let rest = &self.bytes[self.position..];
        if rest.len() < count {
            return Err(DecodeError::Incomplete);
        }
        self.position += count;
        Ok(&rest[..count])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N as u32)?);
        Ok(out)
    }

    fn length8(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from(self.array::<1>()?[0]))
    }

    fn length16(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from(u16::from_be_bytes(self.array()?)))
    }

    fn length32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// The next value's header; its payload (text bytes, elements) is left to read.
    pub(crate) fn header(&mut self) -> Result<Header, DecodeError> {
        let marker = self.array::<1>()?[0];
        let header = match marker {
            0x00..=0x7f => Header::Signed(i64::from(marker)),
            0x80..=0x8f => Header::Map(u32::from(marker & 0x0f)),
            0x90..=0x9f => Header::Array(u32::from(marker & 0x0f)),
            0xa0..=0xbf => Header::Text(u32::from(marker & 0x1f)),
            0xc0 => Header::Nil,
            0xc1 => return Err(DecodeError::InvalidMarker),
            0xc2 => Header::Bool(false),
            0xc3 => Header::Bool(true),
            0xc4 => Header::Binary(self.length8()?),
            0xc5 => Header::Binary(self.length16()?),
            0xc6 => Header::Binary(self.length32()?),
            0xc7 => Header::Extension(self.length8()?.saturating_add(1)),
            0xc8 => Header::Extension(self.length16()?.saturating_add(1)),
            0xc9 => Header::Extension(self.length32()?.saturating_add(1)),
            0xca => Header::Float32(f32::from_be_bytes(self.array()?)),
            0xcb => Header::Float64(f64::from_be_bytes(self.array()?)),
            0xcc => Header::Unsigned(u64::from(self.array::<1>()?[0])),
            0xcd => Header::Unsigned(u64::from(u16::from_be_bytes(self.array()?))),
            0xce => Header::Unsigned(u64::from(u32::from_be_bytes(self.array()?))),
            0xcf => Header::Unsigned(u64::from_be_bytes(self.array()?)),
            0xd0 => Header::Signed(i64::from(i8::from_be_bytes(self.array()?))),
            0xd1 => Header::Signed(i64::from(i16::from_be_bytes(self.array()?))),
            0xd2 => Header::Signed(i64::from(i32::from_be_bytes(self.array()?))),
            0xd3 => Header::Signed(i64::from_be_bytes(self.array()?)),
            0xd4 => Header::Extension(2),
            0xd5 => Header::Extension(3),
            0xd6 => Header::Extension(5),
            0xd7 => Header::Extension(9),
            0xd8 => Header::Extension(17),
            0xd9 => Header::Text(self.length8()?),
            0xda => Header::Text(self.length16()?),
            0xdb => Header::Text(self.length32()?),
            0xdc => Header::Array(self.length16()?),
            0xdd => Header::Array(self.length32()?),
            0xde => Header::Map(self.length16()?),
            0xdf => Header::Map(self.length32()?),
            0xe0..=0xff => Header::Signed(i64::from(marker as i8)),
        };
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(bytes: &[u8]) -> Result<Header, DecodeError> {
        Reader::new(bytes).header()
    }

    #[test]
    fn reads_every_header_shape() {
        assert_eq!(header(&[0x05]), Ok(Header::Signed(5)));
        assert_eq!(header(&[0xff]), Ok(Header::Signed(-1)));
        assert_eq!(header(&[0x8d]), Ok(Header::Map(13)));
        assert_eq!(header(&[0xdc, 0x00, 0x19]), Ok(Header::Array(25)));
        assert_eq!(header(&[0xdd, 0xff, 0xff, 0xff, 0xff]), Ok(Header::Array(u32::MAX)));
        assert_eq!(header(&[0xca, 0x3f, 0x80, 0, 0]), Ok(Header::Float32(1.0)));
        assert_eq!(header(&[0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]), Ok(Header::Float64(1.0)));
        assert_eq!(header(&[0xcd, 0x01, 0x00]), Ok(Header::Unsigned(256)));
        assert_eq!(header(&[0xd0, 0x80]), Ok(Header::Signed(-128)));
        assert_eq!(header(&[0xd9, 0x20]), Ok(Header::Text(32)));
        assert_eq!(header(&[0xc7, 0x03]), Ok(Header::Extension(4)));
        assert_eq!(header(&[0xc3]), Ok(Header::Bool(true)));
        assert_eq!(header(&[0xc1]), Err(DecodeError::InvalidMarker));
        assert_eq!(header(&[0xca, 0x3f]), Err(DecodeError::Incomplete));
        assert_eq!(header(&[]), Err(DecodeError::Incomplete));
    }

    #[test]
    fn take_says_incomplete_without_moving() {
        let mut reader = Reader::new(&[1, 2, 3]);
        assert_eq!(reader.take(2), Ok(&[1u8, 2][..]));
        assert_eq!(reader.take(u32::MAX), Err(DecodeError::Incomplete));
        assert_eq!(reader.position(), 2);
    }
}
