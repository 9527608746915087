//! Mutations of valid encodings: bits flipped, bytes inserted, cut or spliced, and length
//! fields that lie, found where the headers are in a valid encoding.

use crate::rng::Rng;

#[derive(Clone, Copy)]
pub(crate) enum Shape {
    Array,
    Map,
    Str,
    Bin,
    Ext,
}

/// A length-carrying header: the element starts at `at`, its header is `header_len` bytes.
struct Header {
    at: usize,
    header_len: usize,
    shape: Shape,
}

/// The headers of the MessagePack value at `at` in `bytes`, and where it ends; `None` when
/// the bytes (already mutated) do not parse.
fn headers(bytes: &[u8], at: usize, found: &mut Vec<Header>) -> Option<usize> {
    let be = |from: usize, len: usize| {
        let field = bytes.get(from..from.checked_add(len)?)?;
        Some(field.iter().fold(0usize, |n, b| n << 8 | *b as usize))
    };
    let marker = *bytes.get(at)?;
    let (shape, header_len, count) = match marker {
        0x00..=0x7f | 0xe0..=0xff | 0xc0..=0xc3 => return Some(at + 1),
        0xcc | 0xd0 => return Some(at + 2),
        0xcd | 0xd1 => return Some(at + 3),
        0xca | 0xce | 0xd2 => return Some(at + 5),
        0xcb | 0xcf | 0xd3 => return Some(at + 9),
        0x80..=0x8f => (Shape::Map, 1, (marker & 0x0f) as usize),
        0x90..=0x9f => (Shape::Array, 1, (marker & 0x0f) as usize),
        0xa0..=0xbf => (Shape::Str, 1, (marker & 0x1f) as usize),
        0xd9 => (Shape::Str, 2, be(at + 1, 1)?),
        0xda => (Shape::Str, 3, be(at + 1, 2)?),
        0xdb => (Shape::Str, 5, be(at + 1, 4)?),
        0xc4 => (Shape::Bin, 2, be(at + 1, 1)?),
        0xc5 => (Shape::Bin, 3, be(at + 1, 2)?),
        0xc6 => (Shape::Bin, 5, be(at + 1, 4)?),
        0xd4..=0xd8 => (Shape::Ext, 1, 1 << (marker - 0xd4)),
        0xc7 => (Shape::Ext, 2, be(at + 1, 1)?),
        0xc8 => (Shape::Ext, 3, be(at + 1, 2)?),
        0xc9 => (Shape::Ext, 5, be(at + 1, 4)?),
        0xdc => (Shape::Array, 3, be(at + 1, 2)?),
        0xdd => (Shape::Array, 5, be(at + 1, 4)?),
        0xde => (Shape::Map, 3, be(at + 1, 2)?),
        0xdf => (Shape::Map, 5, be(at + 1, 4)?),
    };
    found.push(Header { at, header_len, shape });
    let body = at + header_len;
    let end = match shape {
        Shape::Str | Shape::Bin => body + count,
        Shape::Ext => body + 1 + count,
        Shape::Array => (0..count).try_fold(body, |next, _| headers(bytes, next, found))?,
        Shape::Map => (0..2 * count).try_fold(body, |next, _| headers(bytes, next, found))?,
    };
    (end <= bytes.len()).then_some(end)
}

/// Write the header of `shape` claiming `count`, in its `width`-byte length form (0: the fix
/// form), or the next wider one that holds `count`.
pub(crate) fn write_header(out: &mut Vec<u8>, shape: Shape, count: usize, width: usize) {
    let (fix, forms): (Option<(u8, usize)>, [u8; 3]) = match shape {
        Shape::Array => (Some((0x90, 15)), [0, 0xdc, 0xdd]),
        Shape::Map => (Some((0x80, 15)), [0, 0xde, 0xdf]),
        Shape::Str => (Some((0xa0, 31)), [0xd9, 0xda, 0xdb]),
        Shape::Bin => (None, [0xc4, 0xc5, 0xc6]),
        Shape::Ext => (None, [0xc7, 0xc8, 0xc9]),
    };
    match (width, fix) {
        (0, Some((base, max))) if count <= max => out.push(base | count as u8),
        (0 | 1, _) if forms[0] != 0 && count <= 0xff => out.extend([forms[0], count as u8]),
        (0..=2, _) if count <= 0xffff => {
            out.push(forms[1]);
            out.extend((count as u16).to_be_bytes());
        }
        _ => {
            out.push(forms[2]);
            out.extend((count.min(u32::MAX as usize) as u32).to_be_bytes());
        }
    }
}

/// Lengths a lying header claims.
pub(crate) fn claim(rng: &mut Rng, honest: usize) -> usize {
    match rng.below(8) {
        0 => 0,
        1 => honest + 1,
        2 => honest.saturating_sub(1),
        3 => u32::MAX as usize,
        4 => 1 << 31,
        5 => 0xffff,
        6 => 1 << rng.below(32),
        _ => rng.below(1 << 20),
    }
}

const INTERESTING_BYTES: &[u8] = &[
    0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc4, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcf,
    0xd3, 0xd4, 0xd8, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff,
];

pub(crate) fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8]) {
    let spot = |rng: &mut Rng, bytes: &Vec<u8>| rng.below(bytes.len().max(1));
    match rng.below(9) {
        0 if !bytes.is_empty() => {
            let at = spot(rng, bytes);
            bytes[at] ^= 1 << rng.below(8);
        }
        1 if !bytes.is_empty() => {
            let at = spot(rng, bytes);
            bytes[at] = *rng.pick(INTERESTING_BYTES);
        }
        2 => {
            let at = rng.below(bytes.len() + 1);
            let len = 1 + rng.below(4);
            let inserted = rng.bytes(len);
            bytes.splice(at..at, inserted);
        }
        3 if !bytes.is_empty() => {
            let at = spot(rng, bytes);
            let end = (at + 1 + rng.below(4)).min(bytes.len());
            bytes.drain(at..end);
        }
        4 => {
            let at = rng.below(bytes.len() + 1);
            bytes.truncate(at);
        }
        5 => {
            let cut = rng.below(bytes.len() + 1);
            let from = rng.below(other.len() + 1);
            bytes.truncate(cut);
            bytes.extend_from_slice(&other[from..]);
        }
        6 if !bytes.is_empty() => {
            let at = spot(rng, bytes);
            let end = (at + 1 + rng.below(32)).min(bytes.len());
            let chunk = bytes[at..end].to_vec();
            let to = rng.below(bytes.len() + 1);
            bytes.splice(to..to, chunk);
        }
        _ => {
            // A length field that lies, in any of its widths, when the bytes still parse.
            let mut found = Vec::new();
            if headers(bytes, 0, &mut found).is_none() || found.is_empty() {
                return;
            }
            let header = rng.pick(&found);
            let mut rewritten = Vec::new();
            write_header(&mut rewritten, header.shape, claim(rng, 4), rng.below(4));
            bytes.splice(header.at..header.at + header.header_len, rewritten);
        }
    }
}
