//! Each captured payload decoded into its typed structure or value, checked against what
//! libqi decoded (`decoded.txt`), then encoded back, and built from scratch, to the same bytes.

use naobroker_qi::{
    error_message, from_value, to_value, AuthState, CapabilityMap, Limits, Message, MessageType, MetaMethod,
    MetaObject, MetaSignal, Options, QiValue, ServiceInfo, Type, Value,
};

use super::{find, hex};

fn options() -> Options {
    Options { object_uid: true, ..Options::default() }
}

/// Decode `payload` as `signature`, check it encodes back, and give its naobroker value.
fn value_of(signature: &str, payload: &[u8]) -> Value {
    let ty = Type::parse(signature).unwrap();
    let value = QiValue::decode(&ty, payload, &options()).unwrap();
    assert_eq!(value.to_bytes(&ty, &options()).unwrap(), payload, "{signature} re-encoded");
    to_value(&value).unwrap()
}

const MACHINE: &str = "90a3acd8-9af7-48b2-98d8-dba7240b391c";
const ENDPOINTS: [&str; 3] = ["qi:ServiceDirectory", "qi:ALMemory", "tcp://127.0.0.1:9771"];

fn almemory_info() -> ServiceInfo {
    ServiceInfo {
        name: "ALMemory".into(),
        service_id: 2,
        machine_id: MACHINE.into(),
        process_id: 29495,
        endpoints: ENDPOINTS.map(String::from).to_vec(),
        session_id: "c0e06436-7e26-4674-9bd9-c31c5c09fd1e".into(),
        object_uid: hex("737d69d20d37b899d155598a136b65b628c0f83d"),
    }
}

#[test]
fn the_client_capabilities_decode_and_encode_back() {
    let call = find(true, 2, MessageType::Call);
    let caps = CapabilityMap::decode(&call.payload, &options()).unwrap();
    for name in
        ["ClientServerSocket", "MessageFlags", "ObjectPtrUID", "RelativeEndpointURI", "RemoteCancelableCalls"]
    {
        assert_eq!(caps.bool(name), Some(true), "{name}");
    }
    assert_eq!(caps.bool(CapabilityMap::META_OBJECT_CACHE), Some(false));
    assert_eq!(caps.entries.len(), 6);
    assert_eq!(caps.to_bytes(&options()).unwrap(), call.payload);
}

#[test]
fn the_authenticate_reply_is_rebuilt_byte_for_byte() {
    let reply = find(false, 2, MessageType::Reply);
    let decoded = CapabilityMap::decode(&reply.payload, &options()).unwrap();
    assert_eq!(decoded.auth_state(), Some(AuthState::Done));
    let mut built = CapabilityMap::default();
    for name in [
        CapabilityMap::CLIENT_SERVER_SOCKET,
        CapabilityMap::MESSAGE_FLAGS,
        CapabilityMap::OBJECT_PTR_UID,
        CapabilityMap::RELATIVE_ENDPOINT_URI,
        CapabilityMap::REMOTE_CANCELABLE_CALLS,
    ] {
        built.set_bool(name, true);
    }
    built.set_bool(CapabilityMap::META_OBJECT_CACHE, false);
    built.set_auth_state(AuthState::Done);
    assert_eq!(built, decoded);
    assert_eq!(built.to_bytes(&options()).unwrap(), reply.payload);
    assert!(built.shared(
        &CapabilityMap::decode(&find(true, 2, MessageType::Call).payload, &options()).unwrap(),
        "ObjectPtrUID"
    ));
}

#[test]
fn the_service_directory_meta_object_is_libqis_to_the_byte() {
    let reply = find(false, 3, MessageType::Reply);
    assert_eq!(reply.payload.len(), 2144);
    let meta = MetaObject::decode(&reply.payload).unwrap();
    assert_eq!(meta.methods.len(), 22);
    assert_eq!(meta.signals.keys().copied().collect::<Vec<_>>(), [86, 106, 107]);
    assert_eq!(meta.method("service").unwrap().return_signature, ServiceInfo::SIGNATURE);
    assert_eq!(meta.method("metaObject").unwrap().return_signature, MetaObject::SIGNATURE);
    assert_eq!(meta.methods[&109].return_signature, "o");
    assert_eq!(meta.to_bytes().unwrap(), reply.payload);
    // Built from this crate's constants alone, it is what libqi's ServiceDirectory sent.
    let built = MetaObject::service_directory(ServiceInfo::SIGNATURE);
    assert_eq!(built, meta);
    assert_eq!(built.to_bytes().unwrap(), reply.payload);
}

#[test]
fn the_meta_object_also_decodes_generically_by_its_own_signature() {
    let reply = find(false, 3, MessageType::Reply);
    let ty = Type::parse(MetaObject::SIGNATURE).unwrap();
    assert_eq!(ty.to_string(), MetaObject::SIGNATURE);
    let Type::Tuple(tuple) = &ty else { panic!("a struct") };
    assert_eq!(tuple.name(), Some("MetaObject"));
    assert_eq!(tuple.field_names(), ["methods", "signals", "properties", "description"]);
    let value = QiValue::decode(&ty, &reply.payload, &options()).unwrap();
    assert_eq!(value.to_bytes(&ty, &options()).unwrap(), reply.payload);
}

