//! The mapping between naobroker's values and qi's (docs/qi.md, "Values"): everything ALValue
//! can hold goes to qi and back without loss, qi values come back as they went, the typed
//! conversions check ranges and shapes.

use naobroker_qi::{
    decode_value, dynamic_of, encode_value, from_value, to_value, ConvertError, Limits, Options, QiValue,
    Type, Value,
};

fn options() -> Options {
    Options::default()
}

/// A naobroker value through a dynamic `m` on the wire and back.
fn through_dynamic(value: &Value) -> Value {
    let mut bytes = Vec::new();
    encode_value(value, &Type::Dynamic, &mut bytes, &options()).unwrap();
    decode_value(&Type::Dynamic, &bytes, &options()).unwrap()
}

fn everything_alvalue_holds() -> Vec<Value> {
    let ints = [0i64, 1, -1, i32::MAX as i64, i32::MIN as i64, i32::MAX as i64 + 1, i64::MIN, i64::MAX];
    let mut values: Vec<Value> = ints.iter().map(|n| Value::from(*n)).collect();
    values.extend([
        Value::Nil,
        Value::Boolean(true),
        Value::Boolean(false),
        Value::from(u64::MAX),
        Value::F32(0.1),
        Value::F32(-f32::MAX),
        Value::F64(0.1),
        Value::F64(f64::MIN_POSITIVE),
        Value::F64(f64::INFINITY),
        Value::from(""),
        Value::from("LeftBumperPressed"),
        Value::from("héllo wörld ✓"),
        Value::Binary(Vec::new()),
        Value::Binary((0..=255).collect()),
        Value::Array(Vec::new()),
        Value::Map(Vec::new()),
    ]);
    let list = Value::Array(values.clone());
    let nested = Value::Array(vec![list.clone(), Value::Array(vec![Value::Array(vec![1.into()])])]);
    let map = Value::Map(vec![
        ("a".into(), Value::F64(1.5)),
        (Value::from(3), list.clone()),
        (Value::from("nested"), Value::Map(vec![("x".into(), Value::Nil)])),
    ]);
    values.extend([list, nested, map]);
    values
}

#[test]
fn everything_alvalue_holds_goes_through_a_dynamic_value_and_back_unchanged() {
    for value in everything_alvalue_holds() {
        assert_eq!(through_dynamic(&value), value);
    }
    let nan = through_dynamic(&Value::F32(f32::NAN));
    assert!(matches!(nan, Value::F32(x) if x.is_nan()));
}

#[test]
fn each_naobroker_value_takes_the_qi_type_of_the_table() {
    let signature_of =
        |value: Value| dynamic_of(&value, &Limits::default()).unwrap().as_typed().unwrap().ty.to_string();
    assert_eq!(signature_of(Value::Nil), "v");
    assert_eq!(signature_of(Value::Boolean(true)), "b");
    assert_eq!(signature_of(Value::from(-5)), "i");
    assert_eq!(signature_of(Value::from(i32::MAX as i64 + 1)), "l");
    assert_eq!(signature_of(Value::from(u64::MAX)), "L");
    assert_eq!(signature_of(Value::F32(1.0)), "f");
    assert_eq!(signature_of(Value::F64(1.0)), "d");
    assert_eq!(signature_of(Value::from("x")), "s");
    assert_eq!(signature_of(Value::Binary(vec![1])), "r");
    assert_eq!(signature_of(Value::Array(vec![])), "[m]");
    assert_eq!(signature_of(Value::Map(vec![])), "{mm}");
    let ext = dynamic_of(&Value::Ext(1, vec![]), &Limits::default());
    assert_eq!(ext, Err(ConvertError::NoQiValue("MessagePack extension")));
}

#[test]
fn the_bytes_of_a_dynamic_value_are_libqis() {
    let mut bytes = Vec::new();
    encode_value(&Value::Array(vec![7.into(), "x".into()]), &Type::Dynamic, &mut bytes, &options()).unwrap();
    let expected = [
        &[3, 0, 0, 0][..],
        b"[m]",
        &[2, 0, 0, 0],
        &[1, 0, 0, 0, b'i', 7, 0, 0, 0],
        &[1, 0, 0, 0, b's', 1, 0, 0, 0, b'x'],
    ]
    .concat();
    assert_eq!(bytes, expected);
    let mut nil = Vec::new();
    encode_value(&Value::Nil, &Type::Dynamic, &mut nil, &options()).unwrap();
    assert_eq!(nil, [1, 0, 0, 0, b'v']);
}

