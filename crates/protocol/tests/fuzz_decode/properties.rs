//! The properties every input must satisfy, checked case by case, and the run of one
//! generator on a thread with the broker's stack.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use naobroker_protocol::{DecodeLimits, Envelope, ProtocolError, Value};

use crate::meter::peak_bytes;
use crate::rng::{cases, limits, seed, Rng};

/// Where a case came from, to reproduce it.
pub(crate) struct Case<'a> {
    pub(crate) family: &'a str,
    pub(crate) seed: u64,
    pub(crate) index: usize,
    /// The `NAOBROKER_FUZZ_CASES` that replays the run up to this case.
    pub(crate) replay_cases: usize,
}

impl Case<'_> {
    pub(crate) fn fail(&self, input: &[u8], what: &str) -> ! {
        let what: String = what.chars().take(2000).collect();
        let mut hex = String::new();
        for byte in input.iter().take(512) {
            let _ = write!(hex, "{byte:02x}");
        }
        let more = if input.len() > 512 { "…" } else { "" };
        panic!(
            "{what}\n  family {}, case {}: reproduce with NAOBROKER_FUZZ_SEED={} NAOBROKER_FUZZ_CASES={} \
             cargo test -p naobroker-protocol --test fuzz_decode\n  input ({} bytes): {hex}{more}",
            self.family,
            self.index,
            self.seed,
            self.replay_cases,
            input.len()
        )
    }
}

/// What the run saw, printed at its end (`--nocapture`).
#[derive(Default)]
pub(crate) struct Tally {
    decoded: usize,
    refused: usize,
    too_deep: usize,
    /// The most bytes one decode held, and the size of that input.
    largest_peak: (usize, usize),
}

/// Reading a MessagePack value costs at most four `Value`s per input byte: a one-byte array
/// header gets a `Vec` of at least four slots, a map header of two bytes or more (with a key)
/// at least four pairs; a wide array holds three slots per item while it grows. Plus one read
/// buffer of rmpv's preallocation cap (64 KiB) for a string or binary whose length is a lie.
fn read_bound(input_len: usize) -> usize {
    4 * std::mem::size_of::<Value>() * input_len + (64 << 10) + (4 << 10)
}

/// The longest error message: its fixed text (under 100 characters) and a quoted excerpt of
/// at most 64 bytes of UTF-8.
const MAX_ERROR_CHARS: usize = 200;
const MAX_ERROR_BYTES: usize = 400;

