//! CDR as ROS 2 puts it on the wire: XCDR1 (plain CDR) after a 4-byte encapsulation header.
//!
//! Alignment is counted from the end of the header: a value of n bytes (n = 1, 2, 4, 8)
//! starts at a multiple of n. A string is a `u32` length that counts its terminating NUL,
//! its bytes, then the NUL; a sequence is a `u32` element count, then its elements; a fixed
//! array is its elements alone.

use thiserror::Error;

/// The encapsulation header we write: representation `CDR_LE` (0x0001), options 0.
const HEADER_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// Representation identifier of big-endian plain CDR, which a decoder also accepts.
const REPRESENTATION_BE: [u8; 2] = [0x00, 0x00];
/// Representation identifier of little-endian plain CDR.
const REPRESENTATION_LE: [u8; 2] = [0x00, 0x01];
const HEADER_LEN: usize = 4;

/// Why bytes are not a message of the expected type.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CdrError {
    #[error("{len} bytes are too short for the 4-byte CDR encapsulation header")]
    NoHeader { len: usize },
    #[error("encapsulation {0:02x?} is not plain CDR (0x0000 big-endian or 0x0001 little-endian)")]
    Representation([u8; 2]),
    #[error("the message ends at byte {len} but field `{field}` needs bytes up to {needed}")]
    Truncated { field: &'static str, needed: usize, len: usize },
    #[error("{extra} bytes follow the message (at most 3 bytes of padding may)")]
    TrailingBytes { extra: usize },
    #[error("field `{field}` is {value}, not a finite number")]
    NotFinite { field: &'static str, value: f64 },
}

/// Writes one message; the buffer is the caller's, so a publisher can reuse it.
pub(crate) struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    /// Clears `out` and writes the encapsulation header.
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        out.clear();
        out.extend_from_slice(&HEADER_LE);
        Writer { out }
    }

    fn align(&mut self, size: usize) {
        let offset = self.out.len() - HEADER_LEN;
        let padding = (size - offset % size) % size;
        self.out.resize(self.out.len() + padding, 0);
    }

    pub(crate) fn i32(&mut self, value: i32) {
        self.align(4);
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    pub(crate) fn u32(&mut self, value: u32) {
        self.align(4);
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    pub(crate) fn f64(&mut self, value: f64) {
        self.align(8);
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    /// A sequence's element count, or a string's byte count with its NUL.
    pub(crate) fn count(&mut self, count: usize) {
        self.u32(u32::try_from(count).expect("a CDR sequence or string holds at most u32::MAX elements"));
    }

    pub(crate) fn string(&mut self, value: &str) {
        self.count(value.len() + 1);
        self.out.extend_from_slice(value.as_bytes());
        self.out.push(0);
    }

    pub(crate) fn f64_array(&mut self, values: &[f64]) {
        for &value in values {
            self.f64(value);
        }
    }

    pub(crate) fn f64_sequence(&mut self, values: &[f64]) {
        self.count(values.len());
        self.f64_array(values);
    }
}

/// Reads one message from untrusted bytes: every read is checked against what remains.
pub(crate) struct Reader<'a> {
    body: &'a [u8],
    position: usize,
    little_endian: bool,
}

impl<'a> Reader<'a> {
    /// Checks the encapsulation header; the body starts after it.
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Self, CdrError> {
        let Some((header, body)) = bytes.split_first_chunk::<HEADER_LEN>() else {
            return Err(CdrError::NoHeader { len: bytes.len() });
        };
        let representation = [header[0], header[1]];
        let little_endian = match representation {
            REPRESENTATION_LE => true,
            REPRESENTATION_BE => false,
            other => return Err(CdrError::Representation(other)),
        };
        Ok(Reader { body, position: 0, little_endian })
    }

    fn take<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], CdrError> {
        let start = self.position.next_multiple_of(N);
        let end = start + N;
        let truncated =
            CdrError::Truncated { field, needed: HEADER_LEN + end, len: HEADER_LEN + self.body.len() };
        let bytes = self.body.get(start..end).ok_or(truncated)?;
        self.position = end;
        Ok(bytes.try_into().expect("the range is N bytes long"))
    }

    /// A finite `float64` (a NaN or an infinity names its field).
    pub(crate) fn finite_f64(&mut self, field: &'static str) -> Result<f64, CdrError> {
        let bytes = self.take::<8>(field)?;
        let value = if self.little_endian { f64::from_le_bytes(bytes) } else { f64::from_be_bytes(bytes) };
        if value.is_finite() {
            Ok(value)
        } else {
            Err(CdrError::NotFinite { field, value })
        }
    }

    /// The message must end here, but for the padding some writers add to a multiple of 4.
    pub(crate) fn finish(self) -> Result<(), CdrError> {
        let extra = self.body.len() - self.position;
        if extra > 3 {
            return Err(CdrError::TrailingBytes { extra });
        }
        Ok(())
    }
}
