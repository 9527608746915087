//! NAOqi's DCM preferences: key/value pairs of the robot description, in three tables
//! named after NAOqi's sub-preference files (the targets of `DCM.preferences`), shown in
//! ALMemory under their keys. A key naming a device's `Gain` or `Offset` overrides the
//! description's value for that device: that is where joint calibration is kept.

mod error;
mod limits;

pub use error::PreferenceError;
pub use limits::{
    check_conversion, PreferenceLimit, GAIN_RATIO, MAX_KEYS_PER_TARGET, MAX_TEXT_BYTES, RANGE_MARGIN,
};

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::excerpt;
use crate::subdevice::{Conversion, DeviceSpec};

/// What a preference key starts with: ALMemory prefixes the DCM owns, where no real-time
/// value and no event (`DCM/...`, `HAL/...`) lives beside its data.
pub const PREFERENCE_PREFIXES: [&str; 2] = ["RobotConfig/", "Device/"];

/// One of NAOqi's sub-preference files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `Device_Body.xml`, kept in the chest board: the body's identity and calibration.
    Chest,
    /// `Device_Head.xml`: the head's.
    Head,
    /// `Device_Local.xml`: this robot's local settings, where calibration is saved.
    Local,
}

impl Target {
    /// Every target, the later overriding the earlier for a key in several.
    pub const ALL: [Target; 3] = [Target::Chest, Target::Head, Target::Local];

    /// The table's name in the description: `[preferences.chest]`.
    pub fn table(self) -> &'static str {
        match self {
            Target::Chest => "chest",
            Target::Head => "head",
            Target::Local => "local",
        }
    }

    /// NAOqi's target name: `Chest` (or `Body`), `Head`, `Local`, or `All` for all three.
    pub fn parse(name: &str) -> Result<&'static [Target], PreferenceError> {
        match name {
            "Chest" | "Body" => Ok(&[Target::Chest]),
            "Head" => Ok(&[Target::Head]),
            "Local" => Ok(&[Target::Local]),
            "All" => Ok(&Target::ALL),
            "Main" => Err(PreferenceError::MainTarget),
            other => Err(PreferenceError::UnknownTarget(other.to_owned())),
        }
    }
}

/// A preference's value: what NAOqi's preference files hold.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PreferenceValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl PreferenceValue {
    pub fn number(&self) -> Option<f64> {
        match self {
            PreferenceValue::Int(integer) => Some(*integer as f64),
            PreferenceValue::Float(number) => Some(*number),
            PreferenceValue::Bool(_) | PreferenceValue::Text(_) => None,
        }
    }
}

/// The `[preferences]` tables of a robot description.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preferences {
    #[serde(default)]
    chest: BTreeMap<String, PreferenceValue>,
    #[serde(default)]
    head: BTreeMap<String, PreferenceValue>,
    #[serde(default)]
    local: BTreeMap<String, PreferenceValue>,
}

impl Preferences {
    pub fn table(&self, target: Target) -> &BTreeMap<String, PreferenceValue> {
        match target {
            Target::Chest => &self.chest,
            Target::Head => &self.head,
            Target::Local => &self.local,
        }
    }

    fn table_mut(&mut self, target: Target) -> &mut BTreeMap<String, PreferenceValue> {
        match target {
            Target::Chest => &mut self.chest,
            Target::Head => &mut self.head,
            Target::Local => &mut self.local,
        }
    }

    /// The value in effect: Local's over Head's over Chest's.
    pub fn get(&self, key: &str) -> Option<&PreferenceValue> {
        Target::ALL.iter().rev().find_map(|&target| self.table(target).get(key))
    }

    /// Every key of every table.
    pub fn keys(&self) -> BTreeSet<&str> {
        Target::ALL.iter().flat_map(|&target| self.table(target).keys()).map(String::as_str).collect()
    }

    /// Add or change a key in one table, after checking it ([`check_entry`]) and the
    /// table's size. Answers the value it had in that table, for [`Preferences::restore`].
    pub fn insert(
        &mut self,
        target: Target,
        key: &str,
        value: PreferenceValue,
    ) -> Result<Option<PreferenceValue>, PreferenceError> {
        check_entry(key, &value)?;
        let table = self.table_mut(target);
        if table.len() >= MAX_KEYS_PER_TARGET && !table.contains_key(key) {
            let limit = MAX_KEYS_PER_TARGET;
            return Err(PreferenceLimit::TooManyKeys { table: target.table(), limit }.into());
        }
        Ok(table.insert(key.to_owned(), value))
    }

