//! Maps shaped as a real robot sends them, and MessagePack built by an independent encoder.
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use naobroker_lola::{ActuatorMap, ConfigText, RobotConfig, SensorMap};
use rmpv::Value;

/// A sensor map with every value distinct, ids and versions as on a real robot.
pub fn robot_sensor_map() -> SensorMap {
    let mut map = SensorMap::default();
    let mut next = 0.0f32;
    let mut fill = |values: &mut [f32]| {
        for value in values {
            next += 0.125;
            *value = next;
        }
    };
    fill(&mut map.position);
    fill(&mut map.stiffness);
    fill(&mut map.current);
    fill(&mut map.temperature);
    fill(&mut map.accelerometer);
    fill(&mut map.gyroscope);
    fill(&mut map.angles);
    fill(&mut map.battery);
    fill(&mut map.fsr);
    fill(&mut map.touch);
    fill(&mut map.sonar);
    for (index, status) in map.status.iter_mut().enumerate() {
        *status = (index as i32 * 5) % 128;
    }
    map.battery[1] = -32552.0;
    map.robot_config = robot_config();
    map
}

pub fn robot_config() -> RobotConfig {
    RobotConfig {
        body_id: ConfigText::new("P0000073A03S83I00011").unwrap(),
        body_version: ConfigText::new("6.0.0").unwrap(),
        head_id: ConfigText::new("P0000074A05S93M00061").unwrap(),
        head_version: ConfigText::new("6.0.0").unwrap(),
    }
}

/// An actuator map with every value distinct.
pub fn some_actuator_map() -> ActuatorMap {
    let mut map = ActuatorMap::default();
    let mut next = 0.0f32;
    let mut fill = |values: &mut [f32]| {
        for value in values {
            next += 0.01;
            *value = next;
        }
    };
    fill(&mut map.position);
    fill(&mut map.stiffness);
    fill(&mut map.l_eye);
    fill(&mut map.r_eye);
    fill(&mut map.l_ear);
    fill(&mut map.r_ear);
    fill(&mut map.chest);
    fill(&mut map.l_foot);
    fill(&mut map.r_foot);
    fill(&mut map.skull);
    map.sonar = [true, false];
    map
}

pub fn encode(value: &Value) -> Vec<u8> {
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, value).unwrap();
    bytes
}

pub fn decode(bytes: &[u8]) -> Value {
    let mut reader = bytes;
    let value = rmpv::decode::read_value(&mut reader).unwrap();
    assert!(reader.is_empty(), "one value, nothing after it");
    value
}

pub fn floats64(values: &[f32]) -> Value {
    Value::Array(values.iter().map(|&v| Value::F64(f64::from(v))).collect())
}

pub fn entry(key: &str, value: Value) -> (Value, Value) {
    (Value::from(key), value)
}
