//! Which DCM sensors make which events, with their thresholds and debouncing
//! (docs/sensors.md lists the same table).

use crate::catalog::Key;
use crate::detect::Band;

/// Touch sensors, bumpers and the chest button: LoLA sends 0.0 or 1.0.
pub(crate) const PRESSED: Band = Band::Above { on: 0.5, off: 0.5 };
/// Mechanical switches (bumpers, chest button) bounce: a new state must hold this long.
pub(crate) const SWITCH_HOLD_MS: i32 = 20;
/// ALSonar's obstacle threshold (0.5 m); 5 cm more to leave it.
pub(crate) const SONAR: Band = Band::Below { on: 0.5, off: 0.55 };
/// A foot is on the ground from 1 kg on its four FSRs, off it below 0.5 kg.
pub(crate) const FOOT: Band = Band::Above { on: 1.0, off: 0.5 };
pub(crate) const FOOT_HOLD_MS: i32 = 50;
/// A foot's total weight is written again once it moved this far (kg) from the value
/// written last: the FSRs' own resolution, and no ALMemory write for a weight that stays.
pub(crate) const WEIGHT_RESOLUTION_KG: f64 = 0.01;
/// Battery charge ratio: low under 20 %, nearly empty under 10 %, 3 points to leave.
pub(crate) const BATTERY_LOW: Band = Band::Below { on: 0.20, off: 0.23 };
pub(crate) const BATTERY_NEARLY_EMPTY: Band = Band::Below { on: 0.10, off: 0.13 };
/// Battery current (A, negative when discharging): the robot draws power from the
/// charger when the battery no longer discharges, and charges it when current flows in.
pub(crate) const PLUGGED: Band = Band::Above { on: -0.05, off: -0.15 };
pub(crate) const CHARGING: Band = Band::Above { on: 0.10, off: 0.05 };
/// Motors draw peaks the charger does not cover: the current's flags must hold 1 s.
pub(crate) const CURRENT_HOLD_MS: i32 = 1000;
/// Chest clicks: the next press within 400 ms of a release continues the sequence;
/// a press held 1 s is no click.
pub(crate) const CLICK_WINDOW_MS: i32 = 400;
pub(crate) const LONG_PRESS_MS: i32 = 1000;
/// The battery percentage changes once the reading is 0.6 points from the last one.
pub(crate) const CHARGE_MARGIN: f64 = 0.1;
pub(crate) const BATTERY_CHARGE: &str = "Battery/Charge";

/// How several sensors make one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    /// Pressed when any is.
    Max,
    /// A foot's weight: its four FSRs.
    Sum,
}

/// What a signal's change of state writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The event with 1.0 on, 0.0 off.
    Flag(Key),
    /// `ChestButtonPressed`, and the click count.
    ChestButton,
    /// `detected` with the distance when an obstacle comes, `nothing` when it goes.
    Sonar { detected: Key, nothing: Key },
    /// One foot's contact; `footContactChanged` when the robot's changes.
    Foot(Side),
    /// The event with `true` on, `false` off.
    BatteryFlag(Key),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    Right,
}

/// One signal: sensors (names under `Device/SubDeviceList/`, without `/Sensor/Value`).
pub(crate) struct SignalSpec {
    pub(crate) sensors: &'static [&'static str],
    pub(crate) combine: Combine,
    pub(crate) band: Band,
    pub(crate) hold_ms: i32,
    pub(crate) effect: Effect,
}

const fn touch(sensor: &'static [&'static str], key: Key) -> SignalSpec {
    SignalSpec {
        sensors: sensor,
        combine: Combine::Max,
        band: PRESSED,
        hold_ms: 0,
        effect: Effect::Flag(key),
    }
}

const fn switch(sensors: &'static [&'static str], effect: Effect) -> SignalSpec {
    SignalSpec { sensors, combine: Combine::Max, band: PRESSED, hold_ms: SWITCH_HOLD_MS, effect }
}

const fn foot(sensors: &'static [&'static str], side: Side) -> SignalSpec {
    SignalSpec {
        sensors,
        combine: Combine::Sum,
        band: FOOT,
        hold_ms: FOOT_HOLD_MS,
        effect: Effect::Foot(side),
    }
}

