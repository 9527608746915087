//! The messages of every call and event read straight from the frame's bytes: a `Call` or
//! `Post` with its module and method names left in the frame (borrowed), a `Reply` with its
//! value, an `Event` with its name and value; no value tree of the envelope is built first,
//! and no string goes through `read_to_end`.
//!
//! This path only ever accepts: a frame it does not take whole and well formed (another
//! kind, an envelope header other than a fixarray of 5 or 3, a kind or id written as a
//! signed integer, an ext value, bad UTF-8, nesting past the limit, a length past the end,
//! trailing bytes) goes to the general decoder in `decode.rs`,
//! which finds what is wrong and names it. So every bound and every error message is the
//! general decoder's, and a frame this path accepts is one the general decoder would have
//! decoded to the same envelope (`tests.rs` compares both on hostile and mutated frames).

use rmpv::{Utf8String, Value};

use super::Envelope;

/// A `Call` or `Post` whose names still point into the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFrame<'a> {
    pub id: u64,
    pub module: &'a str,
    pub method: &'a str,
    pub args: Vec<Value>,
    /// `Post`: run it as a task, answered with the task's id.
    pub post: bool,
}

/// One decoded frame: a call with borrowed names, or any envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded<'a> {
    Call(CallFrame<'a>),
    Envelope(Envelope),
}

impl Decoded<'_> {
    /// The envelope, names copied out of the frame.
    pub fn into_envelope(self) -> Envelope {
        match self {
            Decoded::Call(CallFrame { id, module, method, args, post: false }) => {
                Envelope::Call { id, module: module.to_owned(), method: method.to_owned(), args }
            }
            Decoded::Call(CallFrame { id, module, method, args, post: true }) => {
                Envelope::Post { id, module: module.to_owned(), method: method.to_owned(), args }
            }
            Decoded::Envelope(envelope) => envelope,
        }
    }
}

/// Why the direct path left a frame to the general decoder: never shown, the general
/// decoder names what is wrong.
pub(super) struct Declined;

type Read<T> = Result<T, Declined>;

