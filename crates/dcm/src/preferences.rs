//! NAOqi's DCM preferences: key/value pairs of the robot description, in three tables
//! named after NAOqi's sub-preference files (the targets of `DCM.preferences`), shown in
//! ALMemory under their keys. A key naming a device's `Gain` or `Offset` overrides the
//! description's value for that device: that is where joint calibration is kept.

mod file;

pub use file::{load, save};

use std::collections::{BTreeMap, BTreeSet};

use naobroker_framework::Value;
use naobroker_memory::DCM_OWNED_PREFIXES;
use serde::Deserialize;

use crate::device::{Conversion, DeviceSpec};

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
    pub fn parse(name: &str) -> Result<&'static [Target], String> {
        match name {
            "Chest" | "Body" => Ok(&[Target::Chest]),
            "Head" => Ok(&[Target::Head]),
            "Local" => Ok(&[Target::Local]),
            "All" => Ok(&Target::ALL),
            "Main" => Err("the main description (its [[device]] tables) does not change while the broker \
                 runs: use the target Chest, Head, Local or All"
                .into()),
            other => Err(format!("unknown preference target {other:?} (Chest, Head, Local or All)")),
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
    /// A value sent by a client: a string, a number or a boolean.
    pub fn from_value(value: &Value) -> Result<PreferenceValue, String> {
        match value {
            Value::Boolean(flag) => Ok(PreferenceValue::Bool(*flag)),
            Value::Integer(integer) => integer
                .as_i64()
                .map(PreferenceValue::Int)
                .ok_or_else(|| "the preference value is out of the int64 range".to_owned()),
            Value::F32(number) => Ok(PreferenceValue::Float(f64::from(*number))),
            Value::F64(number) => Ok(PreferenceValue::Float(*number)),
            Value::String(text) => text
                .as_str()
                .map(|text| PreferenceValue::Text(text.to_owned()))
                .ok_or_else(|| "the preference value is not valid UTF-8".to_owned()),
            other => Err(format!("a preference value is a string, a number or a boolean, got {other}")),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            PreferenceValue::Bool(flag) => Value::Boolean(*flag),
            PreferenceValue::Int(integer) => Value::from(*integer),
            PreferenceValue::Float(number) => Value::F64(*number),
            PreferenceValue::Text(text) => Value::from(text.as_str()),
        }
    }

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

    /// Add or change a key in one table, after checking it ([`check_entry`]).
    pub fn insert(&mut self, target: Target, key: &str, value: PreferenceValue) -> Result<(), String> {
        check_entry(key, &value)?;
        self.table_mut(target).insert(key.to_owned(), value);
        Ok(())
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

    /// Every entry checked, as when it was added.
    pub fn check(&self) -> Result<(), String> {
        for target in Target::ALL {
            for (key, value) in self.table(target) {
                check_entry(key, value)
                    .map_err(|error| format!("[preferences.{}]: {error}", target.table()))?;
            }
        }
        Ok(())
    }
}

/// A preference key belongs to the DCM in ALMemory (`Device/`, `RobotConfig/`, ...); one
/// naming a device property (`.../Gain`, `.../Offset`) holds a number, a gain not zero.
fn check_entry(key: &str, value: &PreferenceValue) -> Result<(), String> {
    if !DCM_OWNED_PREFIXES.iter().any(|prefix| key.starts_with(prefix) && key.len() > prefix.len()) {
        return Err(format!(
            "preference key {key:?} must start with one of {} (ALMemory keys the DCM owns)",
            DCM_OWNED_PREFIXES.join(", ")
        ));
    }
    let property = key.rsplit('/').next().unwrap_or_default();
    if matches!(property, "Gain" | "Offset") {
        match value.number() {
            None => return Err(format!("{key} must be a number")),
            Some(number) if !number.is_finite() || (property == "Gain" && number == 0.0) => {
                return Err(format!(
                    "{key} must be a finite number{}",
                    if property == "Gain" { ", not 0" } else { "" }
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{DeviceModel, RobotDescription};

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
        assert!(preferences
            .insert(Target::Chest, "Motion/Mine", text.clone())
            .unwrap_err()
            .contains("must start"));
        assert!(
            preferences.insert(Target::Chest, "Device/", text.clone()).is_err(),
            "a prefix alone is no key"
        );
        let offset = "Device/SubDeviceList/HeadYaw/Position/Sensor/Offset";
        assert!(preferences.insert(Target::Local, offset, text).unwrap_err().contains("must be a number"));
        let gain = "Device/SubDeviceList/HeadYaw/Position/Sensor/Gain";
        assert!(preferences
            .insert(Target::Local, gain, PreferenceValue::Int(0))
            .unwrap_err()
            .contains("not 0"));
        preferences.insert(Target::Local, offset, PreferenceValue::Int(2)).unwrap();
        assert!(preferences.check().is_ok());
    }

    #[test]
    fn gain_and_offset_keys_override_the_device() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let yaw = &model.actuators[model.actuator("HeadYaw/Position/Actuator/Value").unwrap()];
        let mut preferences = Preferences::default();
        assert_eq!(preferences.conversion(yaw), yaw.conversion());
        let key = "Device/SubDeviceList/HeadYaw/Position/Actuator/Offset";
        preferences.insert(Target::Head, key, PreferenceValue::Float(-12.5)).unwrap();
        assert_eq!(preferences.conversion(yaw), Conversion { gain: yaw.gain, offset: -12.5 });
    }

    #[test]
    fn values_cross_to_and_from_the_wire() {
        for value in [Value::Boolean(true), Value::from(3), Value::F64(0.5), Value::from("NAO")] {
            assert_eq!(PreferenceValue::from_value(&value).unwrap().to_value(), value);
        }
        assert_eq!(PreferenceValue::from_value(&Value::F32(0.5)).unwrap(), PreferenceValue::Float(0.5));
        assert!(PreferenceValue::from_value(&Value::Array(vec![]))
            .unwrap_err()
            .contains("a string, a number"));
        assert_eq!(Target::parse("Body").unwrap(), [Target::Chest]);
        assert_eq!(Target::parse("All").unwrap(), Target::ALL);
        assert!(Target::parse("Main").unwrap_err().contains("does not change"));
        assert!(Target::parse("Arm").unwrap_err().contains("unknown preference target"));
    }
}