const fn sonar(sensor: &'static [&'static str], detected: Key, nothing: Key) -> SignalSpec {
    let effect = Effect::Sonar { detected, nothing };
    SignalSpec { sensors: sensor, combine: Combine::Max, band: SONAR, hold_ms: 0, effect }
}

const fn battery(sensor: &'static [&'static str], band: Band, hold_ms: i32, key: Key) -> SignalSpec {
    SignalSpec { sensors: sensor, combine: Combine::Max, band, hold_ms, effect: Effect::BatteryFlag(key) }
}

/// Every signal; those whose sensors the robot description lacks are left out.
pub(crate) const SIGNALS: &[SignalSpec] = &[
    touch(&["Head/Touch/Front"], Key::FrontTactilTouched),
    touch(&["Head/Touch/Middle"], Key::MiddleTactilTouched),
    touch(&["Head/Touch/Rear"], Key::RearTactilTouched),
    touch(&["LHand/Touch/Back"], Key::HandLeftBackTouched),
    touch(&["LHand/Touch/Left"], Key::HandLeftLeftTouched),
    touch(&["LHand/Touch/Right"], Key::HandLeftRightTouched),
    touch(&["RHand/Touch/Back"], Key::HandRightBackTouched),
    touch(&["RHand/Touch/Left"], Key::HandRightLeftTouched),
    touch(&["RHand/Touch/Right"], Key::HandRightRightTouched),
    switch(&["LFoot/Bumper/Left", "LFoot/Bumper/Right"], Effect::Flag(Key::LeftBumperPressed)),
    switch(&["RFoot/Bumper/Left", "RFoot/Bumper/Right"], Effect::Flag(Key::RightBumperPressed)),
    switch(&["ChestBoard/Button"], Effect::ChestButton),
    foot(
        &["LFoot/FSR/FrontLeft", "LFoot/FSR/FrontRight", "LFoot/FSR/RearLeft", "LFoot/FSR/RearRight"],
        Side::Left,
    ),
    foot(
        &["RFoot/FSR/FrontLeft", "RFoot/FSR/FrontRight", "RFoot/FSR/RearLeft", "RFoot/FSR/RearRight"],
        Side::Right,
    ),
    sonar(&["US/Left"], Key::SonarLeftDetected, Key::SonarLeftNothingDetected),
    sonar(&["US/Right"], Key::SonarRightDetected, Key::SonarRightNothingDetected),
    battery(&[BATTERY_CHARGE], BATTERY_LOW, 0, Key::BatteryLowDetected),
    battery(&[BATTERY_CHARGE], BATTERY_NEARLY_EMPTY, 0, Key::BatteryNearlyEmpty),
    battery(&["Battery/Current"], PLUGGED, CURRENT_HOLD_MS, Key::BatteryPowerPluggedChanged),
    battery(&["Battery/Current"], CHARGING, CURRENT_HOLD_MS, Key::BatteryChargingFlagChanged),
];

/// The events a signal's effect raises, and the data keys it writes.
pub(crate) fn keys_of(effect: Effect) -> Vec<Key> {
    match effect {
        Effect::Flag(key) | Effect::BatteryFlag(key) => vec![key],
        Effect::ChestButton => vec![
            Key::ChestButtonPressed,
            Key::SimpleClickOccurred,
            Key::DoubleClickOccurred,
            Key::TripleClickOccurred,
        ],
        Effect::Sonar { detected, nothing } => vec![detected, nothing],
        Effect::Foot(side) => vec![Key::FootContactChanged, Key::FootContact, side.key(), side.weight_key()],
    }
}

impl Side {
    pub(crate) fn index(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }

    /// The data key of this foot's total weight.
    pub(crate) fn weight_key(self) -> Key {
        match self {
            Side::Left => Key::LeftFootTotalWeight,
            Side::Right => Key::RightFootTotalWeight,
        }
    }

    /// The data key of this foot's contact.
    pub(crate) fn key(self) -> Key {
        match self {
            Side::Left => Key::LeftFootContact,
            Side::Right => Key::RightFootContact,
        }
    }
}
