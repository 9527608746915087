//! The sensor map on the wire: a real robot's exact 896 bytes, read back by an independent
//! decoder and by ours, in any key order, with any number width, in a stream.

mod common;

use common::{decode, encode, entry, floats64, robot_sensor_map};
use naobroker_lola::{
    decode_sensor_map, encode_sensor_map, ConfigText, EncodeError, SensorKey, SensorKeys, SensorMap,
    SENSOR_MAP_BYTES,
};
use rmpv::Value;

fn encoded(map: &SensorMap) -> [u8; SENSOR_MAP_BYTES] {
    let mut wire = [0u8; SENSOR_MAP_BYTES];
    encode_sensor_map(map, &mut wire).unwrap();
    wire
}

#[test]
fn a_robot_shaped_map_takes_exactly_896_bytes_in_the_robots_shape() {
    let map = robot_sensor_map();
    let wire = encoded(&map);
    let Value::Map(entries) = decode(&wire) else { panic!("a map") };
    let keys: Vec<&str> = entries.iter().map(|(key, _)| key.as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "RobotConfig",
            "Accelerometer",
            "Angles",
            "Battery",
            "Current",
            "FSR",
            "Gyroscope",
            "Position",
            "Sonar",
            "Stiffness",
            "Temperature",
            "Touch",
            "Status"
        ]
    );
    let value = |key: &str| &entries.iter().find(|(k, _)| k.as_str() == Some(key)).unwrap().1;
    let config: Vec<&str> =
        value("RobotConfig").as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(config, ["P0000073A03S83I00011", "6.0.0", "P0000074A05S93M00061", "6.0.0"]);
    let position = value("Position").as_array().unwrap();
    assert_eq!(position.len(), 25);
    assert!(position.iter().zip(map.position).all(|(v, p)| *v == Value::F32(p)), "float32 everywhere");
    let status = value("Status").as_array().unwrap();
    assert!(status.iter().zip(map.status).all(|(v, s)| v.as_u64() == Some(s as u64)));
    // Status as one-byte fixints: the array's three header bytes then 25 bytes, at the end.
    assert_eq!(&wire[SENSOR_MAP_BYTES - 25..], map.status.map(|s| s as u8));
    assert_eq!(wire[0], 0x8d, "a fixmap of 13 entries");
}

#[test]
fn round_trips_every_value() {
    let map = robot_sensor_map();
    let mut back = SensorMap::default();
    let decoded = decode_sensor_map(&encoded(&map), &mut back).unwrap();
    assert_eq!(decoded.consumed, SENSOR_MAP_BYTES);
    assert_eq!(decoded.present, SensorKeys::ALL);
    assert_eq!(decoded.unknown_keys, 0);
    assert_eq!(back, map);
}

#[test]
fn refuses_what_cannot_take_896_bytes_and_writes_nothing() {
    let mut wire = [0xeeu8; SENSOR_MAP_BYTES];
    let mut map = robot_sensor_map();
    map.robot_config.head_id = ConfigText::new("SHORT-ID").unwrap();
    assert_eq!(
        encode_sensor_map(&map, &mut wire),
        Err(EncodeError::RobotConfigLength { field: "head id", expected: 20, found: 8 })
    );
    let mut map = robot_sensor_map();
    map.robot_config.body_version = ConfigText::new("6.0.10").unwrap();
    assert_eq!(
        encode_sensor_map(&map, &mut wire),
        Err(EncodeError::RobotConfigLength { field: "body version", expected: 5, found: 6 })
    );
    let mut map = robot_sensor_map();
    map.status[3] = 128;
    assert_eq!(
        encode_sensor_map(&map, &mut wire),
        Err(EncodeError::StatusOutOfRange { index: 3, value: 128 })
    );
    map.status[3] = -1;
    assert_eq!(
        encode_sensor_map(&map, &mut wire),
        Err(EncodeError::StatusOutOfRange { index: 3, value: -1 })
    );
    assert_eq!(wire, [0xee; SENSOR_MAP_BYTES]);
    assert!(encode_sensor_map(&SensorMap::default(), &mut wire).is_err(), "empty ids are not a robot's");
}

/// The map as another LoLA might send it: keys in another order, float64 and integers for
/// numbers, an unknown key, texts of other lengths.
#[test]
fn decodes_keys_in_another_order_with_other_number_widths() {
    let expected = robot_sensor_map();
    let texts = |config: [&str; 4]| Value::Array(config.iter().map(|&t| Value::from(t)).collect());
    let message = Value::Map(vec![
        entry("Status", Value::Array(expected.status.iter().map(|&s| Value::from(s)).collect())),
        entry("Touch", floats64(&expected.touch)),
        entry("Position", floats64(&expected.position)),
        entry("NewSensor", Value::Array(vec![Value::from(1), Value::F64(2.5), Value::from("x")])),
        entry("Stiffness", floats64(&expected.stiffness)),
        entry("Current", floats64(&expected.current)),
        entry("Temperature", floats64(&expected.temperature)),
        entry("Accelerometer", floats64(&expected.accelerometer)),
        entry("Gyroscope", floats64(&expected.gyroscope)),
        entry("Angles", floats64(&expected.angles)),
        entry("Battery", floats64(&expected.battery)),
        entry("FSR", floats64(&expected.fsr)),
        entry("Sonar", Value::Array(vec![Value::from(1u8), Value::from(-2i64)])),
        entry("RobotConfig", texts(["BODY", "6.1", "HEAD-ID-OF-32-BYTES-0123456789AB", ""])),
    ]);
    let bytes = encode(&message);
    let mut map = SensorMap::default();
    let decoded = decode_sensor_map(&bytes, &mut map).unwrap();
    assert_eq!(decoded.consumed, bytes.len());
    assert_eq!(decoded.present, SensorKeys::ALL);
    assert_eq!(decoded.unknown_keys, 1);
    assert_eq!(map.sonar, [1.0, -2.0]);
    assert_eq!(map.robot_config.head_id.as_str(), "HEAD-ID-OF-32-BYTES-0123456789AB");
    assert_eq!(map.robot_config.head_version.as_str(), "");
    let mut comparable = map;
    comparable.sonar = expected.sonar;
    comparable.robot_config = expected.robot_config;
    assert_eq!(comparable, expected);
}

#[test]
fn absent_keys_leave_their_fields_and_are_reported() {
    let message = Value::Map(vec![entry("Sonar", floats64(&[0.5, 0.75]))]);
    let mut map = robot_sensor_map();
    let before = map;
    let decoded = decode_sensor_map(&encode(&message), &mut map).unwrap();
    assert_eq!(decoded.present, SensorKeys::NONE.with(SensorKey::Sonar));
    assert_eq!(map.sonar, [0.5, 0.75]);
    map.sonar = before.sonar;
    assert_eq!(map, before);
}

#[test]
fn reads_a_stream_one_map_at_a_time() {
    let first = robot_sensor_map();
    let mut second = first;
    second.position[4] = -1.5;
    let mut stream = encoded(&first).to_vec();
    stream.extend_from_slice(&encoded(&second));
    let mut map = SensorMap::default();
    let decoded = decode_sensor_map(&stream, &mut map).unwrap();
    assert_eq!((decoded.consumed, map), (SENSOR_MAP_BYTES, first));
    let decoded = decode_sensor_map(&stream[decoded.consumed..], &mut map).unwrap();
    assert_eq!((decoded.consumed, map), (SENSOR_MAP_BYTES, second));
}
