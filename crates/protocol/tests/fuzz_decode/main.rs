//! Decoder fuzz run: random bytes, mutated envelopes and hostile MessagePack shapes fed to
//! `Envelope::decode_limited` and `Envelope::salvage_id`, each case under a counting allocator.
//!
//! Stable Rust has no libFuzzer, so this is a seeded, coverage-free fuzzer run as a normal test.
//! CI runs a short run; `NAOBROKER_FUZZ_CASES` and `NAOBROKER_FUZZ_SEED` make the long one
//! (docs/fuzzing.md). Properties, for every input: no panic and no stack overflow; memory at its
//! peak linear in the input's size and never more than one copy of the input above what reading
//! the MessagePack value itself takes; every decoded envelope encodes and decodes to itself;
//! error messages short; nesting past the limit refused as `TooDeep`.
#![deny(unsafe_code)]

mod envelopes;
mod hostile;
mod meter;
mod mutate;
mod properties;
mod rng;

use naobroker_protocol::{value_excerpt, DecodeLimits, Envelope, ProtocolError, Value};

use envelopes::{envelope, ENVELOPE_FORMS};
use hostile::{hostile_frame, leaf, nested};
use meter::peak_bytes;
use mutate::mutate;
use properties::{check, on_broker_stack, run, Case, Tally};
use rng::{cases, limits, seed, Rng};

#[test]
fn random_bytes_never_break_the_decoder() {
    run("random bytes", 1, |rng| {
        let len = rng.length(4096);
        let mut bytes = rng.bytes(len);
        // Half start as an envelope would, to get past the first byte more often.
        if rng.one_in(2) && !bytes.is_empty() {
            bytes[0] = 0x90 | rng.below(7) as u8;
            if bytes.len() > 1 {
                bytes[1] = rng.below(16) as u8;
            }
        }
        bytes
    });
}

#[test]
fn mutated_envelopes_never_break_the_decoder() {
    let mut seeds = Rng(seed() ^ 2);
    let limits = limits();
    let corpus: Vec<Vec<u8>> = (0..4 * ENVELOPE_FORMS)
        .map(|form| {
            let original = envelope(&mut seeds, form % ENVELOPE_FORMS);
            let bytes = original.encode();
            let decoded = Envelope::decode_limited(&bytes, &limits);
            assert_eq!(format!("{decoded:?}"), format!("{:?}", Ok::<_, ProtocolError>(original)));
            bytes
        })
        .collect();
    run("mutated envelopes", 3, move |rng| {
        let mut bytes = rng.pick(&corpus).clone();
        let other = rng.pick(&corpus);
        let mutations = if rng.one_in(2) { 1 } else { 2 + rng.below(3) };
        for _ in 0..mutations {
            mutate(rng, &mut bytes, other);
        }
        bytes
    });
}

#[test]
fn hostile_shapes_never_break_the_decoder() {
    run("hostile shapes", 4, hostile_frame);
}

/// An envelope whose value field (every one there is) holds `levels` nested containers
/// around `leaf`.
fn envelopes_nesting(rng: &mut Rng, levels: usize, leaf: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut value = Vec::new();
    nested(rng, &mut value, levels, leaf);
    let frame = |prefix: &[u8], suffix: &[u8]| [prefix, &value, suffix].concat();
    vec![
        ("Call argument", frame(b"\x95\x02\x01\xa1M\xa1m\x92\x01", b"")),
        ("Post argument", frame(b"\x95\x03\x01\xa1M\xa1m\x91", b"")),
        ("Reply value", frame(b"\x93\x04\x01", b"")),
        ("Event value", frame(b"\x94\x06\xa1E", b"\x05")),
        ("Callback value", frame(b"\x95\x0d\xa1M\xa1m\x93\xa1E", b"\xa0\x00")),
        ("Callback message", frame(b"\x95\x0d\xa1M\xa1m\x93\xa1E\xc0", b"\x00")),
    ]
}

