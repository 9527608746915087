//! The envelope's codec against the documented bytes, every kind's round trip, and the
//! errors bad frames get.

use super::*;
use crate::ValueType;

fn round_trip(envelope: Envelope) {
    let bytes = envelope.encode();
    assert_eq!(Envelope::decode(&bytes, 1 << 20), Ok(envelope));
}

#[test]
fn every_kind_round_trips() {
    round_trip(Envelope::hello("naocli"));
    round_trip(Envelope::Hello {
        version: 1,
        client: "Echo".into(),
        session: vec![7; 16],
        role: Role::Liveness,
    });
    round_trip(Envelope::Welcome { version: 1, heartbeat_ms: 1000 });
    round_trip(Envelope::Call {
        id: 7,
        module: "ALMemory".into(),
        method: "getData".into(),
        args: vec!["key".into()],
    });
    round_trip(Envelope::Post { id: 8, module: "M".into(), method: "m".into(), args: vec![] });
    round_trip(Envelope::Reply { id: 7, value: Value::F64(0.5) });
    round_trip(Envelope::Error { id: 7, message: "no".into(), kind: ErrorKind::Failed });
    for kind in [ErrorKind::BadArgument, ErrorKind::Refused, ErrorKind::NotFound] {
        round_trip(Envelope::Error { id: 7, message: "no".into(), kind });
    }
    round_trip(Envelope::Event { name: "E".into(), value: Value::Nil, lost: 0 });
    round_trip(Envelope::Event { name: "E".into(), value: Value::Nil, lost: 3 });
    round_trip(Envelope::Callback {
        module: "M".into(),
        method: "onTouched".into(),
        event: "E".into(),
        value: Value::F64(1.0),
        message: "".into(),
        lost: 2,
    });
    round_trip(Envelope::Register {
        id: 1,
        module: "Echo".into(),
        methods: vec![MethodInfo {
            name: "echo".into(),
            signature: "(value: Value) -> Value".into(),
            help: "returns its argument".into(),
            types: None,
        }],
    });
    round_trip(Envelope::Register {
        id: 1,
        module: "Echo".into(),
        methods: vec![MethodInfo {
            name: "echo".into(),
            signature: "(Value) -> Value".into(),
            help: "returns its argument".into(),
            types: Some(MethodType { params: vec![ValueType::Dynamic], returns: ValueType::Dynamic }),
        }],
    });
    round_trip(Envelope::Unregister { id: 2, module: "Echo".into() });
    round_trip(Envelope::Subscribe { id: 3, event: "E".into() });
    round_trip(Envelope::Unsubscribe { id: 4, event: "E".into() });
    round_trip(Envelope::Heartbeat);
    round_trip(Envelope::Ack { count: 256 });
    round_trip(Envelope::Goodbye { id: 7 });
    let event = CallbackSubscription {
        event: "FrontTactilTouched".into(),
        module: "ReactToTouch".into(),
        method: "onTouched".into(),
        micro_message: None,
    };
    round_trip(Envelope::SubscribeCallback { id: 8, subscription: event.clone() });
    let micro = CallbackSubscription { micro_message: Some("front".into()), ..event };
    round_trip(Envelope::SubscribeCallback { id: 9, subscription: micro });
    round_trip(Envelope::UnsubscribeCallback { id: 10, event: "E".into(), module: "M".into() });
}

