//! The NAOqi DCM device behind every index of every LoLA field, both ways.
//!
//! Names are written as naobroker's robot descriptions write devices (`robots/nao-v6.toml`):
//! without the `Device/SubDeviceList/` prefix ([`SUBDEVICE_PREFIX`]); the lookups from a name
//! take it with or without. Sources: NAOqi's actuator and sensor list, and the RoboCup teams'
//! LoLA code (B-Human, HULKs, NaoTH, nidhogg), which agree on every order here but the
//! battery's ([`BatteryOrder`]).
//!
//! Three fields have no device of their own in NAOqi: the sensor map's `Stiffness` is the
//! echo of the applied stiffness and names the `Hardness` actuators; `RobotConfig` names
//! ALMemory keys of the robot's identity ([`ROBOT_CONFIG`]); the actuator map's two `Sonar`
//! enables both name the DCM's one sonar actuator `US/Actuator/Value` (a name lookup gives
//! index 0: a backend sets both). RHipYawPitch is not in LoLA: it is coupled to
//! LHipYawPitch ([`HIP_YAW_PITCH`]), which drives both.

use serde::{Deserialize, Serialize};

use crate::keys::{ActuatorKey, SensorKey};

/// What every full subdevice name starts with in ALMemory.
pub const SUBDEVICE_PREFIX: &str = "Device/SubDeviceList/";

/// Fills `$suffix` in after each of LoLA's 25 joints, in LoLA's order.
macro_rules! per_joint {
    ($suffix:literal) => {
        [
            concat!("HeadYaw", $suffix),
            concat!("HeadPitch", $suffix),
            concat!("LShoulderPitch", $suffix),
            concat!("LShoulderRoll", $suffix),
            concat!("LElbowYaw", $suffix),
            concat!("LElbowRoll", $suffix),
            concat!("LWristYaw", $suffix),
            concat!("LHipYawPitch", $suffix),
            concat!("LHipRoll", $suffix),
            concat!("LHipPitch", $suffix),
            concat!("LKneePitch", $suffix),
            concat!("LAnklePitch", $suffix),
            concat!("LAnkleRoll", $suffix),
            concat!("RHipRoll", $suffix),
            concat!("RHipPitch", $suffix),
            concat!("RKneePitch", $suffix),
            concat!("RAnklePitch", $suffix),
            concat!("RAnkleRoll", $suffix),
            concat!("RShoulderPitch", $suffix),
            concat!("RShoulderRoll", $suffix),
            concat!("RElbowYaw", $suffix),
            concat!("RElbowRoll", $suffix),
            concat!("RWristYaw", $suffix),
            concat!("LHand", $suffix),
            concat!("RHand", $suffix),
        ]
    };
}

/// An eye's 24 LEDs: red, green, blue, each at the angles given, in that order.
macro_rules! eye {
    ($side:literal: $($angle:literal),*) => {
        [
            $(concat!("Face/Led/Red/", $side, "/", $angle, "Deg/Actuator/Value"),)*
            $(concat!("Face/Led/Green/", $side, "/", $angle, "Deg/Actuator/Value"),)*
            $(concat!("Face/Led/Blue/", $side, "/", $angle, "Deg/Actuator/Value"),)*
        ]
    };
}

/// An ear's 10 blue LEDs at the angles given, in that order.
macro_rules! ear {
    ($side:literal: $($angle:literal),*) => {
        [$(concat!("Ears/Led/", $side, "/", $angle, "Deg/Actuator/Value"),)*]
    };
}

/// A red, green, blue LED triple.
macro_rules! rgb {
    ($device:literal) => {
        [
            concat!($device, "/Led/Red/Actuator/Value"),
            concat!($device, "/Led/Green/Actuator/Value"),
            concat!($device, "/Led/Blue/Actuator/Value"),
        ]
    };
}

/// LoLA's 25 joints in its array order (the order of `Position`, `Stiffness`, `Current`,
/// `Temperature` and `Status`, and of the joints in `robots/nao-v6.toml`).
pub const JOINTS: [&str; 25] = per_joint!("");
/// LHipYawPitch's index: on the robot it also moves RHipYawPitch, which LoLA does not carry.
pub const HIP_YAW_PITCH: usize = 7;

/// `Position` in the sensor map: the measured angles.
pub const POSITION_SENSORS: [&str; 25] = per_joint!("/Position/Sensor/Value");
/// `Position` in the actuator map: the targets.
pub const POSITION_ACTUATORS: [&str; 25] = per_joint!("/Position/Actuator/Value");
/// `Stiffness` in both maps (NAOqi calls stiffness "Hardness"; the sensor map echoes it).
pub const STIFFNESS: [&str; 25] = per_joint!("/Hardness/Actuator/Value");
pub const CURRENT: [&str; 25] = per_joint!("/ElectricCurrent/Sensor/Value");
pub const TEMPERATURE: [&str; 25] = per_joint!("/Temperature/Sensor/Value");
/// `Status`: each joint's temperature status.
pub const STATUS: [&str; 25] = per_joint!("/Temperature/Sensor/Status");

