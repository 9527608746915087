//! The device model: every actuator and sensor of the robot, from its description.

mod error;
mod file;

pub use crate::subdevice::{
    Conversion, DeviceKind, DeviceSpec, ACTUATOR_PROPERTIES, DEVICE_PREFIX, SENSOR_PROPERTIES,
    SUBDEVICE_PREFIX,
};
pub use error::DescriptionError;
pub use file::{load_preferences, save_preferences, SaveError};

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::preferences::Preferences;

/// An actuator or a sensor, by its index in the device model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceIndex {
    Actuator(usize),
    Sensor(usize),
}

/// A joint, for ALMotion and the simulated robot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointSpec {
    pub name: String,
    pub chain: String,
    pub min: f64,
    pub max: f64,
    pub max_velocity: f64,
    pub max_torque: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotDescription {
    pub name: String,
    #[serde(rename = "joint", default)]
    pub joints: Vec<JointSpec>,
    #[serde(rename = "device")]
    pub devices: Vec<DeviceSpec>,
    /// NAOqi's DCM preferences (`[preferences.chest]`, `.head`, `.local`).
    #[serde(default)]
    pub preferences: Preferences,
    /// The kinematic and mass model's numbers (`[kinematics]`), for ALMotion's Cartesian layer.
    #[serde(default)]
    pub kinematics: Option<crate::kinematics::Description>,
    /// What a physical simulation adds (`[physics]`: servos, collision shapes, feet, inertial
    /// unit, sonars, start pose), read by `naobroker-physics`, ALMotion's self-collision and
    /// the viewers.
    #[serde(default)]
    pub physics: Option<crate::physics::PhysicsDescription>,
}

/// The NAO V6 description shipped with naobroker.
pub const NAO_V6: &str = include_str!("../../../robots/nao-v6.toml");

impl RobotDescription {
    pub fn nao_v6() -> RobotDescription {
        RobotDescription::parse(NAO_V6).expect("the shipped NAO V6 description is valid")
    }

    pub fn load(path: &Path) -> Result<RobotDescription, DescriptionError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| DescriptionError::Read { path: path.to_path_buf(), source })?;
        RobotDescription::parse(&text)
            .map_err(|source| DescriptionError::InFile { path: path.to_path_buf(), source: Box::new(source) })
    }

    pub fn parse(text: &str) -> Result<RobotDescription, DescriptionError> {
        let description: RobotDescription = toml::from_str(text)?;
        for device in &description.devices {
            if device.gain == 0.0 || !device.gain.is_finite() {
                return Err(DescriptionError::ZeroGain(device.name.clone()));
            }
            if device.min > device.max {
                return Err(DescriptionError::MinAboveMax(device.name.clone()));
            }
        }
        if let Some(physics) = &description.physics {
            physics.check()?;
        }
        description.preferences.check()?;
        description.preferences.check_conversions(&description.devices)?;
        Ok(description)
    }
}

/// The devices split into actuators and sensors, each with a dense index.
#[derive(Debug, Clone)]
pub struct DeviceModel {
    pub robot: String,
    pub actuators: Vec<DeviceSpec>,
    pub sensors: Vec<DeviceSpec>,
    pub joints: Vec<JointSpec>,
    /// The preferences the description started with.
    pub preferences: Preferences,
    /// The kinematic and mass model's numbers, when the description has them.
    pub kinematics: Option<crate::kinematics::Description>,
    /// The description's `[physics]` (ALMotion's self-collision reads its shapes).
    pub physics: Option<crate::physics::PhysicsDescription>,
    actuator_index: HashMap<String, usize>,
    sensor_index: HashMap<String, usize>,
}

impl DeviceModel {
    pub fn new(description: RobotDescription) -> Result<DeviceModel, DescriptionError> {
        let (sensors, actuators): (Vec<_>, Vec<_>) =
            description.devices.into_iter().partition(|d| d.kind == DeviceKind::Sensor);
        let mut actuator_index = HashMap::new();
        for (index, device) in actuators.iter().enumerate() {
            if actuator_index.insert(device.name.clone(), index).is_some() {
                return Err(DescriptionError::DeclaredTwice(device.name.clone()));
            }
        }
        let mut sensor_index = HashMap::new();
        for (index, device) in sensors.iter().enumerate() {
            if sensor_index.insert(device.name.clone(), index).is_some()
                || actuator_index.contains_key(&device.name)
            {
                return Err(DescriptionError::DeclaredTwice(device.name.clone()));
            }
        }
        check_published_keys(actuators.iter().chain(&sensors))?;
        Ok(DeviceModel {
            robot: description.name,
            actuators,
            sensors,
            joints: description.joints,
            preferences: description.preferences,
            kinematics: description.kinematics,
            physics: description.physics,
            actuator_index,
            sensor_index,
        })
    }

    fn short(name: &str) -> &str {
        name.strip_prefix(SUBDEVICE_PREFIX).unwrap_or(name)
    }

    /// An actuator by name, with or without the `Device/SubDeviceList/` prefix.
    pub fn actuator(&self, name: &str) -> Option<usize> {
        self.actuator_index.get(Self::short(name)).copied()
    }

    pub fn sensor(&self, name: &str) -> Option<usize> {
        self.sensor_index.get(Self::short(name)).copied()
    }

