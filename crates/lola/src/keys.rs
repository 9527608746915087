//! The keys of LoLA's two maps, their wire names and lengths, and sets of keys (which keys a
//! decoded map held, which keys an encoded actuator map carries).

/// A key of the sensor map, in the order a real robot sends them (NaoTH's robot dump).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SensorKey {
    RobotConfig,
    Accelerometer,
    Angles,
    Battery,
    Current,
    Fsr,
    Gyroscope,
    Position,
    Sonar,
    Stiffness,
    Temperature,
    Touch,
    Status,
}

impl SensorKey {
    /// All 13, in a real robot's order.
    pub const ALL: [SensorKey; 13] = [
        SensorKey::RobotConfig,
        SensorKey::Accelerometer,
        SensorKey::Angles,
        SensorKey::Battery,
        SensorKey::Current,
        SensorKey::Fsr,
        SensorKey::Gyroscope,
        SensorKey::Position,
        SensorKey::Sonar,
        SensorKey::Stiffness,
        SensorKey::Temperature,
        SensorKey::Touch,
        SensorKey::Status,
    ];

    /// The key on the wire.
    pub const fn wire_name(self) -> &'static str {
        match self {
            SensorKey::RobotConfig => "RobotConfig",
            SensorKey::Accelerometer => "Accelerometer",
            SensorKey::Angles => "Angles",
            SensorKey::Battery => "Battery",
            SensorKey::Current => "Current",
            SensorKey::Fsr => "FSR",
            SensorKey::Gyroscope => "Gyroscope",
            SensorKey::Position => "Position",
            SensorKey::Sonar => "Sonar",
            SensorKey::Stiffness => "Stiffness",
            SensorKey::Temperature => "Temperature",
            SensorKey::Touch => "Touch",
            SensorKey::Status => "Status",
        }
    }

    /// How many values the key's array holds.
    pub const fn array_len(self) -> usize {
        match self {
            SensorKey::Position
            | SensorKey::Stiffness
            | SensorKey::Current
            | SensorKey::Temperature
            | SensorKey::Status => crate::JOINT_COUNT,
            SensorKey::RobotConfig | SensorKey::Battery => 4,
            SensorKey::Accelerometer | SensorKey::Gyroscope => 3,
            SensorKey::Angles | SensorKey::Sonar => 2,
            SensorKey::Fsr => 8,
            SensorKey::Touch => 14,
        }
    }

    pub fn from_wire_name(name: &[u8]) -> Option<SensorKey> {
        SensorKey::ALL.into_iter().find(|key| key.wire_name().as_bytes() == name)
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// A key of the actuator map, in the order [`crate::encode_actuator_map`] writes them
/// (NaoTH's `ActuatorData`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActuatorKey {
    Position,
    Stiffness,
    REar,
    LEar,
    Chest,
    LEye,
    REye,
    LFoot,
    RFoot,
    Skull,
    Sonar,
}

impl ActuatorKey {
    /// All 11, in the order they are written.
    pub const ALL: [ActuatorKey; 11] = [
        ActuatorKey::Position,
        ActuatorKey::Stiffness,
        ActuatorKey::REar,
        ActuatorKey::LEar,
        ActuatorKey::Chest,
        ActuatorKey::LEye,
        ActuatorKey::REye,
        ActuatorKey::LFoot,
        ActuatorKey::RFoot,
        ActuatorKey::Skull,
        ActuatorKey::Sonar,
    ];

    /// The key on the wire.
    pub const fn wire_name(self) -> &'static str {
        match self {
            ActuatorKey::Position => "Position",
            ActuatorKey::Stiffness => "Stiffness",
            ActuatorKey::REar => "REar",
            ActuatorKey::LEar => "LEar",
            ActuatorKey::Chest => "Chest",
            ActuatorKey::LEye => "LEye",
            ActuatorKey::REye => "REye",
            ActuatorKey::LFoot => "LFoot",
            ActuatorKey::RFoot => "RFoot",
            ActuatorKey::Skull => "Skull",
            ActuatorKey::Sonar => "Sonar",
        }
    }

    /// How many values the key's array holds.
    pub const fn array_len(self) -> usize {
        match self {
            ActuatorKey::Position | ActuatorKey::Stiffness => crate::JOINT_COUNT,
            ActuatorKey::LEye | ActuatorKey::REye => 24,
            ActuatorKey::LEar | ActuatorKey::REar => 10,
            ActuatorKey::Chest | ActuatorKey::LFoot | ActuatorKey::RFoot => 3,
            ActuatorKey::Skull => 12,
            ActuatorKey::Sonar => 2,
        }
    }

    pub fn from_wire_name(name: &[u8]) -> Option<ActuatorKey> {
        ActuatorKey::ALL.into_iter().find(|key| key.wire_name().as_bytes() == name)
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// A set of sensor keys: those a decoded sensor map held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct SensorKeys(u16);

impl SensorKeys {
    pub const NONE: SensorKeys = SensorKeys(0);
    pub const ALL: SensorKeys = SensorKeys((1 << SensorKey::ALL.len()) - 1);

    pub const fn contains(self, key: SensorKey) -> bool {
        self.0 & key.bit() != 0
    }

    pub const fn with(self, key: SensorKey) -> SensorKeys {
        SensorKeys(self.0 | key.bit())
    }

    pub const fn without(self, key: SensorKey) -> SensorKeys {
        SensorKeys(self.0 & !key.bit())
    }

    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The keys in the set, in [`SensorKey::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = SensorKey> {
        SensorKey::ALL.into_iter().filter(move |key| self.contains(*key))
    }
}

/// A set of actuator keys: those a decoded actuator map held, or those to encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ActuatorKeys(u16);

impl ActuatorKeys {
    pub const NONE: ActuatorKeys = ActuatorKeys(0);
    pub const ALL: ActuatorKeys = ActuatorKeys((1 << ActuatorKey::ALL.len()) - 1);
    /// The 10 keys B-Human sends: all but `Sonar`.
    pub const WITHOUT_SONAR: ActuatorKeys = ActuatorKeys::ALL.without(ActuatorKey::Sonar);

    pub const fn contains(self, key: ActuatorKey) -> bool {
        self.0 & key.bit() != 0
    }

    pub const fn with(self, key: ActuatorKey) -> ActuatorKeys {
        ActuatorKeys(self.0 | key.bit())
    }

    pub const fn without(self, key: ActuatorKey) -> ActuatorKeys {
        ActuatorKeys(self.0 & !key.bit())
    }

    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The keys in the set, in [`ActuatorKey::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = ActuatorKey> {
        ActuatorKey::ALL.into_iter().filter(move |key| self.contains(*key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_come_back_and_sets_count() {
        for key in SensorKey::ALL {
            assert_eq!(SensorKey::from_wire_name(key.wire_name().as_bytes()), Some(key));
        }
        for key in ActuatorKey::ALL {
            assert_eq!(ActuatorKey::from_wire_name(key.wire_name().as_bytes()), Some(key));
        }
        assert_eq!(SensorKey::from_wire_name(b"Fsr"), None);
        assert_eq!(SensorKeys::ALL.len(), 13);
        assert_eq!(SensorKeys::ALL.iter().collect::<Vec<_>>(), SensorKey::ALL);
        assert_eq!(ActuatorKeys::WITHOUT_SONAR.len(), 10);
        assert!(!ActuatorKeys::WITHOUT_SONAR.contains(ActuatorKey::Sonar));
        assert!(ActuatorKeys::NONE.with(ActuatorKey::Skull).contains(ActuatorKey::Skull));
        assert!(SensorKeys::NONE.is_empty());
    }
}