pub const ACCELEROMETER: [&str; 3] = [
    "InertialSensor/AccelerometerX/Sensor/Value",
    "InertialSensor/AccelerometerY/Sensor/Value",
    "InertialSensor/AccelerometerZ/Sensor/Value",
];
pub const GYROSCOPE: [&str; 3] = [
    "InertialSensor/GyroscopeX/Sensor/Value",
    "InertialSensor/GyroscopeY/Sensor/Value",
    "InertialSensor/GyroscopeZ/Sensor/Value",
];
/// The torso angles x and y (NAOqi's AngleZ is not in LoLA).
pub const ANGLES: [&str; 2] = ["InertialSensor/AngleX/Sensor/Value", "InertialSensor/AngleY/Sensor/Value"];

const BATTERY_CHARGE: &str = "Battery/Charge/Sensor/Value";
/// The battery's status bit field; NAOqi's key for it is not confirmed by any source.
const BATTERY_STATUS: &str = "Battery/Charge/Sensor/Status";
const BATTERY_CURRENT: &str = "Battery/Current/Sensor/Value";
const BATTERY_TEMPERATURE: &str = "Battery/Temperature/Sensor/Value";

/// The order of the sensor map's four `Battery` values, which the sources disagree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BatteryOrder {
    /// Charge, status, current, temperature: what B-Human, HULKs, NaoTH and HTWK read
    /// ("the order for battery values in Softbank's documentation is wrong").
    #[default]
    ChargeStatusCurrentTemperature,
    /// Charge, current, status, temperature: Softbank's documented order, as nidhogg reads.
    ChargeCurrentStatusTemperature,
}

impl BatteryOrder {
    /// The device behind each of the four values.
    pub const fn names(self) -> &'static [&'static str; 4] {
        match self {
            BatteryOrder::ChargeStatusCurrentTemperature => {
                &[BATTERY_CHARGE, BATTERY_STATUS, BATTERY_CURRENT, BATTERY_TEMPERATURE]
            }
            BatteryOrder::ChargeCurrentStatusTemperature => {
                &[BATTERY_CHARGE, BATTERY_CURRENT, BATTERY_STATUS, BATTERY_TEMPERATURE]
            }
        }
    }

    /// As written in a configuration file.
    pub const fn as_str(self) -> &'static str {
        match self {
            BatteryOrder::ChargeStatusCurrentTemperature => "charge-status-current-temperature",
            BatteryOrder::ChargeCurrentStatusTemperature => "charge-current-status-temperature",
        }
    }
}

/// `FSR`: left foot front-left, front-right, rear-left, rear-right, then the right foot.
pub const FSR: [&str; 8] = [
    "LFoot/FSR/FrontLeft/Sensor/Value",
    "LFoot/FSR/FrontRight/Sensor/Value",
    "LFoot/FSR/RearLeft/Sensor/Value",
    "LFoot/FSR/RearRight/Sensor/Value",
    "RFoot/FSR/FrontLeft/Sensor/Value",
    "RFoot/FSR/FrontRight/Sensor/Value",
    "RFoot/FSR/RearLeft/Sensor/Value",
    "RFoot/FSR/RearRight/Sensor/Value",
];
/// `Touch`: the chest button, the head's three pads, then feet bumpers and hand pads.
pub const TOUCH: [&str; 14] = [
    "ChestBoard/Button/Sensor/Value",
    "Head/Touch/Front/Sensor/Value",
    "Head/Touch/Middle/Sensor/Value",
    "Head/Touch/Rear/Sensor/Value",
    "LFoot/Bumper/Left/Sensor/Value",
    "LFoot/Bumper/Right/Sensor/Value",
    "LHand/Touch/Back/Sensor/Value",
    "LHand/Touch/Left/Sensor/Value",
    "LHand/Touch/Right/Sensor/Value",
    "RFoot/Bumper/Left/Sensor/Value",
    "RFoot/Bumper/Right/Sensor/Value",
    "RHand/Touch/Back/Sensor/Value",
    "RHand/Touch/Left/Sensor/Value",
    "RHand/Touch/Right/Sensor/Value",
];
/// `Sonar` in the sensor map: left and right distances.
pub const SONAR_SENSORS: [&str; 2] = ["US/Left/Sensor/Value", "US/Right/Sensor/Value"];
/// `Sonar` in the actuator map: the left and right enables, both the DCM's one actuator.
pub const SONAR_ACTUATORS: [&str; 2] = ["US/Actuator/Value", "US/Actuator/Value"];
/// `RobotConfig`: body id, body version, head id, head version, as ALMemory keys. The ids
/// take NAOqi's keys (the robot description's preferences hold a simulated robot's); the
/// versions ("6.0.0") are naobroker's keys, as NAOqi's `BaseVersion` says "V6".
pub const ROBOT_CONFIG: [&str; 4] = [
    "Device/DeviceList/ChestBoard/BodyId",
    "RobotConfig/Body/Version",
    "RobotConfig/Head/FullHeadId",
    "RobotConfig/Head/Version",
];

