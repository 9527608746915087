//! What the module writes to ALMemory: NAOqi's sensor events and the keys NAOqi keeps
//! beside them, and the compact records the cycle thread sends about them.

use naobroker_framework::Value;

/// An ALMemory name this module writes, as NAOqi spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    FrontTactilTouched,
    MiddleTactilTouched,
    RearTactilTouched,
    HandLeftBackTouched,
    HandLeftLeftTouched,
    HandLeftRightTouched,
    HandRightBackTouched,
    HandRightLeftTouched,
    HandRightRightTouched,
    LeftBumperPressed,
    RightBumperPressed,
    ChestButtonPressed,
    SimpleClickOccurred,
    DoubleClickOccurred,
    TripleClickOccurred,
    FootContactChanged,
    /// Data beside `footContactChanged`, not an event.
    FootContact,
    LeftFootContact,
    RightFootContact,
    /// Data: a foot's weight on its four FSRs (kg), NAOqi's ALFsr fast-access keys.
    LeftFootTotalWeight,
    RightFootTotalWeight,
    SonarLeftDetected,
    SonarRightDetected,
    SonarLeftNothingDetected,
    SonarRightNothingDetected,
    BatteryChargeChanged,
    BatteryLowDetected,
    BatteryNearlyEmpty,
    BatteryPowerPluggedChanged,
    BatteryChargingFlagChanged,
}

impl Key {
    pub fn name(self) -> &'static str {
        match self {
            Key::FrontTactilTouched => "FrontTactilTouched",
            Key::MiddleTactilTouched => "MiddleTactilTouched",
            Key::RearTactilTouched => "RearTactilTouched",
            Key::HandLeftBackTouched => "HandLeftBackTouched",
            Key::HandLeftLeftTouched => "HandLeftLeftTouched",
            Key::HandLeftRightTouched => "HandLeftRightTouched",
            Key::HandRightBackTouched => "HandRightBackTouched",
            Key::HandRightLeftTouched => "HandRightLeftTouched",
            Key::HandRightRightTouched => "HandRightRightTouched",
            Key::LeftBumperPressed => "LeftBumperPressed",
            Key::RightBumperPressed => "RightBumperPressed",
            Key::ChestButtonPressed => "ChestButtonPressed",
            Key::SimpleClickOccurred => "ALChestButton/SimpleClickOccurred",
            Key::DoubleClickOccurred => "ALChestButton/DoubleClickOccurred",
            Key::TripleClickOccurred => "ALChestButton/TripleClickOccurred",
            Key::FootContactChanged => "footContactChanged",
            Key::FootContact => "footContact",
            Key::LeftFootContact => "leftFootContact",
            Key::RightFootContact => "rightFootContact",
            Key::LeftFootTotalWeight => "leftFootTotalWeight",
            Key::RightFootTotalWeight => "rightFootTotalWeight",
            Key::SonarLeftDetected => "SonarLeftDetected",
            Key::SonarRightDetected => "SonarRightDetected",
            Key::SonarLeftNothingDetected => "SonarLeftNothingDetected",
            Key::SonarRightNothingDetected => "SonarRightNothingDetected",
            Key::BatteryChargeChanged => "BatteryChargeChanged",
            Key::BatteryLowDetected => "BatteryLowDetected",
            Key::BatteryNearlyEmpty => "BatteryNearlyEmpty",
            Key::BatteryPowerPluggedChanged => "BatteryPowerPluggedChanged",
            Key::BatteryChargingFlagChanged => "BatteryChargingFlagChanged",
        }
    }

    /// Whether the name is an event (the others are plain data).
    pub fn is_event(self) -> bool {
        !matches!(
            self,
            Key::FootContact
                | Key::LeftFootContact
                | Key::RightFootContact
                | Key::LeftFootTotalWeight
                | Key::RightFootTotalWeight
        )
    }
}

/// A value as NAOqi sends it, without allocating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    Float(f64),
    Bool(bool),
    Int(i32),
    Nil,
}

impl Reading {
    /// 1.0 or 0.0, NAOqi's values for a touch sensor, a bumper, a button.
    pub fn flag(on: bool) -> Reading {
        Reading::Float(if on { 1.0 } else { 0.0 })
    }

    pub fn to_value(self) -> Value {
        match self {
            Reading::Float(value) => Value::from(value),
            Reading::Bool(value) => Value::from(value),
            Reading::Int(value) => Value::from(value),
            Reading::Nil => Value::Nil,
        }
    }
}

/// What the cycle thread asks the module's actor to write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    pub key: Key,
    pub value: Reading,
    /// Raise the event; otherwise store the value only (initial values, companion keys).
    pub raise: bool,
}
