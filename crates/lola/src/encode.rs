//! Writing LoLA's maps: the sensor map in a real robot's exact 896 bytes, the actuator map
//! with the keys asked for, float32 everywhere.

use crate::actuator::ActuatorMap;
use crate::error::EncodeError;
use crate::keys::{ActuatorKey, ActuatorKeys, SensorKey};
use crate::sensor::{RobotConfig, SensorMap};
use crate::write::Writer;
use crate::{ACTUATOR_MAP_MAX_BYTES, SENSOR_MAP_BYTES};

/// A real robot's id length and version length (`RobotConfig`).
const ID_BYTES: usize = 20;
const VERSION_BYTES: usize = 5;

/// Write `map` as a real robot does: 13 keys in its order, float32 values, Status as
/// positive fixints, exactly [`SENSOR_MAP_BYTES`] bytes. Refused (and nothing written) when
/// the map would not take exactly that: ids not 20 bytes, versions not 5, a Status outside
/// 0..=127.
pub fn encode_sensor_map(map: &SensorMap, out: &mut [u8; SENSOR_MAP_BYTES]) -> Result<(), EncodeError> {
    check_robot_config(&map.robot_config)?;
    if let Some((index, &value)) =
        map.status.iter().enumerate().find(|(_, value)| !(0..=127).contains(*value))
    {
        return Err(EncodeError::StatusOutOfRange { index, value });
    }
    let mut writer = Writer::new(out);
    writer.small_map(SensorKey::ALL.len());
    for key in SensorKey::ALL {
        writer.text(key.wire_name());
        match key {
            SensorKey::RobotConfig => {
                writer.array(4);
                for text in map.robot_config.texts() {
                    writer.text(text.as_str());
                }
            }
            SensorKey::Accelerometer => writer.floats(&map.accelerometer),
            SensorKey::Angles => writer.floats(&map.angles),
            SensorKey::Battery => writer.floats(&map.battery),
            SensorKey::Current => writer.floats(&map.current),
            SensorKey::Fsr => writer.floats(&map.fsr),
            SensorKey::Gyroscope => writer.floats(&map.gyroscope),
            SensorKey::Position => writer.floats(&map.position),
            SensorKey::Sonar => writer.floats(&map.sonar),
            SensorKey::Stiffness => writer.floats(&map.stiffness),
            SensorKey::Temperature => writer.floats(&map.temperature),
            SensorKey::Touch => writer.floats(&map.touch),
            SensorKey::Status => {
                writer.array(map.status.len());
                for &status in &map.status {
                    // Checked above: 0..=127.
                    writer.fixint(status as u8);
                }
            }
        }
    }
    debug_assert_eq!(writer.written(), SENSOR_MAP_BYTES);
    Ok(())
}

fn check_robot_config(config: &RobotConfig) -> Result<(), EncodeError> {
    let expected = [
        ("body id", ID_BYTES),
        ("body version", VERSION_BYTES),
        ("head id", ID_BYTES),
        ("head version", VERSION_BYTES),
    ];
    for ((field, expected), text) in expected.into_iter().zip(config.texts()) {
        if text.len() != expected {
            return Err(EncodeError::RobotConfigLength { field, expected, found: text.len() });
        }
    }
    Ok(())
}

/// Write the `keys` of `map` (in [`ActuatorKey::ALL`]'s order, float32 values, Sonar as
/// bools) and return the bytes written: 786 for [`ActuatorKeys::ALL`], 777 for
/// [`ActuatorKeys::WITHOUT_SONAR`]; never more than [`ACTUATOR_MAP_MAX_BYTES`].
pub fn encode_actuator_map(
    map: &ActuatorMap,
    keys: ActuatorKeys,
    out: &mut [u8; ACTUATOR_MAP_MAX_BYTES],
) -> usize {
    let mut writer = Writer::new(out);
    writer.small_map(keys.len());
    for key in keys.iter() {
        writer.text(key.wire_name());
        match key {
            ActuatorKey::Position => writer.floats(&map.position),
            ActuatorKey::Stiffness => writer.floats(&map.stiffness),
            ActuatorKey::REar => writer.floats(&map.r_ear),
            ActuatorKey::LEar => writer.floats(&map.l_ear),
            ActuatorKey::Chest => writer.floats(&map.chest),
            ActuatorKey::LEye => writer.floats(&map.l_eye),
            ActuatorKey::REye => writer.floats(&map.r_eye),
            ActuatorKey::LFoot => writer.floats(&map.l_foot),
            ActuatorKey::RFoot => writer.floats(&map.r_foot),
            ActuatorKey::Skull => writer.floats(&map.skull),
            ActuatorKey::Sonar => {
                writer.array(map.sonar.len());
                for &enabled in &map.sonar {
                    writer.boolean(enabled);
                }
            }
        }
    }
    writer.written()
}
