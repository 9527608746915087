//! The sensor values a simulator reports as they are told (touch, FSR, inertial unit,
//! battery, sonar, joint status, robot identity), and the `Key[index]=value` assignments
//! its command line and its controls take.

use naobroker_lola::names::{self, BatteryOrder};
use naobroker_lola::{ConfigText, MapKey, RobotConfig, SensorKey, JOINT_COUNT};
use naobroker_robot::device::DeviceModel;

/// Sensor values set from outside: each in LoLA's array order ([`naobroker_lola::names`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScriptedSensors {
    pub accelerometer: [f32; 3],
    pub gyroscope: [f32; 3],
    pub angles: [f32; 2],
    pub battery: [f32; 4],
    pub fsr: [f32; 8],
    pub touch: [f32; 14],
    /// Reported as is when set; otherwise each side reports the room's echo while the client
    /// enables it, and its resting value before.
    pub sonar: Option<[f32; 2]>,
    pub status: [i32; JOINT_COUNT],
    pub robot_config: RobotConfig,
}

/// An assignment that names no scripted value or does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    #[error("{0:?} is not KEY=VALUE,... nor KEY[INDEX]=VALUE")]
    Syntax(String),
    #[error(
        "{0:?} is not a scripted sensor \
         (Accelerometer, Gyroscope, Angles, Battery, FSR, Touch, Sonar, Status, RobotConfig)"
    )]
    UnknownKey(String),
    #[error("{key} has {len} values: index {index} is out of range")]
    IndexOutOfRange { key: &'static str, index: usize, len: usize },
    #[error("{key} takes {expected} values, {found} were given")]
    WrongCount { key: &'static str, expected: usize, found: usize },
    #[error("{key}: {value:?} is not a {kind}")]
    BadValue { key: &'static str, value: String, kind: &'static str },
}

impl ScriptedSensors {
    /// The robot at rest: every value the description's `initial` for its device (0 for a
    /// device it does not have), a simulated robot's identity.
    pub fn at_rest(model: &DeviceModel, battery: BatteryOrder) -> ScriptedSensors {
        let rest = |key: SensorKey, out: &mut [f32]| {
            for (value, name) in out.iter_mut().zip(names::sensor_names(key, battery)) {
                *value = model.sensor(name).map_or(0.0, |sensor| model.sensors[sensor].initial as f32);
            }
        };
        let mut script = ScriptedSensors {
            accelerometer: [0.0; 3],
            gyroscope: [0.0; 3],
            angles: [0.0; 2],
            battery: [0.0; 4],
            fsr: [0.0; 8],
            touch: [0.0; 14],
            sonar: None,
            status: [0; JOINT_COUNT],
            robot_config: simulated_robot_config(),
        };
        rest(SensorKey::Accelerometer, &mut script.accelerometer);
        rest(SensorKey::Gyroscope, &mut script.gyroscope);
        rest(SensorKey::Angles, &mut script.angles);
        rest(SensorKey::Battery, &mut script.battery);
        rest(SensorKey::Fsr, &mut script.fsr);
        rest(SensorKey::Touch, &mut script.touch);
        script
    }

    /// Apply `KEY=V1,V2,...` (every value of the key) or `KEY[INDEX]=VALUE` (one), keys as
    /// on the wire: `Touch[1]=1`, `Accelerometer=0,0,-9.81`, `Sonar=0.4,0.5`,
    /// `RobotConfig[0]=P0000073A03S83I00011`. On error nothing changes.
    pub fn assign(&mut self, assignment: &str) -> Result<(), ScriptError> {
        let syntax = || ScriptError::Syntax(assignment.to_owned());
        let (target, value) = assignment.split_once('=').ok_or_else(syntax)?;
        let (name, index) = match target.split_once('[') {
            Some((name, rest)) => {
                let index = rest.strip_suffix(']').and_then(|i| i.parse().ok()).ok_or_else(syntax)?;
                (name.trim(), Some(index))
            }
            None => (target.trim(), None),
        };
        let key =
            SensorKey::from_wire_name(name.as_bytes()).ok_or_else(|| ScriptError::UnknownKey(name.into()))?;
        let mut changed = *self;
        match key {
            SensorKey::Accelerometer => assign_floats(key, &mut changed.accelerometer, index, value)?,
            SensorKey::Gyroscope => assign_floats(key, &mut changed.gyroscope, index, value)?,
            SensorKey::Angles => assign_floats(key, &mut changed.angles, index, value)?,
            SensorKey::Battery => assign_floats(key, &mut changed.battery, index, value)?,
            SensorKey::Fsr => assign_floats(key, &mut changed.fsr, index, value)?,
            SensorKey::Touch => assign_floats(key, &mut changed.touch, index, value)?,
            SensorKey::Sonar => {
                let mut sonar = changed.sonar.unwrap_or_default();
                assign_floats(key, &mut sonar, index, value)?;
                changed.sonar = Some(sonar);
            }
            SensorKey::Status => assign_parsed(key, &mut changed.status, index, value, "integer")?,
            SensorKey::RobotConfig => assign_texts(&mut changed.robot_config, index, value)?,
            SensorKey::Position | SensorKey::Stiffness | SensorKey::Current | SensorKey::Temperature => {
                return Err(ScriptError::UnknownKey(name.into()))
            }
        }
        *self = changed;
        Ok(())
    }
}

/// A simulated robot's identity, in a real robot's lengths (20-character ids, "6.0.0").
pub fn simulated_robot_config() -> RobotConfig {
    let text = |text: &str| ConfigText::new(text).expect("fits");
    RobotConfig {
        body_id: text("LOLASIM-BODY-0000001"),
        body_version: text("6.0.0"),
        head_id: text("LOLASIM-HEAD-0000001"),
        head_version: text("6.0.0"),
    }
}

fn assign_floats(
    key: SensorKey,
    out: &mut [f32],
    index: Option<usize>,
    value: &str,
) -> Result<(), ScriptError> {
    assign_parsed(key, out, index, value, "number")
}

fn assign_parsed<T: std::str::FromStr>(
    key: SensorKey,
    out: &mut [T],
    index: Option<usize>,
    value: &str,
    kind: &'static str,
) -> Result<(), ScriptError> {
    let name = key.wire_name();
    let parse = |text: &str| {
        text.trim().parse::<T>().map_err(|_| ScriptError::BadValue { key: name, value: text.into(), kind })
    };
    match index {
        Some(index) => {
            let len = out.len();
            *out.get_mut(index).ok_or(ScriptError::IndexOutOfRange { key: name, index, len })? =
                parse(value)?;
        }
        None => {
            let values: Vec<&str> = value.split(',').collect();
            if values.len() != out.len() {
                return Err(ScriptError::WrongCount { key: name, expected: out.len(), found: values.len() });
            }
            for (slot, text) in out.iter_mut().zip(values) {
                *slot = parse(text)?;
            }
        }
    }
    Ok(())
}

fn assign_texts(config: &mut RobotConfig, index: Option<usize>, value: &str) -> Result<(), ScriptError> {
    let key = SensorKey::RobotConfig.wire_name();
    let set = |slot: &mut ConfigText, text: &str| {
        slot.set(text).map_err(|_| ScriptError::BadValue {
            key,
            value: text.into(),
            kind: "text of 32 bytes at most",
        })
    };
    match index {
        Some(index) => {
            let slot = config.texts_mut().into_iter().nth(index);
            set(slot.ok_or(ScriptError::IndexOutOfRange { key, index, len: 4 })?, value)
        }
        None => {
            let values: Vec<&str> = value.split(',').collect();
            if values.len() != 4 {
                return Err(ScriptError::WrongCount { key, expected: 4, found: values.len() });
            }
            config.texts_mut().into_iter().zip(values).try_for_each(|(slot, text)| set(slot, text))
        }
    }
}
