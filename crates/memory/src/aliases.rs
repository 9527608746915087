//! NAOqi 2.1's older ALMemory key names that today's devices answer to: each alias reads
//! the real-time slot of the key it stands for, so both always give the same value.

use std::collections::HashMap;

use naobroker_rtslots::SlotLayout;

/// `(NAOqi 2.1 name, today's name)`. NAOqi 2.1's inertial unit page lists the raw
/// accelerometer as `InertialSensor/AccX…` and the gyrometer as `InertialSensor/GyrX…`;
/// the V5/V6 key lists (and LoLA) name them `AccelerometerX…`/`GyroscopeX…`. `GyrZ` was
/// added when the V5 gyrometer got its third axis. The other families of the 2.1 key
/// lists (joints, FSR, touch, bumpers, ultrasound, battery, chest button) kept their names.
pub const NAOQI_21_ALIASES: [(&str, &str); 6] = [
    (
        "Device/SubDeviceList/InertialSensor/AccX/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/AccelerometerX/Sensor/Value",
    ),
    (
        "Device/SubDeviceList/InertialSensor/AccY/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/AccelerometerY/Sensor/Value",
    ),
    (
        "Device/SubDeviceList/InertialSensor/AccZ/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/AccelerometerZ/Sensor/Value",
    ),
    (
        "Device/SubDeviceList/InertialSensor/GyrX/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/GyroscopeX/Sensor/Value",
    ),
    (
        "Device/SubDeviceList/InertialSensor/GyrY/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/GyroscopeY/Sensor/Value",
    ),
    (
        "Device/SubDeviceList/InertialSensor/GyrZ/Sensor/Value",
        "Device/SubDeviceList/InertialSensor/GyroscopeZ/Sensor/Value",
    ),
];

/// The aliases a robot answers to: those whose key is one of its real-time slots (a
/// robot without a gyrometer's Z axis has no `GyrZ`), each with that slot's index.
#[derive(Debug, Default)]
pub(crate) struct Aliases {
    slots: HashMap<&'static str, usize>,
}

impl Aliases {
    pub(crate) fn for_layout(layout: &SlotLayout) -> Aliases {
        let slots = NAOQI_21_ALIASES
            .iter()
            .filter(|(alias, _)| layout.index_of(alias).is_none())
            .filter_map(|&(alias, key)| layout.index_of(key).map(|index| (alias, index)))
            .collect();
        Aliases { slots }
    }

    /// The slot an alias reads.
    pub(crate) fn slot(&self, alias: &str) -> Option<usize> {
        self.slots.get(alias).copied()
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.slots.keys().copied()
    }
}
