//! Reading LoLA's maps from a stream: keys in any order, numbers of any width, unknown keys
//! skipped (bounded) and counted, every length checked before it is used.

use crate::actuator::ActuatorMap;
use crate::error::{DecodeError, ValueKind};
use crate::keys::{ActuatorKey, ActuatorKeys, KeySet, MapKey, SensorKey, SensorKeys};
use crate::read::{Header, Reader};
use crate::sensor::SensorMap;
use crate::text::{ConfigText, CONFIG_TEXT_CAPACITY};
use crate::{MAX_KEY_BYTES, MAX_MAP_ENTRIES, MAX_MESSAGE_BYTES, MAX_SKIPPED_LEN};

/// What a decoder read: the map's length in bytes (the next message starts there), the
/// known keys it held and how many unknown keys it skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded<Keys> {
    pub consumed: usize,
    pub present: Keys,
    pub unknown_keys: u32,
}

/// Read one sensor map from the start of `bytes` into `map`. A key absent from the message
/// leaves its field as it was (a real robot sends all 13: compare `present` with
/// [`SensorKeys::ALL`]). Numbers may be float32, float64 or integers; `Status` takes
/// integers (and floats holding one) within `i32`.
pub fn decode_sensor_map(bytes: &[u8], map: &mut SensorMap) -> Result<Decoded<SensorKeys>, DecodeError> {
    decode_map(bytes, |reader, key| sensor_value(reader, key, map))
}

fn sensor_value(reader: &mut Reader, key: SensorKey, map: &mut SensorMap) -> Result<(), DecodeError> {
    let name = key.wire_name();
    match key {
        SensorKey::RobotConfig => texts(reader, name, map.robot_config.texts_mut()),
        SensorKey::Accelerometer => floats(reader, name, &mut map.accelerometer),
        SensorKey::Angles => floats(reader, name, &mut map.angles),
        SensorKey::Battery => floats(reader, name, &mut map.battery),
        SensorKey::Current => floats(reader, name, &mut map.current),
        SensorKey::Fsr => floats(reader, name, &mut map.fsr),
        SensorKey::Gyroscope => floats(reader, name, &mut map.gyroscope),
        SensorKey::Position => floats(reader, name, &mut map.position),
        SensorKey::Sonar => floats(reader, name, &mut map.sonar),
        SensorKey::Stiffness => floats(reader, name, &mut map.stiffness),
        SensorKey::Temperature => floats(reader, name, &mut map.temperature),
        SensorKey::Touch => floats(reader, name, &mut map.touch),
        SensorKey::Status => integers(reader, name, &mut map.status),
    }
}

/// Read one actuator map from the start of `bytes` into `map`. Clients omit keys (B-Human
/// sends no `Sonar`): an absent key leaves its field as it was, so decoding into the last
/// map keeps the last commands of what this one did not say. `Sonar` takes bools.
pub fn decode_actuator_map(
    bytes: &[u8],
    map: &mut ActuatorMap,
) -> Result<Decoded<ActuatorKeys>, DecodeError> {
    decode_map(bytes, |reader, key| actuator_value(reader, key, map))
}

fn actuator_value(reader: &mut Reader, key: ActuatorKey, map: &mut ActuatorMap) -> Result<(), DecodeError> {
    let name = key.wire_name();
    match key {
        ActuatorKey::Position => floats(reader, name, &mut map.position),
        ActuatorKey::Stiffness => floats(reader, name, &mut map.stiffness),
        ActuatorKey::REar => floats(reader, name, &mut map.r_ear),
        ActuatorKey::LEar => floats(reader, name, &mut map.l_ear),
        ActuatorKey::Chest => floats(reader, name, &mut map.chest),
        ActuatorKey::LEye => floats(reader, name, &mut map.l_eye),
        ActuatorKey::REye => floats(reader, name, &mut map.r_eye),
        ActuatorKey::LFoot => floats(reader, name, &mut map.l_foot),
        ActuatorKey::RFoot => floats(reader, name, &mut map.r_foot),
        ActuatorKey::Skull => floats(reader, name, &mut map.skull),
        ActuatorKey::Sonar => booleans(reader, name, &mut map.sonar),
    }
}

/// Read one map of `K`'s keys: `read_value` reads each known key's value, unknown keys are
/// skipped and counted, a key seen twice is refused.
fn decode_map<K: MapKey>(
    bytes: &[u8],
    mut read_value: impl FnMut(&mut Reader, K) -> Result<(), DecodeError>,
) -> Result<Decoded<KeySet<K>>, DecodeError> {
    bounded(bytes, |reader| {
        let entries = map_entries(reader)?;
        let mut decoded = Decoded { consumed: 0, present: KeySet::NONE, unknown_keys: 0 };
        for _ in 0..entries {
            let Some(key) = K::from_wire_name(key(reader)?) else {
                skip_unknown_value(reader)?;
                decoded.unknown_keys += 1;
                continue;
            };
            if decoded.present.contains(key) {
                return Err(DecodeError::DuplicateKey { key: key.wire_name() });
            }
            decoded.present = decoded.present.with(key);
            read_value(reader, key)?;
        }
        decoded.consumed = reader.position();
        Ok(decoded)
    })
}