/// A callback subscription is NAOqi's arguments in NAOqi's order after the id, the micro
/// event's message last.
#[test]
fn callback_subscriptions_are_messages_of_their_own() {
    let bytes = |items: Vec<Value>| {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, &Value::Array(items)).unwrap();
        out
    };
    let subscription = |micro_message| CallbackSubscription {
        event: "E".into(),
        module: "M".into(),
        method: "on".into(),
        micro_message,
    };
    let event = Envelope::SubscribeCallback { id: 3, subscription: subscription(None) };
    assert_eq!(event.encode(), bytes(vec![15.into(), 3.into(), "E".into(), "M".into(), "on".into()]));
    let micro = Envelope::SubscribeCallback { id: 3, subscription: subscription(Some("m".into())) };
    let micro_bytes = bytes(vec![15.into(), 3.into(), "E".into(), "M".into(), "on".into(), "m".into()]);
    assert_eq!(micro.encode(), micro_bytes);
    let unsubscribe = Envelope::UnsubscribeCallback { id: 4, event: "E".into(), module: "M".into() };
    assert_eq!(unsubscribe.encode(), bytes(vec![16.into(), 4.into(), "E".into(), "M".into()]));
    let short = Envelope::decode(&bytes(vec![15.into(), 3.into(), "E".into(), "M".into()]), 100);
    assert!(short.unwrap_err().to_string().contains("missing field 4 (method)"));
}

/// A failure keeps the short form of peers from before kinds, and their errors read as
/// failures; any other kind is a fourth field, a kind this version does not know a failure.
#[test]
fn error_kinds_are_a_trailing_field_that_old_errors_lack() {
    let failed = Envelope::Error { id: 7, message: "no".into(), kind: ErrorKind::Failed };
    assert_eq!(failed.encode(), b"\x93\x05\x07\xa2no");
    let old = Envelope::decode(b"\x93\x05\x07\xa2no", 100).unwrap();
    assert_eq!(old, failed);
    let not_found = Envelope::Error { id: 7, message: "no".into(), kind: ErrorKind::NotFound };
    assert_eq!(not_found.encode(), b"\x94\x05\x07\xa2no\x03");
    let newer = Envelope::decode(b"\x94\x05\x07\xa2no\x09", 100).unwrap();
    assert_eq!(newer, failed);
    // The caller's own kinds are failures to anyone it passes them on to.
    for kind in [ErrorKind::TimedOut, ErrorKind::ConnectionLost] {
        let passed_on = Envelope::Error { id: 7, message: "no".into(), kind };
        assert_eq!(passed_on.encode(), b"\x93\x05\x07\xa2no");
    }
    let bad = Envelope::decode(b"\x94\x05\x07\xa2no\xa1x", 100).unwrap_err();
    assert!(bad.to_string().contains("field kind must be an unsigned integer"), "{bad}");
}

/// The bytes quoted in docs/protocol.md.
#[test]
fn call_and_reply_bytes_match_the_documentation() {
    let call =
        Envelope::Call { id: 1, module: "ALMemory".into(), method: "getData".into(), args: vec!["x".into()] };
    assert_eq!(call.encode(), b"\x95\x02\x01\xa8ALMemory\xa7getData\x91\xa1x".to_vec());
    let reply = Envelope::Reply { id: 1, value: Value::F64(0.5) };
    assert_eq!(reply.encode(), b"\x93\x04\x01\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00".to_vec());
    assert_eq!(Envelope::Heartbeat.encode(), b"\x91\x0b".to_vec());
    assert_eq!(Envelope::Ack { count: 256 }.encode(), b"\x92\x0c\xcd\x01\x00".to_vec());
    assert_eq!(Envelope::Goodbye { id: 7 }.encode(), b"\x92\x0e\x07".to_vec());
}

#[test]
fn errors_quote_a_short_excerpt_of_the_bad_field() {
    let huge = Envelope::Reply { id: 1, value: Value::from("x".repeat(4 << 20)) };
    let mut frame = huge.to_value();
    if let Value::Array(items) = &mut frame {
        items[0] = Envelope::EVENT.into();
        items[1] = Value::Array(vec![Value::from(1); 1 << 16]);
    }
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, &frame).unwrap();
    let error = Envelope::decode(&bytes, 64 << 20).unwrap_err().to_string();
    assert!(error.len() < 200, "{error}");
}

