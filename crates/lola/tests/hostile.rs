//! Hostile and broken input: truncated maps, huge length headers, wrong types, nesting,
//! duplicates. Each is refused with its own error, without allocating or looping over a
//! length it was not given the bytes of.

mod common;

use common::{encode, entry, floats64, robot_sensor_map};
use naobroker_lola::{
    decode_actuator_map, decode_sensor_map, encode_sensor_map, ActuatorMap, DecodeError, SensorMap,
    ValueKind, MAX_MESSAGE_BYTES, SENSOR_MAP_BYTES,
};
use rmpv::Value;

fn sensor(bytes: &[u8]) -> Result<usize, DecodeError> {
    decode_sensor_map(bytes, &mut SensorMap::default()).map(|decoded| decoded.consumed)
}

fn actuator(bytes: &[u8]) -> Result<usize, DecodeError> {
    decode_actuator_map(bytes, &mut ActuatorMap::default()).map(|decoded| decoded.consumed)
}

/// A one-entry map: the key, then raw bytes for its value.
fn one_entry(key: &str, value: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0x81, 0xa0 | key.len() as u8];
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(value);
    bytes
}

#[test]
fn every_truncation_of_a_map_is_incomplete() {
    let mut wire = [0u8; SENSOR_MAP_BYTES];
    encode_sensor_map(&robot_sensor_map(), &mut wire).unwrap();
    for end in 0..SENSOR_MAP_BYTES {
        assert_eq!(sensor(&wire[..end]), Err(DecodeError::Incomplete), "cut at {end}");
    }
    assert_eq!(sensor(&wire), Ok(SENSOR_MAP_BYTES));
}

#[test]
fn huge_headers_are_refused_before_anything_is_read() {
    // map 32 of 4 Gi entries
    assert_eq!(
        sensor(&[0xdf, 0xff, 0xff, 0xff, 0xff]),
        Err(DecodeError::TooManyEntries { entries: u32::MAX, max: 32 })
    );
    // a key of 4 GiB
    assert_eq!(
        sensor(&[0x81, 0xdb, 0xff, 0xff, 0xff, 0xff]),
        Err(DecodeError::KeyTooLong { len: u32::MAX, max: 32 })
    );
    // a known key's array of 4 Gi elements
    assert_eq!(
        sensor(&one_entry("Position", &[0xdd, 0xff, 0xff, 0xff, 0xff])),
        Err(DecodeError::WrongLength { key: "Position", expected: 25, found: u32::MAX })
    );
    // an unknown key's array, text, binary and extension of 4 Gi
    for (value, found) in [
        ([0xdd, 0xff, 0xff, 0xff, 0xff], ValueKind::Array),
        ([0xdb, 0xff, 0xff, 0xff, 0xff], ValueKind::Text),
        ([0xc6, 0xff, 0xff, 0xff, 0xff], ValueKind::Binary),
    ] {
        assert_eq!(
            actuator(&one_entry("Unknown", &value)),
            Err(DecodeError::Oversized { found, len: u32::MAX, max: 64 })
        );
    }
    assert_eq!(
        actuator(&one_entry("Unknown", &[0xc9, 0xff, 0xff, 0xff, 0xfe, 0x01])),
        Err(DecodeError::Oversized { found: ValueKind::Extension, len: u32::MAX, max: 64 })
    );
    // a RobotConfig text of 4 GiB
    let mut config = vec![0x94, 0xdb, 0xff, 0xff, 0xff, 0xff];
    config.extend_from_slice(&[0; 16]);
    assert_eq!(
        sensor(&one_entry("RobotConfig", &config)),
        Err(DecodeError::TextTooLong { key: "RobotConfig", len: u32::MAX, max: 32 })
    );
}

#[test]
fn a_map_that_does_not_end_within_the_bound_is_too_long() {
    // 32 unknown keys with 64 float64 each: about 19 KB, every header within its bounds.
    let big = Value::Array(vec![Value::F64(1.0); 64]);
    let message = Value::Map((0..32).map(|k| entry(&format!("Unknown{k}"), big.clone())).collect());
    let bytes = encode(&message);
    assert!(bytes.len() > MAX_MESSAGE_BYTES);
    assert_eq!(sensor(&bytes), Err(DecodeError::TooLong { max: MAX_MESSAGE_BYTES }));
    assert_eq!(sensor(&bytes[..MAX_MESSAGE_BYTES]), Err(DecodeError::TooLong { max: MAX_MESSAGE_BYTES }));
    assert_eq!(sensor(&bytes[..MAX_MESSAGE_BYTES - 1]), Err(DecodeError::Incomplete));
}

