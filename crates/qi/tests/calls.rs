//! A call's arguments in each form a libqi caller may send: the parameters tuple, a dynamic
//! argument pack (`DynamicPayload`), a forced return signature after them (`ReturnType`).

use naobroker_qi::{
    decode_arguments, Address, Arguments, ConvertError, DecodeError, Flags, Message, MessageType, Options,
    QiValue, Type, Value,
};

fn call(flags: Flags, payload: Vec<u8>) -> Message {
    Message { flags, ..Message::new(12, MessageType::Call, Address::new(2, 1, 100), payload) }
}

fn get_data(message: &Message) -> Result<Arguments, ConvertError> {
    decode_arguments(message, &Type::parse("(s)").unwrap(), &Options::default())
}

/// `"ok"` as the captured getData call sends it.
fn ok() -> Vec<u8> {
    vec![2, 0, 0, 0, b'o', b'k']
}

#[test]
fn the_parameters_tuple() {
    let arguments = get_data(&call(Flags::NONE, ok())).unwrap();
    assert_eq!(arguments, Arguments { values: vec!["ok".into()], return_signature: None });
}

#[test]
fn a_dynamic_argument_pack() {
    let pack = QiValue::dynamic(Type::parse("(s)").unwrap(), QiValue::Tuple(vec![QiValue::string("ok")]));
    let payload = pack.to_bytes(&Type::Dynamic, &Options::default()).unwrap();
    assert_eq!(payload[..7], [3, 0, 0, 0, b'(', b's', b')']);
    assert_eq!(get_data(&call(Flags::DYNAMIC_PAYLOAD, payload)).unwrap().values, vec![Value::from("ok")]);
    let not_a_pack = QiValue::dynamic(Type::String, QiValue::string("ok"));
    let payload = not_a_pack.to_bytes(&Type::Dynamic, &Options::default()).unwrap();
    let refused = get_data(&call(Flags::DYNAMIC_PAYLOAD, payload));
    let expected = DecodeError::Unexpected { expected: "a tuple of arguments", found: "s".into() };
    assert_eq!(refused, Err(ConvertError::Decode(expected)));
}

#[test]
fn a_forced_return_signature_after_the_arguments() {
    let mut payload = ok();
    payload.extend_from_slice(&[3, 0, 0, 0, b'[', b'i', b']']);
    let arguments = get_data(&call(Flags::RETURN_TYPE, payload.clone())).unwrap();
    assert_eq!(arguments.values, vec![Value::from("ok")]);
    assert_eq!(arguments.return_signature.as_deref(), Some("[i]"));
    assert_eq!(get_data(&call(Flags::NONE, payload)), Err(ConvertError::Decode(DecodeError::Trailing(7))));
}