#[test]
fn the_almemory_meta_object_is_the_base_object_plus_its_members() {
    let reply = find(false, 10, MessageType::Reply);
    assert_eq!(reply.payload.len(), 1407);
    let meta = MetaObject::decode(&reply.payload).unwrap();
    let get_data = meta.method("getData").unwrap();
    assert_eq!((get_data.uid, get_data.parameters_signature.as_str()), (100, "(s)"));
    assert_eq!((get_data.return_signature.as_str(), get_data.description.as_str()), ("m", "None"));
    let mut built = MetaObject::base_object();
    built.methods.insert(
        100,
        MetaMethod { description: "None".into(), ..MetaMethod::new(100, "getData", "(s)", "m") },
    );
    built.signals.insert(101, MetaSignal::new(101, "sig", "(sm)"));
    assert_eq!(built, meta);
    assert_eq!(built.to_bytes().unwrap(), reply.payload);
}

#[test]
fn register_event_calls_and_replies() {
    let call = find(true, 4, MessageType::Call);
    let expected = Value::Array(vec![1.into(), 106.into(), 455266533389u64.into()]);
    assert_eq!(value_of("(IIL)", &call.payload), expected);
    assert_eq!(value_of("L", &find(false, 4, MessageType::Reply).payload), Value::from(455266533390u64));
    let on_almemory = find(true, 11, MessageType::Call);
    let link = (101u64 << 32) | 19;
    assert_eq!(
        value_of("(IIL)", &on_almemory.payload),
        Value::Array(vec![2.into(), 101.into(), link.into()])
    );
    assert_eq!(value_of("(I)", &find(true, 3, MessageType::Call).payload), Value::Array(vec![0.into()]));
}

#[test]
fn machine_id_and_services() {
    assert_eq!(value_of("s", &find(false, 6, MessageType::Reply).payload), Value::from(MACHINE));
    assert!(find(true, 6, MessageType::Call).payload.is_empty());
    let reply = find(false, 7, MessageType::Reply);
    let infos = ServiceInfo::decode_list(&reply.payload).unwrap();
    let directory = ServiceInfo {
        name: "ServiceDirectory".into(),
        service_id: 1,
        session_id: "0".into(),
        object_uid: Vec::new(),
        ..almemory_info()
    };
    assert_eq!(infos, [directory, almemory_info()]);
    let mut encoded = Vec::new();
    ServiceInfo::encode_list(&infos, &mut encoded).unwrap();
    assert_eq!(encoded, reply.payload);
    value_of(&format!("[{}]", ServiceInfo::SIGNATURE), &reply.payload);
}

#[test]
fn service_almemory_call_and_reply() {
    assert_eq!(
        value_of("(s)", &find(true, 8, MessageType::Call).payload),
        Value::Array(vec!["ALMemory".into()])
    );
    let reply = find(false, 8, MessageType::Reply);
    assert_eq!(ServiceInfo::decode(&reply.payload).unwrap(), almemory_info());
    let mut encoded = Vec::new();
    almemory_info().encode(&mut encoded).unwrap();
    assert_eq!(encoded, reply.payload);
    // The object uid is 20 raw bytes, not UTF-8: as a naobroker value it is binary.
    let generic = value_of(ServiceInfo::SIGNATURE, &reply.payload);
    let Value::Array(fields) = generic else { panic!("a struct is an array") };
    assert_eq!(fields[6], Value::Binary(hex("737d69d20d37b899d155598a136b65b628c0f83d")));
}

#[test]
fn get_data_call_and_its_dynamic_reply() {
    let call = find(true, 12, MessageType::Call);
    assert_eq!(value_of("(s)", &call.payload), Value::Array(vec!["ok".into()]));
    let reply = find(false, 12, MessageType::Reply);
    assert_eq!(value_of("m", &reply.payload), Value::F64(3.25));
    let encoded = from_value(&Value::F64(3.25), &Type::Dynamic, &Limits::default()).unwrap();
    assert_eq!(encoded.to_bytes(&Type::Dynamic, &options()).unwrap(), reply.payload);
}

#[test]
fn an_exception_is_an_error_message_carrying_a_dynamic_string() {
    let call = find(true, 13, MessageType::Call);
    let reply = find(false, 13, MessageType::Error);
    let text = error_message(&reply.payload).unwrap();
    assert!(text.starts_with("RuntimeError: ALMemory::getData Data not found: bad\n"), "{text}");
    let call_message = Message::new(call.id, MessageType::Call, call.address, call.payload.clone());
    assert_eq!(call_message.error(&text).encode().unwrap(), reply.wire);
}

#[test]
fn a_signal_emission_is_an_event_with_the_signal_arguments() {
    let event = find(false, 13, MessageType::Event);
    let expected = Value::Array(vec!["FrontTactilTouched".into(), Value::F64(1.0)]);
    assert_eq!(value_of("(sm)", &event.payload), expected);
    let ty = Type::parse("(sm)").unwrap();
    let built = from_value(&expected, &ty, &Limits::default()).unwrap();
    let message =
        Message::new(13, MessageType::Event, event.address, built.to_bytes(&ty, &options()).unwrap());
    assert_eq!(message.encode().unwrap(), event.wire);
}