#[test]
fn nesting_within_the_limit_is_read_and_far_past_it_refused_as_too_deep() {
    on_broker_stack(|| {
        let mut rng = Rng(seed() ^ 5);
        let mut tally = Tally::default();
        for max_value_depth in [1, 2, 5, 32, 100] {
            let limits = DecodeLimits { max_value_depth, ..limits() };
            for index in 0..cases() / 500 {
                let leaf = leaf(&mut rng);
                let case = Case { family: "nesting", seed: seed(), index, replay_cases: cases() };
                for levels in 0..=max_value_depth {
                    for (field, frame) in envelopes_nesting(&mut rng, levels, &leaf) {
                        if check(&frame, &limits, &case, &mut tally).is_none() {
                            case.fail(
                                &frame,
                                &format!("{field} nested {levels} ≤ {max_value_depth} levels refused"),
                            );
                        }
                    }
                }
                let levels = *rng.pick(&[3, 4, 10, 1_000, 100_000]) + max_value_depth;
                for (field, frame) in envelopes_nesting(&mut rng, levels, &leaf) {
                    let (decoded, _) = peak_bytes(|| Envelope::decode_limited(&frame, &limits));
                    if decoded != Err(ProtocolError::TooDeep { limit: max_value_depth }) {
                        case.fail(&frame, &format!("{field} nested {levels} levels: {decoded:?}"));
                    }
                    check(&frame, &limits, &case, &mut tally);
                }
            }
        }
    });
}

/// An excerpt renders at most 64 bytes of a value whatever its size: it must not
/// build the whole text first (a 16 MiB frame of subnormal floats prints as 600 MB).
#[test]
fn an_excerpt_allocates_little_whatever_the_value() {
    let subnormals = Value::Array(vec![Value::F64(5e-324); 10_000]);
    let nested_wide = Value::Array(vec![Value::Array(vec![Value::Array(vec![Value::Nil; 1_000])]); 10]);
    let map = Value::Map(vec![(subnormals.clone(), nested_wide.clone()); 3]);
    for value in [subnormals, nested_wide, map] {
        let (quoted, peak) = peak_bytes(|| value_excerpt(&value));
        assert!(quoted.chars().count() <= 65, "{quoted}");
        assert!(peak < 4096, "quoting {} took {peak} bytes", naobroker_protocol::type_name_of(&value));
    }
}

/// Inputs that broke the decoder before it was fixed, each with what it did.
#[test]
fn regressions_found_by_this_fuzzer() {
    on_broker_stack(|| {
        let limits = limits();
        let mut tally = Tally::default();
        let case = |index| Case { family: "regressions", seed: seed(), index, replay_cases: cases() };
        // An error message naming a 36 KB array of subnormal floats rendered all of it (326
        // characters each, 1.3 MB) before cutting it to 64.
        let mut frame = b"\x93\x05\x01\xdc\x0f\xa0".to_vec();
        for _ in 0..4_000 {
            frame.extend([0xcb, 0, 0, 0, 0, 0, 0, 0, 1]);
        }
        assert!(check(&frame, &limits, &case(0), &mut tally).is_none());
        // 100 000 nested arrays: refused as too deep, then salvage_id read them all (rmpv's depth
        // limit of 1024 overflows a 2 MiB stack in a debug build) and the process aborted.
        let mut frame = vec![0x91; 100_000];
        frame.push(0xc0);
        assert_eq!(Envelope::decode_limited(&frame, &limits), Err(ProtocolError::TooDeep { limit: 32 }));
        assert_eq!(Envelope::salvage_id(&frame), 0);
        check(&frame, &limits, &case(1), &mut tally);
        // A call whose argument is nested 600 levels: salvage_id read the whole frame, so its
        // error reply went to id 0 instead of the call (and a debug build overflowed its stack).
        let mut frame = b"\x95\x02\x09\xa1M\xa1m\x91".to_vec();
        frame.extend([0x91; 600]);
        frame.push(0xc0);
        assert_eq!(Envelope::decode_limited(&frame, &limits), Err(ProtocolError::TooDeep { limit: 32 }));
        assert_eq!(Envelope::salvage_id(&frame), 9);
        // max_value_depth counted rmpv's levels, two per container: a value nested 32 levels
        // was refused under the default limit, a scalar argument under a limit of 1.
        let mut frame = b"\x95\x02\x09\xa1M\xa1m\x91".to_vec();
        frame.extend([0x91; 32]);
        frame.extend(b"\xa1x");
        assert!(check(&frame, &limits, &case(2), &mut tally).is_some());
        let frame = b"\x95\x02\x09\xa1M\xa1m\x91\x01";
        let shallow = DecodeLimits { max_value_depth: 1, ..limits };
        assert!(check(frame, &shallow, &case(3), &mut tally).is_some());
        // A string that is not UTF-8 was read, then written back as binary: it changed type on
        // its way through the broker.
        let frame = b"\x93\x04\x01\xa2\xff\xfe";
        assert_eq!(
            Envelope::decode_limited(frame, &limits),
            Err(ProtocolError::Malformed("a string is not valid UTF-8".into()))
        );
    });
}
