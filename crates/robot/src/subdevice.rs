//! One subdevice (an actuator or a sensor) as a robot description declares it, and the
//! conversion between its value and the hardware's number: the words the device model and
//! the preferences that override a device's gain and offset both speak.

use serde::Deserialize;

/// `Device/SubDeviceList/`: the prefix every full subdevice name starts with.
pub const SUBDEVICE_PREFIX: &str = "Device/SubDeviceList/";
/// `Device/DeviceList/`: NAOqi's prefix for boards, returned by `getPrefix`.
pub const DEVICE_PREFIX: &str = "Device/DeviceList/";
/// The keys the DCM publishes for each actuator besides its value (`.../Actuator/Gain`).
pub const ACTUATOR_PROPERTIES: [&str; 4] = ["Gain", "Offset", "Ack", "Nack"];
/// The keys the DCM publishes for each sensor besides its value.
pub const SENSOR_PROPERTIES: [&str; 2] = ["Gain", "Offset"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// Linear interpolation between timed commands (joints, stiffness, LEDs).
    Interpolated,
    /// Past commands applied once; future ones wait (sonar).
    Trigger,
    Sensor,
}

/// One subdevice as the description declares it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Name without the `Device/SubDeviceList/` prefix.
    pub name: String,
    pub kind: DeviceKind,
    pub unit: String,
    pub min: f64,
    pub max: f64,
    /// The hardware receives `round(value * gain + offset)`.
    pub gain: f64,
    pub offset: f64,
    pub initial: f64,
}

/// What turns a value into the hardware's integer and back, packed for the cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conversion {
    pub gain: f64,
    pub offset: f64,
}

impl Conversion {
    /// The integer the hardware receives for `value`: rounded half away from zero.
    #[inline]
    pub fn to_hardware(self, value: f64) -> i64 {
        round_to_i64(value * self.gain + self.offset)
    }

    /// The value an integer stands for: what was actually sent.
    #[inline]
    pub fn from_hardware(self, raw: i64) -> f64 {
        (raw as f64 - self.offset) / self.gain
    }

    /// A sensor's value from what the hardware read: `(reading - offset) / gain`, the
    /// same relation as an actuator's, without rounding.
    #[inline]
    pub fn sensor_value(self, reading: f64) -> f64 {
        (reading - self.offset) / self.gain
    }

    /// What the hardware reads when a sensor's value is `value`.
    #[inline]
    pub fn sensor_reading(self, value: f64) -> f64 {
        value * self.gain + self.offset
    }
}

/// `x.round() as i64` in a few instructions: x86-64's baseline has no rounding instruction,
/// and `f64::round` is a call into a software routine, once per actuator per cycle. A
/// double's fractional part is exact, so the result is the same for every `x`: NaN gives 0,
/// and values past `i64`'s range saturate, as the cast does.
#[inline]
fn round_to_i64(x: f64) -> i64 {
    let truncated = x as i64;
    let fraction = x - truncated as f64;
    if fraction >= 0.5 {
        truncated.saturating_add(1)
    } else if fraction <= -0.5 {
        truncated.saturating_sub(1)
    } else {
        truncated
    }
}

impl DeviceSpec {
    pub fn conversion(&self) -> Conversion {
        Conversion { gain: self.gain, offset: self.offset }
    }

    pub fn full_name(&self) -> String {
        format!("{SUBDEVICE_PREFIX}{}", self.name)
    }

    /// The ALMemory key of one of its properties: `.../Actuator/Value` → `.../Actuator/Gain`.
    pub fn property_key(&self, property: &str) -> String {
        let name = self.name.strip_suffix("/Value").unwrap_or(&self.name);
        format!("{SUBDEVICE_PREFIX}{name}/{property}")
    }

    /// Every ALMemory key the DCM publishes for this device: its value and properties.
    pub fn published_keys(&self) -> Vec<String> {
        let properties: &[&str] =
            if self.kind == DeviceKind::Sensor { &SENSOR_PROPERTIES } else { &ACTUATOR_PROPERTIES };
        std::iter::once(self.full_name())
            .chain(properties.iter().map(|name| self.property_key(name)))
            .collect()
    }

    pub fn to_hardware(&self, value: f64) -> i64 {
        self.conversion().to_hardware(value)
    }

    pub fn from_hardware(&self, raw: i64) -> f64 {
        self.conversion().from_hardware(raw)
    }

    /// `value` clamped to the device's range.
    #[inline]
    pub fn clamp(&self, value: f64) -> f64 {
        value.clamp(self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_integer_is_rounded_value_times_gain_plus_offset() {
        let spec = DeviceSpec {
            name: "X".into(),
            kind: DeviceKind::Interpolated,
            unit: "".into(),
            min: 0.0,
            max: 1.0,
            gain: 255.0,
            offset: 0.0,
            initial: 0.0,
        };
        assert_eq!(spec.to_hardware(0.5), 128);
        assert!((spec.from_hardware(128) - 128.0 / 255.0).abs() < 1e-12);
    }

    #[test]
    fn rounding_is_f64_round_cast() {
        let halves = [0.5, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5, 4503599627370497.0];
        let extremes = [f64::NAN, f64::INFINITY, 1e19, 9.223372036854775e18, 0.0, 1e-300];
        let steps = (-2000..2000).map(|i| f64::from(i) * 0.0137);
        for x in halves.into_iter().chain(extremes).chain(steps) {
            for x in [x, -x] {
                assert_eq!(round_to_i64(x), x.round() as i64, "{x}");
            }
        }
    }
}