    /// The device whose `.../Gain` or `.../Offset` ALMemory key `key` is.
    pub fn device_of_property(&self, key: &str) -> Option<DeviceIndex> {
        let (stem, property) = key.strip_prefix(SUBDEVICE_PREFIX)?.rsplit_once('/')?;
        if !matches!(property, "Gain" | "Offset") {
            return None;
        }
        let with_value = format!("{stem}/Value");
        let device = [with_value.as_str(), stem].into_iter().find_map(|name| {
            let actuator = self.actuator_index.get(name).map(|&index| DeviceIndex::Actuator(index));
            actuator.or_else(|| self.sensor_index.get(name).map(|&index| DeviceIndex::Sensor(index)))
        })?;
        (self.spec(device).property_key(property) == key).then_some(device)
    }

    pub fn spec(&self, device: DeviceIndex) -> &DeviceSpec {
        match device {
            DeviceIndex::Actuator(index) => &self.actuators[index],
            DeviceIndex::Sensor(index) => &self.sensors[index],
        }
    }

    /// An actuator's conversion with the preferences' overrides (its calibration).
    pub fn actuator_conversion(&self, index: usize) -> Conversion {
        self.preferences.conversion(&self.actuators[index])
    }

    pub fn sensor_conversion(&self, index: usize) -> Conversion {
        self.preferences.conversion(&self.sensors[index])
    }
}

/// Every key the DCM publishes for the devices names one value: an actuator `X/Value`
/// beside a sensor `X` would share `X/Gain`, and ALMemory's slots would mix them up.
fn check_published_keys<'a>(devices: impl Iterator<Item = &'a DeviceSpec>) -> Result<(), DescriptionError> {
    let mut owners: HashMap<String, &str> = HashMap::new();
    for device in devices {
        for key in device.published_keys() {
            if let Some(owner) = owners.insert(key.clone(), &device.name) {
                let (first, second) = (owner.to_owned(), device.name.clone());
                return Err(DescriptionError::SharedKey { first, second, key });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nao_v6_has_every_joint_led_and_sensor() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        assert_eq!(model.joints.len(), 25);
        for joint in &model.joints {
            for suffix in ["Position/Actuator/Value", "Hardness/Actuator/Value"] {
                assert!(model.actuator(&format!("{}/{suffix}", joint.name)).is_some());
            }
            for suffix in
                ["Position/Sensor/Value", "ElectricCurrent/Sensor/Value", "Temperature/Sensor/Value"]
            {
                assert!(model.sensor(&format!("{}/{suffix}", joint.name)).is_some());
            }
        }
        let eye_leds = model.actuators.iter().filter(|a| a.name.starts_with("Face/Led/")).count();
        assert_eq!(eye_leds, 48);
        assert_eq!(model.actuators.iter().filter(|a| a.name.starts_with("Ears/Led/")).count(), 20);
        assert!(model.actuator("Device/SubDeviceList/ChestBoard/Led/Red/Actuator/Value").is_some());
        assert_eq!(model.actuators[model.actuator("US/Actuator/Value").unwrap()].kind, DeviceKind::Trigger);
        assert!(model.sensor("InertialSensor/AngleX/Sensor/Value").is_some());
        assert!(model.sensor("RFoot/FSR/RearRight/Sensor/Value").is_some());
        assert!(model.sensor("Battery/Charge/Sensor/Value").is_some());
        assert!(model.actuator("HeadYaw/Position/Sensor/Value").is_none());
    }

    fn spec(name: &str, kind: DeviceKind) -> DeviceSpec {
        let (unit, min, max, gain, offset, initial) = (String::new(), 0.0, 1.0, 1.0, 0.0, 0.0);
        DeviceSpec { name: name.into(), kind, unit, min, max, gain, offset, initial }
    }

    #[test]
    fn devices_whose_keys_collide_are_refused() {
        let model = |devices: Vec<DeviceSpec>| {
            let (joints, preferences) = (Vec::new(), Preferences::default());
            DeviceModel::new(RobotDescription {
                name: "R".into(),
                joints,
                devices,
                preferences,
                kinematics: None,
                physics: None,
            })
        };
        let error = model(vec![spec("X/Value", DeviceKind::Interpolated), spec("X", DeviceKind::Sensor)])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(error, "devices X/Value and X both publish Device/SubDeviceList/X/Gain: rename one");
        let error = model(vec![spec("A/Value", DeviceKind::Interpolated), spec("A/Ack", DeviceKind::Sensor)])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(error.contains("both publish Device/SubDeviceList/A/Ack"), "{error}");
        let twice = model(vec![spec("X", DeviceKind::Sensor), spec("X", DeviceKind::Interpolated)]);
        assert!(matches!(twice, Err(DescriptionError::DeclaredTwice(name)) if name == "X"));
        let fine = model(vec![spec("X/Value", DeviceKind::Interpolated), spec("Y", DeviceKind::Sensor)]);
        let fine = fine.unwrap();
        assert_eq!(fine.device_of_property("Device/SubDeviceList/X/Offset"), Some(DeviceIndex::Actuator(0)));
        assert_eq!(fine.device_of_property("Device/SubDeviceList/Y/Gain"), Some(DeviceIndex::Sensor(0)));
        assert_eq!(fine.device_of_property("Device/SubDeviceList/Y/Ack"), None);
        assert_eq!(fine.device_of_property("Device/SubDeviceList/Z/Gain"), None);
        assert_eq!(fine.device_of_property("RobotConfig/X/Gain"), None);
    }
}
