//! How far preferences may go: keys per table, the size of a text value, and the gains
//! and offsets a device may be given (by `DCM.preferences` or `DCM.calibration`), so that
//! no client can grow the tables without end nor drive a joint out of its range.

use crate::subdevice::{Conversion, DeviceSpec};

/// Keys one table (`[preferences.chest]`, `.head`, `.local`) holds at most.
pub const MAX_KEYS_PER_TARGET: usize = 1024;
/// Bytes of one text value at most.
pub const MAX_TEXT_BYTES: usize = 256;
/// A device's gain stays within these multiples of its description's gain (so it keeps
/// the description's sign).
pub const GAIN_RATIO: (f64, f64) = (0.5, 2.0);
/// With its new gain and offset, a device's range `[min, max]` maps to hardware numbers
/// within the description's own image of that range widened, on each side, by this part
/// of the range: a tenth of HeadYaw's range is 0.42 rad.
pub const RANGE_MARGIN: f64 = 0.1;

/// A preference beyond one of these limits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PreferenceLimit {
    #[error("[preferences.{table}] already holds {limit} keys, the most a table may hold")]
    TooManyKeys { table: &'static str, limit: usize },
    #[error("{key} is {bytes} bytes long, the longest text value is {limit} bytes")]
    TextTooLong { key: String, bytes: usize, limit: usize },
    #[error(
        "{device}: gain {gain:?} is outside [{min:?}, {max:?}], {}× to {}× the description's \
         {description:?}",
        GAIN_RATIO.0,
        GAIN_RATIO.1
    )]
    Gain { device: String, gain: f64, description: f64, min: f64, max: f64 },
    #[error(
        "{device}: gain {gain:?}, offset {offset:?} map its range to [{from:?}, {to:?}], beyond \
         [{lowest:?}, {highest:?}], the description's widened by {}% of the range each side",
        RANGE_MARGIN * 100.0
    )]
    Range { device: String, gain: f64, offset: f64, from: f64, to: f64, lowest: f64, highest: f64 },
}

/// Short enough for an error message: four decimals.
fn rounded(number: f64) -> f64 {
    (number * 1e4).round() / 1e4
}

/// Whether `device` may use `conversion` ([`GAIN_RATIO`], [`RANGE_MARGIN`]).
pub fn check_conversion(device: &DeviceSpec, conversion: Conversion) -> Result<(), PreferenceLimit> {
    let bounds = (device.gain * GAIN_RATIO.0, device.gain * GAIN_RATIO.1);
    let (min, max) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    // Written so that NaN is refused too.
    if !(conversion.gain >= min && conversion.gain <= max) {
        return Err(PreferenceLimit::Gain {
            device: device.name.clone(),
            gain: conversion.gain,
            description: device.gain,
            min,
            max,
        });
    }
    let image = |conversion: Conversion| {
        let (low, high) = (conversion.sensor_reading(device.min), conversion.sensor_reading(device.max));
        (low.min(high), low.max(high))
    };
    let (low, high) = image(device.conversion());
    let margin = RANGE_MARGIN * (device.max - device.min) * device.gain.abs();
    let (lowest, highest) = (low - margin, high + margin);
    let (from, to) = image(conversion);
    if !(from >= lowest && to <= highest) {
        return Err(PreferenceLimit::Range {
            device: device.name.clone(),
            gain: conversion.gain,
            offset: rounded(conversion.offset),
            from: rounded(from),
            to: rounded(to),
            lowest: rounded(lowest),
            highest: rounded(highest),
        });
    }
    Ok(())
}