pub const L_EYE: [&str; 24] = eye!("Left": "45", "0", "315", "270", "225", "180", "135", "90");
pub const R_EYE: [&str; 24] = eye!("Right": "0", "45", "90", "135", "180", "225", "270", "315");
pub const L_EAR: [&str; 10] = ear!("Left": "0", "36", "72", "108", "144", "180", "216", "252", "288", "324");
pub const R_EAR: [&str; 10] = ear!("Right": "324", "288", "252", "216", "180", "144", "108", "72", "36", "0");
pub const CHEST: [&str; 3] = rgb!("ChestBoard");
pub const L_FOOT: [&str; 3] = rgb!("LFoot");
pub const R_FOOT: [&str; 3] = rgb!("RFoot");
/// `Skull`: six LEDs a side, from the front left round the back to the front right.
pub const SKULL: [&str; 12] = [
    "Head/Led/Front/Left/1/Actuator/Value",
    "Head/Led/Front/Left/0/Actuator/Value",
    "Head/Led/Middle/Left/0/Actuator/Value",
    "Head/Led/Rear/Left/0/Actuator/Value",
    "Head/Led/Rear/Left/1/Actuator/Value",
    "Head/Led/Rear/Left/2/Actuator/Value",
    "Head/Led/Rear/Right/2/Actuator/Value",
    "Head/Led/Rear/Right/1/Actuator/Value",
    "Head/Led/Rear/Right/0/Actuator/Value",
    "Head/Led/Middle/Right/0/Actuator/Value",
    "Head/Led/Front/Right/0/Actuator/Value",
    "Head/Led/Front/Right/1/Actuator/Value",
];

/// The name behind each index of a sensor map key (for `RobotConfig`: ALMemory keys).
pub const fn sensor_names(key: SensorKey, battery: BatteryOrder) -> &'static [&'static str] {
    match key {
        SensorKey::RobotConfig => &ROBOT_CONFIG,
        SensorKey::Accelerometer => &ACCELEROMETER,
        SensorKey::Angles => &ANGLES,
        SensorKey::Battery => battery.names(),
        SensorKey::Current => &CURRENT,
        SensorKey::Fsr => &FSR,
        SensorKey::Gyroscope => &GYROSCOPE,
        SensorKey::Position => &POSITION_SENSORS,
        SensorKey::Sonar => &SONAR_SENSORS,
        SensorKey::Stiffness => &STIFFNESS,
        SensorKey::Temperature => &TEMPERATURE,
        SensorKey::Touch => &TOUCH,
        SensorKey::Status => &STATUS,
    }
}

/// The device behind each index of an actuator map key.
pub const fn actuator_names(key: ActuatorKey) -> &'static [&'static str] {
    match key {
        ActuatorKey::Position => &POSITION_ACTUATORS,
        ActuatorKey::Stiffness => &STIFFNESS,
        ActuatorKey::REar => &R_EAR,
        ActuatorKey::LEar => &L_EAR,
        ActuatorKey::Chest => &CHEST,
        ActuatorKey::LEye => &L_EYE,
        ActuatorKey::REye => &R_EYE,
        ActuatorKey::LFoot => &L_FOOT,
        ActuatorKey::RFoot => &R_FOOT,
        ActuatorKey::Skull => &SKULL,
        ActuatorKey::Sonar => &SONAR_ACTUATORS,
    }
}

/// The sensor map key and index a name stands for (with or without the prefix); the first
/// one for a name several carry.
pub fn sensor_of_name(name: &str, battery: BatteryOrder) -> Option<(SensorKey, usize)> {
    let name = name.strip_prefix(SUBDEVICE_PREFIX).unwrap_or(name);
    SensorKey::ALL.into_iter().find_map(|key| {
        sensor_names(key, battery).iter().position(|candidate| *candidate == name).map(|index| (key, index))
    })
}

/// The actuator map key and index a device stands for (with or without the prefix); for
/// `US/Actuator/Value`, both sonar enables' device, index 0.
pub fn actuator_of_name(name: &str) -> Option<(ActuatorKey, usize)> {
    let name = name.strip_prefix(SUBDEVICE_PREFIX).unwrap_or(name);
    ActuatorKey::ALL.into_iter().find_map(|key| {
        actuator_names(key).iter().position(|candidate| *candidate == name).map(|index| (key, index))
    })
}