#[test]
fn bad_frames_are_named() {
    assert!(matches!(Envelope::decode(b"\xa5ab", 100), Err(ProtocolError::Malformed(_))));
    assert!(matches!(Envelope::decode(b"\x95\x02", 100), Err(ProtocolError::Malformed(_))));
    assert!(matches!(Envelope::decode(b"\x01", 100), Err(ProtocolError::NotAnEnvelope(_))));
    assert!(matches!(Envelope::decode(b"\x91\x63", 100), Err(ProtocolError::NotAnEnvelope(_))));
    assert!(matches!(Envelope::decode(b"\x91\x0b\x00", 100), Err(ProtocolError::TrailingBytes(1))));
    assert_eq!(Envelope::decode(&[0x90; 10], 4), Err(ProtocolError::TooLarge { size: 10, limit: 4 }));
    let mut nested = vec![0x93, 0x06, 0xa1, b'E'];
    nested.extend(std::iter::repeat_n(0x91, 40));
    nested.push(0xc0);
    assert_eq!(Envelope::decode(&nested, 1 << 20), Err(ProtocolError::TooDeep { limit: 32 }));
    let not_call = b"\x95\x02\x09\xa1M\x05\x90";
    assert_eq!(Envelope::salvage_id(not_call), 9);
    assert!(Envelope::decode(not_call, 100).is_err());
}

/// Call, Post, Reply, Event and Callback are written field by field: their bytes are the value tree's,
/// at every length where MessagePack changes a header.
#[test]
fn messages_written_field_by_field_match_the_value_tree() {
    let text = |len: usize| "k".repeat(len);
    for len in [0, 31, 32, 255, 256, 65535, 65536] {
        let args: Vec<Value> = (0..len.min(70000)).map(|i| Value::from(i as u64)).collect();
        let envelopes = [
            Envelope::Call { id: 1, module: text(len), method: text(len), args: args.clone() },
            Envelope::Post { id: u64::MAX, module: "M".into(), method: text(len), args },
            Envelope::Reply { id: 300, value: text(len).into() },
            Envelope::Event { name: text(len), value: Value::F64(0.5), lost: 0 },
            Envelope::Event { name: text(len), value: Value::Nil, lost: 70000 },
            Envelope::Callback {
                module: text(len),
                method: "onEvent".into(),
                event: text(len),
                value: Value::F64(0.5),
                message: text(len).into(),
                lost: len as u64,
            },
        ];
        for envelope in envelopes {
            let mut tree = Vec::new();
            rmpv::encode::write_value(&mut tree, &envelope.to_value()).unwrap();
            assert_eq!(envelope.encode(), tree, "{len}");
        }
    }
}

/// What the direct path made of `frame`, beside the general decoder's result: the direct
/// path may leave a frame to the general decoder, never accept one differently.
fn direct_agrees(frame: &[u8], limits: &DecodeLimits) -> bool {
    let depth = Envelope::rmpv_depth(limits);
    match direct::call_reply_or_event(frame, depth as u16) {
        Ok(decoded) => {
            // Compared as text: a NaN is not equal to itself.
            assert_eq!(
                format!("{:?}", Envelope::decode_tree(frame, limits, depth)),
                format!("{:?}", Ok::<_, ProtocolError>(decoded.into_envelope())),
                "direct path accepted {frame:02x?}"
            );
            true
        }
        Err(direct::Declined) => false,
    }
}

fn nested_args(levels: usize) -> Vec<Value> {
    let mut value = Value::from("leaf");
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    vec![value]
}

