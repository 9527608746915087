//! Valid envelopes of every kind, with random contents: the corpus the mutations start from,
//! and the values hostile frames are made of.

use naobroker_protocol::{
    CallbackSubscription, Envelope, ErrorKind, MethodInfo, MethodType, Role, Value, ValueType,
};

use crate::rng::Rng;

pub(crate) fn text(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &["a", "Z", "/", "_", " ", "é", "ü", "日本", "🤖", "\0", "\u{7f}", "\n", "\""];
    let len = rng.length(300);
    (0..len).map(|_| *rng.pick(PIECES)).collect()
}

pub(crate) fn integer(rng: &mut Rng) -> Value {
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
pub(crate) fn value(rng: &mut Rng, depth: usize) -> Value {
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

pub(crate) fn values(rng: &mut Rng) -> Vec<Value> {
    (0..rng.length(10)).map(|_| value(rng, 3)).collect()
}

fn id(rng: &mut Rng) -> u64 {
    match integer(rng).as_u64() {
        Some(id) => id,
        None => rng.next(),
    }
}

/// One envelope of each kind and form, `form` chosen in `0..ENVELOPE_FORMS`.
pub(crate) const ENVELOPE_FORMS: usize = 20;

pub(crate) fn envelope(rng: &mut Rng, form: usize) -> Envelope {
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
        6 => Envelope::Error {
            id: id(rng),
            message: text(rng),
            kind: ErrorKind::from_code(rng.below(4) as u64),
        },
        7 => Envelope::Event { name: text(rng), value: value(rng, 4), lost: 0 },
        8 => Envelope::Event { name: text(rng), value: value(rng, 4), lost: id(rng).max(1) },
        9 => Envelope::Register {
            id: id(rng),
            module: text(rng),
            methods: (0..rng.length(8))
                .map(|_| MethodInfo {
                    name: text(rng),
                    signature: text(rng),
                    help: text(rng),
                    types: rng
                        .one_in(2)
                        .then(|| MethodType { params: vec![ValueType::Int64], returns: ValueType::Void }),
                })
                .collect(),
        },
        10 => Envelope::Unregister { id: id(rng), module: text(rng) },
        11 => Envelope::Subscribe { id: id(rng), event: text(rng) },
        12 => Envelope::Unsubscribe { id: id(rng), event: text(rng) },
        13 => Envelope::Heartbeat,
        14 => Envelope::Ack { count: rng.next() as u32 },
        15 => Envelope::Goodbye { id: id(rng) },
        16 | 17 => Envelope::SubscribeCallback {
            id: id(rng),
            subscription: CallbackSubscription {
                event: text(rng),
                module: text(rng),
                method: text(rng),
                micro_message: (form == 17).then(|| value(rng, 2)),
            },
        },
        18 => Envelope::UnsubscribeCallback { id: id(rng), event: text(rng), module: text(rng) },
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
