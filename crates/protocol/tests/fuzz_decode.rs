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

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use naobroker_protocol::{value_excerpt, DecodeLimits, Envelope, MethodInfo, ProtocolError, Role, Value};

// ---------------------------------------------------------------------------------------------
// Counting allocator: the peak of live bytes on this thread while a case runs.

#[derive(Clone, Copy)]
struct Meter {
    counting: bool,
    live: isize,
    peak: isize,
}

thread_local! {
    static METER: Cell<Meter> = const { Cell::new(Meter { counting: false, live: 0, peak: 0 }) };
}

/// Count `grown` bytes coming, then `shrunk` going: a reallocation holds both at its peak.
fn note(grown: usize, shrunk: usize) {
    let _ = METER.try_with(|meter| {
        let mut state = meter.get();
        if state.counting {
            state.live += grown as isize;
            state.peak = state.peak.max(state.live);
            state.live -= shrunk as isize;
            meter.set(state);
        }
    });
}

struct CountingAllocator;

// The one exception to `deny(unsafe_code)` here: a global allocator is an unsafe trait. This
// one forwards every call to the system allocator unchanged and only counts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, layout.size());
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size, layout.size());
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Run `work` and return its result with the most bytes it held allocated at once.
fn peak_bytes<T>(work: impl FnOnce() -> T) -> (T, usize) {
    METER.with(|meter| meter.set(Meter { counting: true, live: 0, peak: 0 }));
    let result = work();
    let peak = METER.with(|meter| {
        let state = meter.get();
        meter.set(Meter { counting: false, ..state });
        state.peak
    });
    (result, peak.max(0) as usize)
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness (SplitMix64), and the run's size.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// A length, mostly small, sometimes up to `max`.
    fn length(&mut self, max: usize) -> usize {
        let at_most = |n: usize| n.min(max + 1);
        match self.below(8) {
            0..=4 => self.below(at_most(8)),
            5 | 6 => self.below(at_most(64)),
            _ => self.below(max + 1),
        }
    }
}