#[test]
fn wrong_types_are_named() {
    assert_eq!(sensor(&encode(&Value::from(5))), Err(DecodeError::NotAMap { found: ValueKind::Integer }));
    assert_eq!(sensor(&encode(&Value::Array(vec![]))), Err(DecodeError::NotAMap { found: ValueKind::Array }));
    assert_eq!(
        sensor(&encode(&Value::Map(vec![(Value::from(1), Value::Nil)]))),
        Err(DecodeError::KeyNotText { found: ValueKind::Integer })
    );
    assert_eq!(
        sensor(&encode(&Value::Map(vec![entry("Touch", Value::from(1.0))]))),
        Err(DecodeError::WrongType { key: "Touch", expected: "an array", found: ValueKind::Float })
    );
    let mut touch = vec![Value::F32(0.0); 14];
    touch[13] = Value::from("pressed");
    assert_eq!(
        sensor(&encode(&Value::Map(vec![entry("Touch", Value::Array(touch))]))),
        Err(DecodeError::WrongType { key: "Touch", expected: "a number", found: ValueKind::Text })
    );
    assert_eq!(
        sensor(&encode(&Value::Map(vec![entry("Angles", floats64(&[0.0; 3]))]))),
        Err(DecodeError::WrongLength { key: "Angles", expected: 2, found: 3 })
    );
    let mut status = vec![Value::from(0); 25];
    status[2] = Value::F64(1.5);
    assert_eq!(
        sensor(&encode(&Value::Map(vec![entry("Status", Value::Array(status.clone()))]))),
        Err(DecodeError::OutOfRange { key: "Status", value: 1.5 })
    );
    status[2] = Value::from(u64::MAX);
    assert!(matches!(
        sensor(&encode(&Value::Map(vec![entry("Status", Value::Array(status))]))),
        Err(DecodeError::OutOfRange { key: "Status", .. })
    ));
    let config = Value::Array(vec![Value::from("a"), Value::from(2), Value::from("c"), Value::from("d")]);
    assert_eq!(
        sensor(&encode(&Value::Map(vec![entry("RobotConfig", config)]))),
        Err(DecodeError::WrongType { key: "RobotConfig", expected: "a text", found: ValueKind::Integer })
    );
    let mut config = vec![0x94, 0xa2, 0xff, 0xfe];
    config.extend_from_slice(&[0xa0, 0xa0, 0xa0]);
    assert_eq!(sensor(&one_entry("RobotConfig", &config)), Err(DecodeError::NotUtf8 { key: "RobotConfig" }));
    assert_eq!(sensor(&one_entry("Sonar", &[0xc1])), Err(DecodeError::InvalidMarker));
}

#[test]
fn nested_unknown_values_and_duplicates_are_refused() {
    let nested = Value::Array(vec![Value::Array(vec![Value::Array(vec![Value::from(1)])])]);
    assert_eq!(
        actuator(&encode(&Value::Map(vec![entry("Deep", nested)]))),
        Err(DecodeError::Nested { found: ValueKind::Array })
    );
    let map = Value::Map(vec![entry("a", Value::from(1))]);
    assert_eq!(
        actuator(&encode(&Value::Map(vec![entry("Deep", map)]))),
        Err(DecodeError::Nested { found: ValueKind::Map })
    );
    // 1000 nested array headers: refused at the second, never recursed into.
    let mut deep = one_entry("Deep", &[0x91; 1000]);
    deep.push(0x01);
    assert_eq!(actuator(&deep), Err(DecodeError::Nested { found: ValueKind::Array }));
    let twice = Value::Map(vec![entry("Chest", floats64(&[0.0; 3])), entry("Chest", floats64(&[1.0; 3]))]);
    assert_eq!(actuator(&encode(&twice)), Err(DecodeError::DuplicateKey { key: "Chest" }));
}

#[test]
fn flat_unknown_values_within_bounds_are_skipped() {
    let flat = Value::Map(vec![
        entry("Bin", Value::Binary(vec![7; 64])),
        entry("Text", Value::from("t".repeat(64))),
        entry("Ext", Value::Ext(3, vec![1, 2, 3, 4])),
        entry(
            "Flat",
            Value::Array(vec![Value::Nil, Value::Boolean(true), Value::from(-7), Value::from("x")]),
        ),
        entry("Chest", floats64(&[0.5; 3])),
    ]);
    let bytes = encode(&flat);
    let mut map = ActuatorMap::default();
    let decoded = decode_actuator_map(&bytes, &mut map).unwrap();
    assert_eq!((decoded.consumed, decoded.unknown_keys), (bytes.len(), 4));
    assert_eq!(map.chest, [0.5; 3]);
}
