//! The actuator map on the wire: 786 bytes with all 11 keys, 777 without Sonar, read back
//! whole or in part (clients omit keys), in any key order.

mod common;

use common::{decode, encode, entry, floats64, some_actuator_map};
use naobroker_lola::{
    decode_actuator_map, encode_actuator_map, ActuatorKey, ActuatorKeys, ActuatorMap, DecodeError, ValueKind,
    ACTUATOR_MAP_MAX_BYTES,
};
use rmpv::Value;

fn encoded(map: &ActuatorMap, keys: ActuatorKeys) -> Vec<u8> {
    let mut wire = [0u8; ACTUATOR_MAP_MAX_BYTES];
    let written = encode_actuator_map(map, keys, &mut wire);
    wire[..written].to_vec()
}

#[test]
fn all_keys_take_786_bytes_and_without_sonar_777() {
    let map = some_actuator_map();
    let all = encoded(&map, ActuatorKeys::ALL);
    assert_eq!(all.len(), 786);
    assert_eq!(encoded(&map, ActuatorKeys::WITHOUT_SONAR).len(), 777);
    let Value::Map(entries) = decode(&all) else { panic!("a map") };
    let keys: Vec<&str> = entries.iter().map(|(key, _)| key.as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "Position",
            "Stiffness",
            "REar",
            "LEar",
            "Chest",
            "LEye",
            "REye",
            "LFoot",
            "RFoot",
            "Skull",
            "Sonar"
        ]
    );
    let value = |key: &str| &entries.iter().find(|(k, _)| k.as_str() == Some(key)).unwrap().1;
    assert_eq!(value("Sonar"), &Value::Array(vec![Value::Boolean(true), Value::Boolean(false)]));
    let skull = value("Skull").as_array().unwrap();
    assert!(skull.iter().zip(map.skull).all(|(v, s)| *v == Value::F32(s)), "float32 everywhere");
}

#[test]
fn round_trips_every_value() {
    let map = some_actuator_map();
    let mut back = ActuatorMap::default();
    let decoded = decode_actuator_map(&encoded(&map, ActuatorKeys::ALL), &mut back).unwrap();
    assert_eq!((decoded.consumed, decoded.present, decoded.unknown_keys), (786, ActuatorKeys::ALL, 0));
    assert_eq!(back, map);
}

#[test]
fn an_omitted_key_keeps_the_last_value() {
    let last = some_actuator_map();
    let mut next = ActuatorMap { sonar: [false, true], ..last };
    next.position[0] = 1.0;
    next.l_eye[3] = 0.0;
    let mut kept = last;
    let decoded = decode_actuator_map(&encoded(&next, ActuatorKeys::WITHOUT_SONAR), &mut kept).unwrap();
    assert_eq!(decoded.present, ActuatorKeys::WITHOUT_SONAR);
    assert_eq!(kept.sonar, last.sonar, "B-Human's map says nothing of the sonar");
    assert_eq!(kept.position[0], 1.0);
    assert_eq!(kept.l_eye[3], 0.0);

    let only_skull = ActuatorKeys::NONE.with(ActuatorKey::Skull);
    let mut kept = last;
    decode_actuator_map(&encoded(&ActuatorMap::default(), only_skull), &mut kept).unwrap();
    assert_eq!(kept, ActuatorMap { skull: [0.0; 12], ..last });
}

#[test]
fn decodes_another_order_float64_and_integers() {
    let expected = some_actuator_map();
    let message = Value::Map(vec![
        entry("Sonar", Value::Array(vec![Value::Boolean(true), Value::Boolean(false)])),
        entry("Skull", floats64(&expected.skull)),
        entry("Stiffness", Value::Array((0..25).map(|i| Value::from(i % 2)).collect())),
        entry("Position", floats64(&expected.position)),
        entry("Extra", Value::Nil),
    ]);
    let mut map = ActuatorMap::default();
    let decoded = decode_actuator_map(&encode(&message), &mut map).unwrap();
    assert_eq!(decoded.present.len(), 4);
    assert_eq!(decoded.unknown_keys, 1);
    assert_eq!(map.position, expected.position);
    assert_eq!(map.skull, expected.skull);
    assert_eq!(map.stiffness[..3], [0.0, 1.0, 0.0]);
    assert_eq!(map.sonar, [true, false]);
}

#[test]
fn sonar_takes_bools_only() {
    let message = Value::Map(vec![entry("Sonar", Value::Array(vec![Value::from(1), Value::from(1)]))]);
    assert_eq!(
        decode_actuator_map(&encode(&message), &mut ActuatorMap::default()),
        Err(DecodeError::WrongType { key: "Sonar", expected: "a bool", found: ValueKind::Integer })
    );
}