/// Cases per family: a few seconds in CI unless `NAOBROKER_FUZZ_CASES` asks for more.
fn cases() -> usize {
    std::env::var("NAOBROKER_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000)
}

/// The run's seed: fixed in CI, so that a failure there reproduces anywhere.
fn seed() -> u64 {
    std::env::var("NAOBROKER_FUZZ_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x6e61_6f62_726f_6b72)
}

/// The default limits, with frames capped where the generators can cross the cap.
fn limits() -> DecodeLimits {
    DecodeLimits { max_frame_bytes: 1 << 20, ..DecodeLimits::default() }
}

// ---------------------------------------------------------------------------------------------
// The properties every input must satisfy.

/// Where a case came from, to reproduce it.
struct Case<'a> {
    family: &'a str,
    seed: u64,
    index: usize,
    /// The `NAOBROKER_FUZZ_CASES` that replays the run up to this case.
    replay_cases: usize,
}

impl Case<'_> {
    fn fail(&self, input: &[u8], what: &str) -> ! {
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
struct Tally {
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

fn check(input: &[u8], limits: &DecodeLimits, case: &Case, tally: &mut Tally) -> Option<Envelope> {
    let (decoded, decode_peak) =
        peak_bytes(|| catch_unwind(AssertUnwindSafe(|| Envelope::decode_limited(input, limits))));
    let decoded = decoded.unwrap_or_else(|_| case.fail(input, "decode_limited panicked"));
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
        | Envelope::Unsubscribe { id, .. } => Some(*id),
        _ => None,
    }
}

/// The stack of the broker's threads (tokio's default, and std's): what no frame may overflow.
const BROKER_STACK_BYTES: usize = 2 << 20;

/// Run `work` on a thread with the broker's stack size, its panic passed on.
fn on_broker_stack(work: impl FnOnce() + Send + 'static) {
    let worker = std::thread::Builder::new().stack_size(BROKER_STACK_BYTES).spawn(work).unwrap();
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

/// Run `family`'s generator `cases()` times and check every input.
fn run(family: &'static str, salt: u64, mut generate: impl FnMut(&mut Rng) -> Vec<u8> + Send + 'static) {
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

// ---------------------------------------------------------------------------------------------
// Valid envelopes of every kind, with random contents.

fn text(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &["a", "Z", "/", "_", " ", "é", "ü", "日本", "🤖", "\0", "\u{7f}", "\n", "\""];
    let len = rng.length(300);
    (0..len).map(|_| *rng.pick(PIECES)).collect()
}

fn integer(rng: &mut Rng) -> Value {
    const EDGES: &[i128] = &[
        0,
        1,
        31,
        32,
        127,
        128,
        255,
        256,
        65_535,
        65_536,
        u32::MAX as i128,
        u32::MAX as i128 + 1,
        u64::MAX as i128,
        -1,
        -32,
        -33,
        -128,
        -129,
        -32_768,
        -32_769,
        i32::MIN as i128,
        i32::MIN as i128 - 1,
        i64::MIN as i128,
    ];
    let n = if rng.one_in(2) { *rng.pick(EDGES) } else { i128::from(rng.next() as i64) };
    match u64::try_from(n) {
        Ok(positive) => Value::from(positive),
        Err(_) => Value::from(n as i64),
    }
}

fn float(rng: &mut Rng) -> Value {
    const EDGES: &[f64] =
        &[0.0, -0.0, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MAX, 5e-324, 1e-310];
    match rng.below(3) {
        0 => Value::F64(*rng.pick(EDGES)),
        1 => Value::F64(f64::from_bits(rng.next())),
        _ => Value::F32(f32::from_bits(rng.next() as u32)),
    }
}

/// Any value, nested at most `depth` levels.
fn value(rng: &mut Rng, depth: usize) -> Value {
    let containers = if depth == 0 { 0 } else { 2 };
    match rng.below(8 + containers) {
        0 => Value::Nil,
        1 => Value::Boolean(rng.one_in(2)),
        2 => integer(rng),
        3 => float(rng),
        4 | 5 => Value::from(text(rng)),
        6 => {
            let len = rng.length(300);
            Value::Binary(rng.bytes(len))
        }
        7 => {
            let len = *rng.pick(&[1, 2, 4, 8, 16, 0, 3, 17, 300]);
            Value::Ext(rng.next() as i8, rng.bytes(len))
        }
        8 => Value::Array((0..rng.length(20)).map(|_| value(rng, depth - 1)).collect()),
        _ => {
            Value::Map((0..rng.length(20)).map(|_| (value(rng, depth - 1), value(rng, depth - 1))).collect())
        }
    }
}

fn values(rng: &mut Rng) -> Vec<Value> {
    (0..rng.length(10)).map(|_| value(rng, 3)).collect()
}

fn id(rng: &mut Rng) -> u64 {
    match integer(rng).as_u64() {
        Some(id) => id,
        None => rng.next(),
    }
}

/// One envelope of each kind and form, `form` chosen in `0..ENVELOPE_FORMS`.
const ENVELOPE_FORMS: usize = 16;

fn envelope(rng: &mut Rng, form: usize) -> Envelope {
    match form {
        0 => Envelope::hello(&text(rng)),
        1 => Envelope::Hello {
            version: rng.next() as u32,
            client: text(rng),
            session: {
                let len = 1 + rng.below(64);
                rng.bytes(len)
            },
            role: if rng.one_in(2) { Role::Main } else { Role::Liveness },
        },
        2 => Envelope::Welcome { version: rng.next() as u32, heartbeat_ms: id(rng) },
        3 => Envelope::Call { id: id(rng), module: text(rng), method: text(rng), args: values(rng) },
        4 => Envelope::Post { id: id(rng), module: text(rng), method: text(rng), args: values(rng) },
        5 => Envelope::Reply { id: id(rng), value: value(rng, 4) },
        6 => Envelope::Error { id: id(rng), message: text(rng) },
        7 => Envelope::Event { name: text(rng), value: value(rng, 4), lost: 0 },
        8 => Envelope::Event { name: text(rng), value: value(rng, 4), lost: id(rng).max(1) },
        9 => Envelope::Register {
            id: id(rng),
            module: text(rng),
            methods: (0..rng.length(8))
                .map(|_| MethodInfo { name: text(rng), signature: text(rng), help: text(rng) })
                .collect(),
        },
        10 => Envelope::Unregister { id: id(rng), module: text(rng) },
        11 => Envelope::Subscribe { id: id(rng), event: text(rng) },
        12 => Envelope::Unsubscribe { id: id(rng), event: text(rng) },
        13 => Envelope::Heartbeat,
        14 => Envelope::Ack { count: rng.next() as u32 },
        _ => Envelope::Callback {
            module: text(rng),
            method: text(rng),
            event: text(rng),
            value: value(rng, 4),
            message: value(rng, 2),
            lost: id(rng),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Where the headers are in a valid encoding, so that mutations can lie about lengths.

#[derive(Clone, Copy)]
enum Shape {
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
fn write_header(out: &mut Vec<u8>, shape: Shape, count: usize, width: usize) {
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
fn claim(rng: &mut Rng, honest: usize) -> usize {
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

// ---------------------------------------------------------------------------------------------
// Mutations of valid encodings.

const INTERESTING_BYTES: &[u8] = &[
    0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc4, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcf,
    0xd3, 0xd4, 0xd8, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff,
];

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8]) {
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

// ---------------------------------------------------------------------------------------------
// Hostile MessagePack written byte by byte.

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
fn nested(rng: &mut Rng, out: &mut Vec<u8>, levels: usize, leaf: &[u8]) {
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
fn leaf(rng: &mut Rng) -> Vec<u8> {
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
fn hostile_frame(rng: &mut Rng) -> Vec<u8> {
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

// ---------------------------------------------------------------------------------------------
// The runs.

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