#[test]
fn direct_path_takes_calls_replies_and_events_as_the_general_decoder_does() {
    let limits = DecodeLimits { max_frame_bytes: 1 << 20, max_value_depth: 6 };
    let map = Value::Map(vec![("k".into(), Value::from(-3)), (Value::from(7u8), Value::F32(1.5))]);
    let values = vec![
        Value::Nil,
        Value::from(true),
        Value::from(-1),
        Value::from(-200),
        Value::from(-70_000),
        Value::from(i64::MIN),
        Value::from(200u8),
        Value::from(70_000u32),
        Value::from(u64::MAX),
        Value::F64(0.5),
        Value::from("x".repeat(40)),
        Value::from("y".repeat(300)),
        Value::Binary(vec![1, 2, 3]),
        Value::Array((0..20).map(Value::from).collect()),
        map,
        Value::Ext(3, vec![1]),
    ];
    let mut frames = vec![];
    for (id, value) in values.iter().enumerate() {
        frames.push(Envelope::Reply { id: id as u64 * 1000, value: value.clone() }.encode());
        let args = vec![value.clone(), "key".into()];
        frames.push(Envelope::Call { id: 1 << 40, module: "M".into(), method: "m".into(), args }.encode());
        for lost in [0, 1, 300, u64::MAX] {
            frames.push(Envelope::Event { name: "E/v".into(), value: value.clone(), lost }.encode());
        }
    }
    for levels in 0..10 {
        let args = nested_args(levels);
        frames.push(Envelope::Post { id: 1, module: "M".into(), method: "m".into(), args }.encode());
        frames.push(Envelope::Reply { id: 1, value: nested_args(levels).remove(0) }.encode());
        let value = nested_args(levels).remove(0);
        frames.push(Envelope::Event { name: "x".repeat(40), value, lost: 2 }.encode());
    }
    let mut taken = 0;
    for frame in &frames {
        taken += usize::from(direct_agrees(frame, &limits));
        // Every byte changed, the frame cut short and lengthened: accepted alike or left over.
        for at in 0..frame.len() {
            for byte in [0x00, 0x01, 0x7f, 0x80, 0x90, 0x9f, 0xa0, 0xc1, 0xcc, 0xd9, 0xdd, 0xff] {
                let mut mutated = frame.clone();
                mutated[at] = byte;
                direct_agrees(&mutated, &limits);
            }
            direct_agrees(&frame[..at], &limits);
        }
        direct_agrees(&[frame.as_slice(), &[0xc0]].concat(), &limits);
    }
    // The ext values and the nesting past the limit are left to the general decoder.
    assert!(taken > frames.len() / 2, "the direct path took {taken} of {} frames", frames.len());
}

#[test]
fn direct_path_leaves_bad_calls_to_the_general_decoder_and_its_errors() {
    let limits = DecodeLimits { max_frame_bytes: 1 << 20, max_value_depth: 4 };
    let deep = Envelope::Call { id: 1, module: "M".into(), method: "m".into(), args: nested_args(6) };
    assert_eq!(Envelope::decode_limited(&deep.encode(), &limits), Err(ProtocolError::TooDeep { limit: 4 }));
    let mut bad_name =
        Envelope::Call { id: 1, module: "Mx".into(), method: "m".into(), args: vec![] }.encode();
    bad_name[4] = 0xff;
    assert_eq!(
        Envelope::decode_limited(&bad_name, &limits),
        Err(ProtocolError::Malformed("a string is not valid UTF-8".into()))
    );
    let call = Envelope::Call { id: 1, module: "M".into(), method: "m".into(), args: vec![] }.encode();
    let trailing = [call.as_slice(), &[1, 2]].concat();
    assert_eq!(Envelope::decode_limited(&trailing, &limits), Err(ProtocolError::TrailingBytes(2)));
    // Arguments declaring 2^32 - 1 items in a few bytes reserve nothing for them.
    let mut huge = call.clone();
    huge.truncate(huge.len() - 1);
    huge.extend_from_slice(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0]);
    assert!(matches!(Envelope::decode_limited(&huge, &limits), Err(ProtocolError::Malformed(_))));
    // A name given as binary: the general decoder's message names the field.
    let binary_name = [&call[..3], &[0xc4, 1], &call[4..]].concat();
    assert!(matches!(
        Envelope::decode_limited(&binary_name, &limits),
        Err(ProtocolError::NotAnEnvelope(message)) if message.contains("field module must be a string")
    ));
}
