//! The robot side and the client side of NAO V6's LoLA protocol, without I/O: the sensor map
//! LoLA sends every 12 ms and the actuator map its one client answers, as typed fixed arrays,
//! their MessagePack encoding and a streaming decoder, and the NAOqi DCM name of every field.
//!
//! LoLA (`/opt/aldebaran/bin/lola`) listens on the Unix stream socket `/tmp/robocup`
//! ([`DEFAULT_SOCKET`]); its one client reads a sensor map per cycle and answers with one
//! actuator map. Neither message has a length prefix: a real robot's sensor map is always
//! [`SENSOR_MAP_BYTES`] (896) bytes, which [`encode_sensor_map`] reproduces exactly, while
//! [`decode_sensor_map`] trusts no size and reads a stream: it says
//! [`DecodeError::Incomplete`] until a whole map arrived, and how many bytes the map took.
//!
//! Nothing here allocates after construction: maps are fixed arrays, texts are inline
//! ([`ConfigText`]), encoders write into the caller's fixed buffer and decoders write into
//! the caller's map. Every length read from the wire is bounded before it is used
//! ([`MAX_MESSAGE_BYTES`], [`MAX_MAP_ENTRIES`], [`MAX_KEY_BYTES`], [`MAX_SKIPPED_LEN`]).
//!
//! ```
//! use naobroker_lola::{decode_sensor_map, encode_sensor_map, ConfigText, SensorMap};
//! use naobroker_lola::SENSOR_MAP_BYTES;
//!
//! let mut sent = SensorMap::default();
//! sent.robot_config.body_id = ConfigText::new("P0000073A03S83I00011").unwrap();
//! sent.robot_config.body_version = ConfigText::new("6.0.0").unwrap();
//! sent.robot_config.head_id = ConfigText::new("P0000074A05S93M00061").unwrap();
//! sent.robot_config.head_version = ConfigText::new("6.0.0").unwrap();
//! sent.position[0] = 0.25;
//! let mut wire = [0u8; SENSOR_MAP_BYTES];
//! encode_sensor_map(&sent, &mut wire).unwrap();
//!
//! let mut received = SensorMap::default();
//! let decoded = decode_sensor_map(&wire, &mut received).unwrap();
//! assert_eq!(decoded.consumed, SENSOR_MAP_BYTES);
//! assert_eq!(received, sent);
//! ```
//!
//! Protocol facts and their sources: `docs/lolasim.md` and issue 14's reference (lola.md).
#![deny(unsafe_code)]

mod actuator;
mod decode;
mod encode;
mod error;
mod keys;
pub mod names;
mod read;
mod sensor;
mod text;
mod write;

pub use actuator::ActuatorMap;
pub use decode::{decode_actuator_map, decode_sensor_map, Decoded};
pub use encode::{encode_actuator_map, encode_sensor_map};
pub use error::{DecodeError, EncodeError, ValueKind};
pub use keys::{ActuatorKey, ActuatorKeys, KeySet, MapKey, SensorKey, SensorKeys};
pub use sensor::{RobotConfig, SensorMap};
pub use text::{ConfigText, TextTooLong, CONFIG_TEXT_CAPACITY};

/// Where LoLA listens on a NAO V6.
pub const DEFAULT_SOCKET: &str = "/tmp/robocup";
/// LoLA's cycle: one sensor map every 12 ms (83 Hz).
pub const CYCLE_US: u64 = 12_000;
/// The joints LoLA drives, in [`names::JOINTS`]' order (RHipYawPitch is not among them).
pub const JOINT_COUNT: usize = 25;
/// A real robot's sensor map, and every map [`encode_sensor_map`] writes: 896 bytes.
pub const SENSOR_MAP_BYTES: usize = 896;
/// The largest actuator map [`encode_actuator_map`] writes: all 11 keys, 786 bytes (777
/// without `Sonar`, as B-Human sends it).
pub const ACTUATOR_MAP_MAX_BYTES: usize = 786;
/// A message the decoders read: a map that does not end within this many bytes is refused
/// ([`DecodeError::TooLong`]), so a client buffering this much knows that
/// [`DecodeError::Incomplete`] means "read more".
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// The most keys a map may have (a real sensor map has 13, an actuator map at most 11).
pub const MAX_MAP_ENTRIES: u32 = 32;
/// The longest key accepted.
pub const MAX_KEY_BYTES: u32 = 32;
/// The longest array, text or binary value of an unknown key that is skipped.
pub const MAX_SKIPPED_LEN: u32 = 64;