/// `frame` as a call, a reply or an event, when it is one read whole and well formed.
/// `depth` is what the general decoder gives rmpv for the whole envelope.
pub(super) fn call_reply_or_event(frame: &[u8], depth: u16) -> Read<Decoded<'_>> {
    // The general decoder's depth is never below 7 (`decode.rs`); the names below take 5.
    if depth < 7 {
        return Err(Declined);
    }
    let mut cursor = Cursor(frame);
    let decoded = match cursor.byte()? {
        0x95 => {
            let post = match cursor.byte()? {
                2 => false,
                3 => true,
                _ => return Err(Declined),
            };
            let id = cursor.uint()?;
            let module = cursor.str()?;
            let method = cursor.str()?;
            let len = cursor.array_len()?;
            // rmpv spends 2 of its depth on the envelope's array and 2 on the argument list's.
            let depth = depth.checked_sub(4).ok_or(Declined)?;
            // Grown as items are read, never reserved from a declared length (as rmpv reads
            // arrays): a declared length past the frame's end reserves nothing.
            let mut args = Vec::new();
            for _ in 0..len {
                args.push(cursor.value(depth)?);
            }
            Decoded::Call(CallFrame { id, module, method, args, post })
        }
        0x93 if cursor.0.first() == Some(&(Envelope::REPLY as u8)) => {
            cursor.byte()?;
            let id = cursor.uint()?;
            let value = cursor.value(depth.checked_sub(2).ok_or(Declined)?)?;
            Decoded::Envelope(Envelope::Reply { id, value })
        }
        // An event with or without its trailing `lost` count; the name takes 5 of the depth.
        header @ (0x93 | 0x94) if cursor.0.first() == Some(&(Envelope::EVENT as u8)) => {
            cursor.byte()?;
            let name = cursor.str()?.to_owned();
            let value = cursor.value(depth.checked_sub(2).ok_or(Declined)?)?;
            let lost = if header == 0x94 { cursor.uint()? } else { 0 };
            Decoded::Envelope(Envelope::Event { name, value, lost })
        }
        _ => return Err(Declined),
    };
    match cursor.0.is_empty() {
        true => Ok(decoded),
        false => Err(Declined),
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, len: usize) -> Read<&'a [u8]> {
        if len > self.0.len() {
            return Err(Declined);
        }
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(taken)
    }

    fn byte(&mut self) -> Read<u8> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Read<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes taken"))
    }

    /// An unsigned integer in any of MessagePack's forms.
    fn uint(&mut self) -> Read<u64> {
        Ok(match self.byte()? {
            small @ 0x00..=0x7f => small.into(),
            0xcc => self.byte()?.into(),
            0xcd => u16::from_be_bytes(self.be()?).into(),
            0xce => u32::from_be_bytes(self.be()?).into(),
            0xcf => u64::from_be_bytes(self.be()?),
            _ => return Err(Declined),
        })
    }

    /// A string, left in the frame.
    fn str(&mut self) -> Read<&'a str> {
        let len = match self.byte()? {
            marker @ 0xa0..=0xbf => usize::from(marker & 0x1f),
            marker => self.str_len(marker)?,
        };
        std::str::from_utf8(self.take(len)?).map_err(|_| Declined)
    }

    fn str_len(&mut self, marker: u8) -> Read<usize> {
        self.sized_len(marker, [0xd9, 0xda, 0xdb])
    }

    /// The length after one of the three markers `[8-bit, 16-bit, 32-bit]` of a family.
    fn sized_len(&mut self, marker: u8, markers: [u8; 3]) -> Read<usize> {
        Ok(match marker {
            _ if marker == markers[0] => self.byte()?.into(),
            _ if marker == markers[1] => u16::from_be_bytes(self.be()?).into(),
            _ if marker == markers[2] => u32::from_be_bytes(self.be()?) as usize,
            _ => return Err(Declined),
        })
    }

    fn array_len(&mut self) -> Read<usize> {
        match self.byte()? {
            marker @ 0x90..=0x9f => Ok(usize::from(marker & 0x0f)),
            0xdc => Ok(u16::from_be_bytes(self.be()?).into()),
            0xdd => Ok(u32::from_be_bytes(self.be()?) as usize),
            _ => Err(Declined),
        }
    }

    /// Any value, as rmpv reads it, with rmpv's depth accounting: 1 for the value, 1 more
    /// for an array or a map and for each of a string's, a binary's or an ext's inner steps.
    /// Strings must be UTF-8 (what the general decoder checks after reading).
    fn value(&mut self, depth: u16) -> Read<Value> {
        let depth = depth.checked_sub(1).ok_or(Declined)?;
        let marker = self.byte()?;
        Ok(match marker {
            0x00..=0x7f => Value::from(marker),
            0xe0..=0xff => Value::from(marker as i8),
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xcc => Value::from(self.byte()?),
            0xcd => Value::from(u16::from_be_bytes(self.be()?)),
            0xce => Value::from(u32::from_be_bytes(self.be()?)),
            0xcf => Value::from(u64::from_be_bytes(self.be()?)),
            0xd0 => Value::from(i8::from_be_bytes(self.be()?)),
            0xd1 => Value::from(i16::from_be_bytes(self.be()?)),
            0xd2 => Value::from(i32::from_be_bytes(self.be()?)),
            0xd3 => Value::from(i64::from_be_bytes(self.be()?)),
            0xca => Value::F32(f32::from_be_bytes(self.be()?)),
            0xcb => Value::F64(f64::from_be_bytes(self.be()?)),
            0xa0..=0xbf | 0xd9..=0xdb => {
                // The value's step, then the string's and its bytes'.
                depth.checked_sub(2).ok_or(Declined)?;
                let len = match marker {
                    0xa0..=0xbf => usize::from(marker & 0x1f),
                    _ => self.str_len(marker)?,
                };
                let text = std::str::from_utf8(self.take(len)?).map_err(|_| Declined)?;
                Value::String(Utf8String::from(text))
            }
            0xc4..=0xc6 => {
                depth.checked_sub(1).ok_or(Declined)?;
                let len = self.sized_len(marker, [0xc4, 0xc5, 0xc6])?;
                Value::Binary(self.take(len)?.to_vec())
            }
            0x90..=0x9f | 0xdc | 0xdd => {
                let depth = depth.checked_sub(1).ok_or(Declined)?;
                let len = match marker {
                    0x90..=0x9f => usize::from(marker & 0x0f),
                    0xdc => u16::from_be_bytes(self.be()?).into(),
                    _ => u32::from_be_bytes(self.be()?) as usize,
                };
                let mut items = Vec::new();
                for _ in 0..len {
                    items.push(self.value(depth)?);
                }
                Value::Array(items)
            }
            0x80..=0x8f | 0xde | 0xdf => {
                let depth = depth.checked_sub(1).ok_or(Declined)?;
                let len = match marker {
                    0x80..=0x8f => usize::from(marker & 0x0f),
                    0xde => u16::from_be_bytes(self.be()?).into(),
                    _ => u32::from_be_bytes(self.be()?) as usize,
                };
                let mut pairs = Vec::new();
                for _ in 0..len {
                    let key = self.value(depth)?;
                    pairs.push((key, self.value(depth)?));
                }
                Value::Map(pairs)
            }
            // Ext and anything rarer: the general decoder reads them.
            _ => return Err(Declined),
        })
    }
}