pub(crate) fn check(input: &[u8], limits: &DecodeLimits, case: &Case, tally: &mut Tally) -> Option<Envelope> {
    let (decoded, decode_peak) =
        peak_bytes(|| catch_unwind(AssertUnwindSafe(|| Envelope::decode_limited(input, limits))));
    let decoded = decoded.unwrap_or_else(|_| case.fail(input, "decode_limited panicked"));
    // The direct path for calls, replies and events only ever accepts what the general
    // decoder reads to the same envelope; anything else the general decoder refuses, with
    // its own words.
    let general = catch_unwind(AssertUnwindSafe(|| Envelope::decode_general(input, limits)))
        .unwrap_or_else(|_| case.fail(input, "decode_general panicked"));
    // Compared as text: a NaN inside is not equal to itself.
    if format!("{decoded:?}") != format!("{general:?}") {
        case.fail(input, &format!("decode_limited gave {decoded:?}, the general decoder {general:?}"));
    }
    let (salvaged, salvage_peak) = peak_bytes(|| catch_unwind(|| Envelope::salvage_id(input)));
    let salvaged = salvaged.unwrap_or_else(|_| case.fail(input, "salvage_id panicked"));
    // The reference: reading the MessagePack value alone, at least as deep as the envelope reads.
    let (_, read_peak) = peak_bytes(|| {
        rmpv::decode::read_value_with_max_depth(&mut &input[..], 2 * limits.max_value_depth + 16)
    });
    let bound = read_bound(input.len());
    for (what, peak) in [("reading the value", read_peak), ("salvage_id", salvage_peak)] {
        if peak > bound {
            case.fail(input, &format!("{what} held {peak} bytes, more than {bound}"));
        }
    }
    if input.len() <= limits.max_frame_bytes && decode_peak > read_peak + input.len() + (8 << 10) {
        case.fail(
            input,
            &format!(
                "decode_limited held {decode_peak} bytes, more than reading the value ({read_peak}) \
                 and a copy of the input"
            ),
        );
    }
    tally.largest_peak = tally.largest_peak.max((decode_peak, input.len()));
    match decoded {
        Ok(envelope) => {
            tally.decoded += 1;
            if request_id(&envelope).is_some_and(|id| id != salvaged) {
                case.fail(input, &format!("salvage_id found {salvaged} in {envelope:?}"));
            }
            let encoded = envelope.encode();
            match Envelope::decode_limited(&encoded, limits) {
                // Compared as text: a NaN inside is not equal to itself.
                Ok(again) if format!("{again:?}") == format!("{envelope:?}") && again.encode() == encoded => {
                }
                other => {
                    let (was, became) = (format!("Ok({envelope:?})"), format!("{other:?}"));
                    let from = was.chars().zip(became.chars()).take_while(|(a, b)| a == b).count();
                    let near =
                        |text: &str| text.chars().skip(from.saturating_sub(80)).take(240).collect::<String>();
                    case.fail(
                        input,
                        &format!(
                            "decoded as …{}…, encoded again and read back as …{}…",
                            near(&was),
                            near(&became)
                        ),
                    )
                }
            }
            Some(envelope)
        }
        Err(error) => {
            tally.refused += 1;
            if matches!(error, ProtocolError::TooDeep { .. }) {
                tally.too_deep += 1;
            }
            if matches!(error, ProtocolError::TooLarge { .. }) != (input.len() > limits.max_frame_bytes) {
                case.fail(input, &format!("TooLarge only and always past max_frame_bytes, got {error:?}"));
            }
            let message = error.to_string();
            if message.chars().count() >= MAX_ERROR_CHARS || message.len() >= MAX_ERROR_BYTES {
                case.fail(input, &format!("error message of {} bytes: {message}", message.len()));
            }
            None
        }
    }
}

/// The id of an envelope that carries one (second in its array).
fn request_id(envelope: &Envelope) -> Option<u64> {
    match envelope {
        Envelope::Call { id, .. }
        | Envelope::Post { id, .. }
        | Envelope::Reply { id, .. }
        | Envelope::Error { id, .. }
        | Envelope::Register { id, .. }
        | Envelope::Unregister { id, .. }
        | Envelope::Subscribe { id, .. }
        | Envelope::Unsubscribe { id, .. }
        | Envelope::SubscribeCallback { id, .. }
        | Envelope::UnsubscribeCallback { id, .. } => Some(*id),
        _ => None,
    }
}

/// The stack of the broker's threads (tokio's default, and std's): what no frame may overflow.
const BROKER_STACK_BYTES: usize = 2 << 20;

/// Run `work` on a thread with the broker's stack size, its panic passed on.
pub(crate) fn on_broker_stack(work: impl FnOnce() + Send + 'static) {
    let worker = std::thread::Builder::new().stack_size(BROKER_STACK_BYTES).spawn(work).unwrap();
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

/// Run `family`'s generator `cases()` times and check every input.
pub(crate) fn run(
    family: &'static str,
    salt: u64,
    mut generate: impl FnMut(&mut Rng) -> Vec<u8> + Send + 'static,
) {
    on_broker_stack(move || {
        let seed = seed();
        let mut rng = Rng(seed ^ salt);
        let limits = limits();
        let mut tally = Tally::default();
        let cases = cases();
        for index in 0..cases {
            let input = generate(&mut rng);
            check(&input, &limits, &Case { family, seed, index, replay_cases: index + 1 }, &mut tally);
        }
        println!(
            "{family}: seed {seed}, {cases} cases, {} decoded, {} refused ({} too deep), \
             at most {} bytes held at once (for a {}-byte input)",
            tally.decoded, tally.refused, tally.too_deep, tally.largest_peak.0, tally.largest_peak.1
        );
    });
}