    /// Put back what a key held in one table before [`Preferences::insert`].
    pub fn restore(&mut self, target: Target, key: &str, previous: Option<PreferenceValue>) {
        let table = self.table_mut(target);
        match previous {
            Some(value) => table.insert(key.to_owned(), value),
            None => table.remove(key),
        };
    }

    /// Replace one table with another description's.
    pub fn replace(&mut self, target: Target, from: &Preferences) {
        *self.table_mut(target) = from.table(target).clone();
    }

    /// A device's conversion with this description's overrides of its gain and offset.
    pub fn conversion(&self, device: &DeviceSpec) -> Conversion {
        let number = |property| self.get(&device.property_key(property)).and_then(PreferenceValue::number);
        Conversion {
            gain: number("Gain").unwrap_or(device.gain),
            offset: number("Offset").unwrap_or(device.offset),
        }
    }

    /// Every device's conversion with these preferences, checked ([`check_conversion`]).
    pub fn check_conversions(&self, devices: &[DeviceSpec]) -> Result<(), PreferenceLimit> {
        devices.iter().try_for_each(|device| check_conversion(device, self.conversion(device)))
    }

    /// Every table's size and entry checked, as when they were added.
    pub fn check(&self) -> Result<(), PreferenceError> {
        for target in Target::ALL {
            let (table, name) = (self.table(target), target.table());
            if table.len() > MAX_KEYS_PER_TARGET {
                return Err(PreferenceError::TableTooLarge { table: name, keys: table.len() });
            }
            for (key, value) in table {
                check_entry(key, value)
                    .map_err(|error| PreferenceError::InTable { table: name, source: Box::new(error) })?;
            }
        }
        Ok(())
    }
}