#[test]
fn what_python_sends_as_a_dynamic_value_decodes() {
    // libqi-wire.md A.5: [1, 2.5, "x", [True]] from Python, ints as `l`.
    let mut bytes = vec![3, 0, 0, 0, b'[', b'm', b']', 4, 0, 0, 0];
    bytes.extend_from_slice(&[1, 0, 0, 0, b'l', 1, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(&[1, 0, 0, 0, b'd']);
    bytes.extend_from_slice(&2.5f64.to_le_bytes());
    bytes.extend_from_slice(&[1, 0, 0, 0, b's', 1, 0, 0, 0, b'x']);
    bytes.extend_from_slice(&[3, 0, 0, 0, b'[', b'm', b']', 1, 0, 0, 0, 1, 0, 0, 0, b'b', 1]);
    let value = decode_value(&Type::Dynamic, &bytes, &options()).unwrap();
    let expected =
        Value::Array(vec![1.into(), Value::F64(2.5), "x".into(), Value::Array(vec![Value::Boolean(true)])]);
    assert_eq!(value, expected);
    // Nothing is lost but the width: 1 comes back as `i`, every value as it was.
    assert_eq!(through_dynamic(&value), value);
}

#[test]
fn qi_values_come_back_from_naobroker_as_they_went() {
    let typed = |signature: &str, value: QiValue| QiValue::dynamic(Type::parse(signature).unwrap(), value);
    let dynamic_list = |items: Vec<QiValue>| typed("[m]", QiValue::List(items));
    let originals = [
        typed("v", QiValue::Void),
        typed("b", QiValue::Bool(true)),
        typed("i", QiValue::Int32(-42)),
        typed("f", QiValue::Float(0.25)),
        typed("d", QiValue::Double(-1e300)),
        typed("s", QiValue::string("ALMemory")),
        typed("r", QiValue::Raw(vec![0, 255, 1])),
        dynamic_list(vec![
            typed("i", QiValue::Int32(1)),
            dynamic_list(vec![typed("s", QiValue::string("a"))]),
        ]),
        typed(
            "{mm}",
            QiValue::Map(vec![(typed("s", QiValue::string("k")), typed("f", QiValue::Float(2.0)))]),
        ),
    ];
    for original in originals {
        let value = to_value(&original).unwrap();
        assert_eq!(dynamic_of(&value, &Limits::default()).unwrap(), original);
    }
}

#[test]
fn other_qi_types_map_to_the_nearest_naobroker_value() {
    let value =
        |signature: &str, qi: QiValue| to_value(&QiValue::dynamic(Type::parse(signature).unwrap(), qi));
    assert_eq!(value("c", QiValue::Int8(-3)), Ok(Value::from(-3)));
    assert_eq!(value("W", QiValue::UInt16(65535)), Ok(Value::from(65535)));
    assert_eq!(value("L", QiValue::UInt64(u64::MAX)), Ok(Value::from(u64::MAX)));
    let tuple = QiValue::Tuple(vec![QiValue::string("a"), QiValue::UInt32(2)]);
    assert_eq!(value("(sI)", tuple), Ok(Value::Array(vec!["a".into(), 2.into()])));
    assert_eq!(value("+i", QiValue::Optional(None)), Ok(Value::Nil));
    assert_eq!(value("+i", QiValue::Optional(Some(Box::new(QiValue::Int32(4))))), Ok(Value::from(4)));
    assert_eq!(value("s", QiValue::String(vec![0xff])), Ok(Value::Binary(vec![0xff])));
    assert_eq!(to_value(&QiValue::Dynamic(None)), Ok(Value::Nil));
    let object = QiValue::Object(Box::default());
    assert_eq!(to_value(&object), Err(ConvertError::NoValue("object reference")));
}

#[test]
fn typed_conversions_check_ranges_and_shapes() {
    let limits = Limits::default();
    let into = |value: Value, signature: &str| from_value(&value, &Type::parse(signature).unwrap(), &limits);
    assert_eq!(into(Value::from(255), "C"), Ok(QiValue::UInt8(255)));
    assert!(matches!(into(Value::from(256), "C"), Err(ConvertError::OutOfRange { .. })));
    assert!(matches!(into(Value::from(-1), "I"), Err(ConvertError::OutOfRange { .. })));
    assert_eq!(into(Value::from(u64::MAX), "L"), Ok(QiValue::UInt64(u64::MAX)));
    assert_eq!(into(Value::from(3), "f"), Ok(QiValue::Float(3.0)));
    assert_eq!(into(Value::F64(0.5), "f"), Ok(QiValue::Float(0.5)));
    assert!(matches!(into(Value::F64(0.5), "i"), Err(ConvertError::Mismatch { .. })));
    assert_eq!(into(Value::Binary(vec![b'x']), "s"), Ok(QiValue::string("x")));
    assert_eq!(into("x".into(), "r"), Ok(QiValue::Raw(vec![b'x'])));
    assert_eq!(into(Value::Nil, "+s"), Ok(QiValue::Optional(None)));
    assert_eq!(into(Value::Nil, "v"), Ok(QiValue::Void));
    assert!(matches!(into(Value::Boolean(true), "v"), Err(ConvertError::Mismatch { .. })));
    let pair = Value::Array(vec!["k".into(), Value::F32(1.0)]);
    let tuple =
        QiValue::Tuple(vec![QiValue::string("k"), QiValue::dynamic(Type::Float, QiValue::Float(1.0))]);
    assert_eq!(into(pair.clone(), "(sm)"), Ok(tuple));
    assert_eq!(into(pair.clone(), "(smi)"), Err(ConvertError::Arity { expected: 3, found: 2 }));
    assert!(matches!(into(pair, "[s]"), Err(ConvertError::Mismatch { .. })));
    let map = Value::Map(vec![("a".into(), 1.into())]);
    assert_eq!(into(map, "{si}"), Ok(QiValue::Map(vec![(QiValue::string("a"), QiValue::Int32(1))])));
    assert!(matches!(into(Value::Nil, "o"), Err(ConvertError::Mismatch { .. })));
}

#[test]
fn every_value_the_messagepack_wire_accepts_fits_a_call_over_qi() {
    let depth = naobroker_protocol::DEFAULT_MAX_VALUE_DEPTH;
    let nested = |levels: usize| (0..levels).fold(Value::from(1), |inner, _| Value::Array(vec![inner]));
    let args = Type::parse("(sm)").unwrap();
    let call = Value::Array(vec!["key".into(), nested(depth)]);
    let mut bytes = Vec::new();
    encode_value(&call, &args, &mut bytes, &options()).unwrap();
    assert_eq!(decode_value(&args, &bytes, &options()).unwrap(), call);
    let too_deep = Value::Array(vec!["key".into(), nested(depth + 3)]);
    let refused = encode_value(&too_deep, &args, &mut Vec::new(), &options());
    assert!(matches!(refused, Err(ConvertError::TooDeep { .. })), "{refused:?}");
}
