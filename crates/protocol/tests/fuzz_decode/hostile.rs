//! Hostile MessagePack written byte by byte: lying lengths, deep nesting, odd maps, ext
//! types, wide arrays, strings that are not UTF-8, in envelope-shaped frames.

use naobroker_protocol::Value;

use crate::envelopes::{integer, text, value, values};
use crate::mutate::{claim, write_header, Shape};
use crate::rng::Rng;

/// A container level opening: `[x]`, `{nil: x}` or `{x: nil}` in any width, the inner value
/// next; whether a nil must follow that inner value.
fn open_level(rng: &mut Rng, out: &mut Vec<u8>) -> bool {
    let width = rng.below(4);
    match rng.below(4) {
        0 | 1 => {
            write_header(out, Shape::Array, 1, width);
            false
        }
        2 => {
            write_header(out, Shape::Map, 1, width);
            out.push(0xc0);
            false
        }
        _ => {
            write_header(out, Shape::Map, 1, width);
            true
        }
    }
}

/// `levels` nested containers around a leaf. Up to 64 random levels, repeated: a nesting
/// 100 000 deep costs little to write.
pub(crate) fn nested(rng: &mut Rng, out: &mut Vec<u8>, levels: usize, leaf: &[u8]) {
    let block_levels = levels.clamp(1, 64);
    let mut block = Vec::new();
    let mut nils_in_block = 0;
    for _ in 0..block_levels {
        nils_in_block += usize::from(open_level(rng, &mut block));
    }
    let repeats = levels / block_levels;
    let mut nils = nils_in_block * repeats;
    for _ in 0..repeats {
        out.extend_from_slice(&block);
    }
    for _ in 0..levels % block_levels {
        nils += usize::from(open_level(rng, out));
    }
    out.extend_from_slice(leaf);
    out.extend(std::iter::repeat_n(0xc0, nils));
}

/// Leaves of every kind: scalars, strings, binary, ext, empty containers.
pub(crate) fn leaf(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(7) {
        0 => out.push(0xc0),
        1 => out.extend([0xcb, 0, 0, 0, 0, 0, 0, 0, 1]),
        2 => out.extend([0xa3, b'a', b'b', b'c']),
        3 => out.extend([0xc4, 2, 1, 2]),
        4 => out.extend([0xd5, 0xff, 1, 2]),
        5 => out.push(0x90),
        _ => out.push(0x80),
    }
    out
}

/// Items of wide arrays: floats whose text form is long (a subnormal prints as 326
/// characters), and small items that cost a `Value` per byte.
const WIDE_ITEMS: &[&[u8]] = &[
    &[0xcb, 0, 0, 0, 0, 0, 0, 0, 1],
    &[0xc0],
    &[0xa0],
    &[0x90],
    &[0x91, 0x91, 0x91, 0x01],
    &[0xca, 0, 0, 0, 1],
];

/// A value meant to hurt: a lying length, deep nesting, odd maps, ext types, wide arrays.
fn hostile_value(rng: &mut Rng, out: &mut Vec<u8>) {
    match rng.below(8) {
        0 => {
            let shape = *rng.pick(&[Shape::Array, Shape::Map, Shape::Str, Shape::Bin, Shape::Ext]);
            let claimed = claim(rng, 0).max(1);
            write_header(out, shape, claimed, 1 + rng.below(3));
            let tail = rng.length(64);
            out.extend(rng.bytes(tail));
        }
        1 => {
            let levels = *rng.pick(&[33, 34, 35, 36, 40, 64, 100, 600, 1_000, 10_000, 100_000]);
            let leaf = leaf(rng);
            nested(rng, out, levels, &leaf);
        }
        2 => {
            let pairs = rng.length(16);
            write_header(out, Shape::Map, pairs, rng.below(4));
            for _ in 0..pairs {
                let key = value(rng, 2);
                rmpv::encode::write_value(out, &key).unwrap();
                let value = value(rng, 1);
                rmpv::encode::write_value(out, &value).unwrap();
            }
        }
        3 => {
            let len = *rng.pick(&[0, 1, 2, 4, 8, 16, 255, 256, 70_000]);
            let honest = !rng.one_in(4);
            let claimed = if honest { len } else { claim(rng, len) };
            match (claimed, rng.below(2)) {
                (1 | 2 | 4 | 8 | 16, 0) => out.push(0xd4 + claimed.trailing_zeros() as u8),
                _ => write_header(out, Shape::Ext, claimed, 1 + rng.below(3)),
            }
            out.push(rng.next() as u8);
            out.extend(rng.bytes(len));
        }
        4 => {
            // Wide arrays: what an error excerpt must not render whole.
            let items = *rng.pick(&[10, 100, 1_000, 4_000]);
            let item = *rng.pick(WIDE_ITEMS);
            write_header(out, Shape::Array, items, 2);
            for _ in 0..items {
                out.extend_from_slice(item);
            }
        }
        5 => {
            // Strings that are not UTF-8, or whose text is long.
            let len = rng.length(300);
            let mut bytes: Vec<u8> =
                (0..len).map(|_| *rng.pick(&[0xff, 0xc3, 0xa9, b'a', 0xf0, 0x9f])).collect();
            if rng.one_in(2) {
                bytes = "🤖".repeat(len).into_bytes();
            }
            write_header(out, Shape::Str, bytes.len(), rng.below(4));
            out.extend(bytes);
        }
        6 => out.push(*rng.pick(&[0xc1, 0xc0, 0xff, 0x00])),
        _ => {
            let honest = value(rng, 3);
            rmpv::encode::write_value(out, &honest).unwrap();
        }
    }
}

/// An envelope-shaped array (any kind, right or wrong field count) with hostile fields, or a
/// hostile value alone.
pub(crate) fn hostile_frame(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    if rng.one_in(8) {
        hostile_value(rng, &mut out);
        return out;
    }
    let fields = rng.below(7);
    let claimed = if rng.one_in(8) { claim(rng, fields + 1) } else { fields + 1 };
    write_header(&mut out, Shape::Array, claimed, rng.below(4));
    out.push(rng.below(16) as u8);
    for _ in 0..fields {
        if rng.one_in(3) {
            hostile_value(rng, &mut out);
        } else {
            let field = match rng.below(4) {
                0 => integer(rng),
                1 => Value::from(text(rng)),
                2 => Value::Array(values(rng)),
                _ => value(rng, 2),
            };
            rmpv::encode::write_value(&mut out, &field).unwrap();
        }
    }
    out
}