/// A preference key starts with one of [`PREFERENCE_PREFIXES`]; a text value is at most
/// [`MAX_TEXT_BYTES`]; a key naming a device property (`.../Gain`, `.../Offset`) holds a
/// number, a gain not zero (the device's own bounds are checked with the device).
fn check_entry(key: &str, value: &PreferenceValue) -> Result<(), PreferenceError> {
    if !PREFERENCE_PREFIXES.iter().any(|prefix| key.starts_with(prefix) && key.len() > prefix.len()) {
        return Err(PreferenceError::KeyPrefix { key: excerpt(key) });
    }
    if let PreferenceValue::Text(text) = value {
        if text.len() > MAX_TEXT_BYTES {
            let (key, bytes, limit) = (key.to_owned(), text.len(), MAX_TEXT_BYTES);
            return Err(PreferenceLimit::TextTooLong { key, bytes, limit }.into());
        }
    }
    let property = key.rsplit('/').next().unwrap_or_default();
    match (property, value.number()) {
        ("Gain" | "Offset", None) => Err(PreferenceError::NotANumber(key.to_owned())),
        ("Gain", Some(gain)) if !gain.is_finite() || gain == 0.0 => {
            Err(PreferenceError::GainNotFiniteOrZero(key.to_owned()))
        }
        ("Offset", Some(offset)) if !offset.is_finite() => {
            Err(PreferenceError::OffsetNotFinite(key.to_owned()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_overrides_head_overrides_chest() {
        let mut preferences = Preferences::default();
        let key = "RobotConfig/Body/Type";
        preferences.insert(Target::Chest, key, PreferenceValue::Text("chest".into())).unwrap();
        assert_eq!(preferences.get(key), Some(&PreferenceValue::Text("chest".into())));
        preferences.insert(Target::Local, key, PreferenceValue::Text("local".into())).unwrap();
        preferences.insert(Target::Head, key, PreferenceValue::Text("head".into())).unwrap();
        assert_eq!(preferences.get(key), Some(&PreferenceValue::Text("local".into())));
        assert_eq!(preferences.keys().into_iter().collect::<Vec<_>>(), [key]);
    }

    #[test]
    fn keys_and_values_are_checked() {
        let mut preferences = Preferences::default();
        let text = PreferenceValue::Text("x".into());
        let mut refused = |target, key: &str, value| preferences.insert(target, key, value).unwrap_err();
        let error = refused(Target::Chest, "Motion/Mine", text.clone());
        assert_eq!(error, PreferenceError::KeyPrefix { key: "Motion/Mine".into() });
        assert!(error.to_string().contains("must start"), "{error}");
        let error = refused(Target::Chest, "Device/", text.clone());
        assert!(matches!(error, PreferenceError::KeyPrefix { .. }), "a prefix alone is no key");
        let offset = "Device/SubDeviceList/HeadYaw/Position/Sensor/Offset";
        assert_eq!(refused(Target::Local, offset, text).to_string(), format!("{offset} must be a number"));
        let gain = "Device/SubDeviceList/HeadYaw/Position/Sensor/Gain";
        assert!(refused(Target::Local, gain, PreferenceValue::Int(0)).to_string().contains("not 0"));
        let infinite = PreferenceValue::Float(f64::INFINITY);
        assert_eq!(refused(Target::Local, offset, infinite), PreferenceError::OffsetNotFinite(offset.into()));
        for key in ["DCM/PostProcess", "HAL/Ack"] {
            let error = refused(Target::Chest, key, PreferenceValue::Int(1)).to_string();
            assert!(error.contains("must start with one of RobotConfig/, Device/"), "{error}");
        }
        preferences.insert(Target::Local, offset, PreferenceValue::Int(2)).unwrap();
        assert!(preferences.check().is_ok());
        let long_key = format!("Motion/{}", "x".repeat(100));
        let error = preferences.insert(Target::Chest, &long_key, PreferenceValue::Int(1)).unwrap_err();
        assert!(error.to_string().contains("… (107 bytes) must start"), "the key is quoted short: {error}");
    }

    #[test]
    fn tables_and_texts_are_bounded() {
        let mut preferences = Preferences::default();
        let key = |index: usize| format!("RobotConfig/Key{index}");
        for index in 0..MAX_KEYS_PER_TARGET {
            preferences.insert(Target::Head, &key(index), PreferenceValue::Int(1)).unwrap();
        }
        let error =
            preferences.insert(Target::Head, "RobotConfig/OneMore", PreferenceValue::Int(1)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "[preferences.head] already holds 1024 keys, the most a table may hold"
        );
        assert!(preferences.insert(Target::Head, &key(3), PreferenceValue::Int(2)).is_ok(), "a change fits");
        assert!(preferences.insert(Target::Local, "RobotConfig/OneMore", PreferenceValue::Int(1)).is_ok());
        let long = PreferenceValue::Text("x".repeat(MAX_TEXT_BYTES + 1));
        let error = preferences.insert(Target::Local, "RobotConfig/Long", long).unwrap_err();
        assert_eq!(
            error.to_string(),
            "RobotConfig/Long is 257 bytes long, the longest text value is 256 bytes"
        );
        let longest = PreferenceValue::Text("x".repeat(MAX_TEXT_BYTES));
        assert!(preferences.insert(Target::Local, "RobotConfig/Long", longest).is_ok());
    }

    #[test]
    fn a_table_read_from_a_description_is_checked_as_added() {
        let mut preferences = Preferences::default();
        preferences.local.insert("Motion/Mine".into(), PreferenceValue::Int(1));
        let error = preferences.check().unwrap_err().to_string();
        assert!(error.starts_with("[preferences.local]: preference key Motion/Mine must start"), "{error}");
        preferences.local = (0..=MAX_KEYS_PER_TARGET)
            .map(|index| (format!("RobotConfig/Key{index}"), PreferenceValue::Int(1)))
            .collect();
        let error = preferences.check().unwrap_err();
        assert_eq!(error, PreferenceError::TableTooLarge { table: "local", keys: MAX_KEYS_PER_TARGET + 1 });
    }

    #[test]
    fn an_insert_is_undone_by_restoring_what_it_answered() {
        let mut preferences = Preferences::default();
        let key = "RobotConfig/Body/Type";
        let none = preferences.insert(Target::Chest, key, PreferenceValue::Text("NAO".into())).unwrap();
        assert_eq!(none, None);
        let previous = preferences.insert(Target::Chest, key, PreferenceValue::Text("x".into())).unwrap();
        assert_eq!(previous, Some(PreferenceValue::Text("NAO".into())));
        preferences.restore(Target::Chest, key, previous);
        assert_eq!(preferences.get(key), Some(&PreferenceValue::Text("NAO".into())));
        preferences.restore(Target::Chest, key, none);
        assert_eq!(preferences.get(key), None);
    }

    #[test]
    fn targets_are_named_as_in_naoqi() {
        assert_eq!(Target::parse("Body").unwrap(), [Target::Chest]);
        assert_eq!(Target::parse("All").unwrap(), Target::ALL);
        assert!(Target::parse("Main").unwrap_err().to_string().contains("does not change"));
        assert_eq!(Target::parse("Arm").unwrap_err(), PreferenceError::UnknownTarget("Arm".into()));
    }
}