/// Decode from at most [`MAX_MESSAGE_BYTES`]: a map still incomplete there is too long.
fn bounded<T>(
    bytes: &[u8],
    decode: impl FnOnce(&mut Reader) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut reader = Reader::new(&bytes[..bytes.len().min(MAX_MESSAGE_BYTES)]);
    match decode(&mut reader) {
        Err(DecodeError::Incomplete) if bytes.len() >= MAX_MESSAGE_BYTES => {
            Err(DecodeError::TooLong { max: MAX_MESSAGE_BYTES })
        }
        result => result,
    }
}

fn map_entries(reader: &mut Reader) -> Result<u32, DecodeError> {
    match reader.header()? {
        Header::Map(entries) if entries > MAX_MAP_ENTRIES => {
            Err(DecodeError::TooManyEntries { entries, max: MAX_MAP_ENTRIES })
        }
        Header::Map(entries) => Ok(entries),
        other => Err(DecodeError::NotAMap { found: other.kind() }),
    }
}

fn key<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
    match reader.header()? {
        Header::Text(len) if len > MAX_KEY_BYTES => Err(DecodeError::KeyTooLong { len, max: MAX_KEY_BYTES }),
        Header::Text(len) => reader.take(len),
        other => Err(DecodeError::KeyNotText { found: other.kind() }),
    }
}

/// An array header of exactly `expected` elements.
fn array(reader: &mut Reader, key: &'static str, expected: usize) -> Result<(), DecodeError> {
    match reader.header()? {
        Header::Array(found) if found as usize == expected => Ok(()),
        Header::Array(found) => Err(DecodeError::WrongLength { key, expected, found }),
        other => Err(DecodeError::WrongType { key, expected: "an array", found: other.kind() }),
    }
}

fn floats(reader: &mut Reader, key: &'static str, out: &mut [f32]) -> Result<(), DecodeError> {
    array(reader, key, out.len())?;
    for value in out {
        let header = reader.header()?;
        let number = header.number().ok_or(DecodeError::WrongType {
            key,
            expected: "a number",
            found: header.kind(),
        })?;
        *value = number as f32;
    }
    Ok(())
}

fn integers(reader: &mut Reader, key: &'static str, out: &mut [i32]) -> Result<(), DecodeError> {
    array(reader, key, out.len())?;
    for value in out {
        let header = reader.header()?;
        let number = header.number().ok_or(DecodeError::WrongType {
            key,
            expected: "an integer",
            found: header.kind(),
        })?;
        if number.fract() != 0.0 || number < f64::from(i32::MIN) || number > f64::from(i32::MAX) {
            return Err(DecodeError::OutOfRange { key, value: number });
        }
        *value = number as i32;
    }
    Ok(())
}

fn booleans(reader: &mut Reader, key: &'static str, out: &mut [bool]) -> Result<(), DecodeError> {
    array(reader, key, out.len())?;
    for value in out {
        *value = match reader.header()? {
            Header::Bool(enabled) => enabled,
            other => return Err(DecodeError::WrongType { key, expected: "a bool", found: other.kind() }),
        };
    }
    Ok(())
}

fn texts<const N: usize>(
    reader: &mut Reader,
    key: &'static str,
    out: [&mut ConfigText; N],
) -> Result<(), DecodeError> {
    array(reader, key, N)?;
    for text in out {
        let len = match reader.header()? {
            Header::Text(len) if len as usize > CONFIG_TEXT_CAPACITY => {
                return Err(DecodeError::TextTooLong { key, len, max: CONFIG_TEXT_CAPACITY })
            }
            Header::Text(len) => len,
            other => return Err(DecodeError::WrongType { key, expected: "a text", found: other.kind() }),
        };
        let utf8 = std::str::from_utf8(reader.take(len)?).map_err(|_| DecodeError::NotUtf8 { key })?;
        // At most CONFIG_TEXT_CAPACITY bytes, checked above.
        text.set(utf8).map_err(|_| DecodeError::TextTooLong { key, len, max: CONFIG_TEXT_CAPACITY })?;
    }
    Ok(())
}

/// Skip an unknown key's value: a scalar, a text or binary of at most [`MAX_SKIPPED_LEN`]
/// bytes, or a flat array of at most [`MAX_SKIPPED_LEN`] such scalars.
fn skip_unknown_value(reader: &mut Reader) -> Result<(), DecodeError> {
    match reader.header()? {
        Header::Array(len) => {
            check_skipped_len(ValueKind::Array, len)?;
            for _ in 0..len {
                match reader.header()? {
                    nested @ (Header::Array(_) | Header::Map(_)) => {
                        return Err(DecodeError::Nested { found: nested.kind() })
                    }
                    scalar => skip_payload(reader, scalar)?,
                }
            }
            Ok(())
        }
        Header::Map(_) => Err(DecodeError::Nested { found: ValueKind::Map }),
        scalar => skip_payload(reader, scalar),
    }
}

fn skip_payload(reader: &mut Reader, header: Header) -> Result<(), DecodeError> {
    match header {
        Header::Text(len) | Header::Binary(len) | Header::Extension(len) => {
            check_skipped_len(header.kind(), len)?;
            reader.take(len).map(|_| ())
        }
        _ => Ok(()),
    }
}

fn check_skipped_len(found: ValueKind, len: u32) -> Result<(), DecodeError> {
    if len > MAX_SKIPPED_LEN {
        return Err(DecodeError::Oversized { found, len, max: MAX_SKIPPED_LEN });
    }
    Ok(())
}
