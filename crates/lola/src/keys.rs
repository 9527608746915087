//! The keys of LoLA's two maps, their wire names and lengths, and sets of keys (which keys a
//! decoded map held, which keys an encoded actuator map carries).

use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

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
}

/// A key of one of LoLA's maps: what a [`KeySet`] and the decoder need of it.
pub trait MapKey: Copy + Eq + Hash + Debug + 'static {
    /// Every key, in wire order.
    const ALL: &'static [Self];

    /// The key on the wire.
    fn wire_name(self) -> &'static str;

    /// The key's position in [`MapKey::ALL`], which is also its bit in a [`KeySet`].
    fn index(self) -> usize;

    fn from_wire_name(name: &[u8]) -> Option<Self> {
        Self::ALL.iter().copied().find(|key| key.wire_name().as_bytes() == name)
    }
}

impl MapKey for SensorKey {
    const ALL: &'static [SensorKey] = &SensorKey::ALL;

    fn wire_name(self) -> &'static str {
        SensorKey::wire_name(self)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl MapKey for ActuatorKey {
    const ALL: &'static [ActuatorKey] = &ActuatorKey::ALL;

    fn wire_name(self) -> &'static str {
        ActuatorKey::wire_name(self)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A set of keys of one map: those a decoded map held, or those to encode.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySet<K> {
    bits: u16,
    keys: PhantomData<K>,
}

/// The sensor keys a decoded sensor map held.
pub type SensorKeys = KeySet<SensorKey>;
/// The actuator keys a decoded actuator map held, or those to encode.
pub type ActuatorKeys = KeySet<ActuatorKey>;

impl<K: MapKey> KeySet<K> {
    pub const NONE: KeySet<K> = KeySet::from_bits(0);
    pub const ALL: KeySet<K> = KeySet::from_bits((1 << K::ALL.len()) - 1);

    const fn from_bits(bits: u16) -> KeySet<K> {
        KeySet { bits, keys: PhantomData }
    }

    const fn bit(index: usize) -> u16 {
        1 << index
    }

    pub fn contains(self, key: K) -> bool {
        self.bits & Self::bit(key.index()) != 0
    }

    pub fn with(self, key: K) -> KeySet<K> {
        KeySet::from_bits(self.bits | Self::bit(key.index()))
    }

    pub fn without(self, key: K) -> KeySet<K> {
        KeySet::from_bits(self.bits & !Self::bit(key.index()))
    }

    pub const fn len(self) -> usize {
        self.bits.count_ones() as usize
    }

    pub const fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// The keys in the set, in [`MapKey::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = K> {
        K::ALL.iter().copied().filter(move |key| self.contains(*key))
    }
}

impl<K: MapKey> Debug for KeySet<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K: MapKey> Default for KeySet<K> {
    fn default() -> KeySet<K> {
        KeySet::NONE
    }
}

impl ActuatorKeys {
    /// The 10 keys B-Human sends: all but `Sonar` (spelled out bit by bit: a const cannot
    /// call [`KeySet::without`], which goes through the trait).
    pub const WITHOUT_SONAR: ActuatorKeys =
        KeySet::from_bits(ActuatorKeys::ALL.bits & !ActuatorKeys::bit(ActuatorKey::Sonar as usize));
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
        assert!(SensorKey::ALL.iter().enumerate().all(|(index, key)| key.index() == index));
        assert!(ActuatorKey::ALL.iter().enumerate().all(|(index, key)| key.index() == index));
        assert_eq!(SensorKeys::ALL.len(), 13);
        assert_eq!(SensorKeys::ALL.iter().collect::<Vec<_>>(), SensorKey::ALL);
        assert_eq!(ActuatorKeys::WITHOUT_SONAR.len(), 10);
        assert!(!ActuatorKeys::WITHOUT_SONAR.contains(ActuatorKey::Sonar));
        assert!(ActuatorKeys::NONE.with(ActuatorKey::Skull).contains(ActuatorKey::Skull));
        assert!(SensorKeys::NONE.is_empty());
    }
}
