//! Proof that encoding and decoding both maps allocates nothing: not on success, not on a
//! stream cut short, not on hostile input.

mod common;

use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
use naobroker_lola::{
    decode_actuator_map, decode_sensor_map, encode_actuator_map, encode_sensor_map, ActuatorKeys,
    ActuatorMap, SensorMap, ACTUATOR_MAP_MAX_BYTES, SENSOR_MAP_BYTES,
};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn encoding_and_decoding_allocate_nothing() {
    assert!(allocations_seen_on_a_new_thread() > 0, "the counting allocator is installed");
    let sensors = common::robot_sensor_map();
    let actuators = common::some_actuator_map();
    let mut bad_sensors = sensors;
    bad_sensors.status[0] = 200;
    let hostile: [&[u8]; 4] = [
        &[0xdf, 0xff, 0xff, 0xff, 0xff],
        &[0x81, 0xa1, b'X', 0xdd, 0xff, 0xff, 0xff, 0xff],
        &[0x81, 0xa1, b'X', 0x91, 0x91, 0x01],
        &[0x81, 0xa8, b'P', b'o', b's', b'i', b't', b'i', b'o', b'n', 0xc1],
    ];
    let mut sensor_wire = [0u8; SENSOR_MAP_BYTES];
    let mut actuator_wire = [0u8; ACTUATOR_MAP_MAX_BYTES];
    let mut sensors_back = SensorMap::default();
    let mut actuators_back = ActuatorMap::default();

    start_counting();
    for _ in 0..100 {
        encode_sensor_map(&sensors, &mut sensor_wire).unwrap();
        assert!(encode_sensor_map(&bad_sensors, &mut sensor_wire).is_err());
        encode_sensor_map(&sensors, &mut sensor_wire).unwrap();
        decode_sensor_map(&sensor_wire, &mut sensors_back).unwrap();
        assert!(decode_sensor_map(&sensor_wire[..500], &mut sensors_back).is_err());
        let written = encode_actuator_map(&actuators, ActuatorKeys::ALL, &mut actuator_wire);
        decode_actuator_map(&actuator_wire[..written], &mut actuators_back).unwrap();
        for bytes in hostile {
            assert!(decode_actuator_map(bytes, &mut actuators_back).is_err());
            assert!(decode_sensor_map(bytes, &mut sensors_back).is_err());
        }
    }
    let allocations = counted();

    assert_eq!(sensors_back, sensors);
    assert_eq!(actuators_back, actuators);
    assert_eq!(allocations, 0, "allocations or frees while encoding and decoding");
}
