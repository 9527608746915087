//! The numbers ALMotion's calls may give, bounded so that every trajectory the engine
//! computes from them stays finite (angles, times, key-frame intervals, speed fractions),
//! and Bezier handles, which stay between their keys.

use naobroker_framework::Value;
use naobroker_protocol::value_excerpt;

use super::{ShapeError, ANGLE_INTERPOLATION_BEZIER};

/// The largest angle, change of angle, or Bezier handle's dAngle a call may give (rad):
/// far beyond every joint's range (absolute angles are clamped to it), and small enough
/// that no trajectory computed from it overflows.
const MAX_ANGLE_RAD: f64 = 100.0;
/// The latest key-frame time (s): an hour.
const MAX_TIME_S: f64 = 3600.0;
/// The least time between key frames, and from the start to the first (s).
const MIN_KEY_INTERVAL_S: f64 = 0.001;
/// The slowest `fractionMaxSpeed`: a thousandth of the joint's maximum speed.
const MIN_FRACTION: f64 = 0.001;
/// Times are computed in floating point: 1.001 − 1.0 is a little under 0.001.
const TIME_ROUNDING_S: f64 = 1e-9;

/// What one number of an argument may be: its description, and its largest magnitude.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Number {
    expected: &'static str,
    max_abs: f64,
}

/// Angles and changes of angle.
pub(crate) const ANGLE: Number = Number { expected: "a number within ±100 rad", max_abs: MAX_ANGLE_RAD };
/// Stiffnesses: clamped to [0, 1] afterwards.
pub(crate) const STIFFNESS: Number = Number { expected: "a finite number", max_abs: f64::MAX };
pub(super) const TIME: Number = Number { expected: "a number of seconds up to 3600", max_abs: MAX_TIME_S };
/// A handle's type (not used).
const ANY: Number = Number { expected: "a finite number", max_abs: f64::MAX };

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Side {
    In,
    Out,
}

/// Key `index`'s handle `[type, dTime, dAngle]`: the in handle points back in time, at
/// most to the previous key (or the start), the out handle forward, at most to the next
/// key, or the curve would run backwards in time; `|dAngle| <= MAX_ANGLE_RAD`.
pub(super) fn handle(
    at: &str,
    value: &Value,
    side: Side,
    times: &[f64],
    index: usize,
) -> Result<(f64, f64), ShapeError> {
    let expected = match side {
        Side::In => {
            "an in handle [type, dTime <= 0 back to the previous key at most, dAngle within ±100 rad]"
        }
        Side::Out => "an out handle [type, dTime >= 0 up to the next key at most, dAngle within ±100 rad]",
    };
    let error = || ShapeError::Entry {
        argument: ANGLE_INTERPOLATION_BEZIER.values,
        at: at.to_string(),
        expected,
        got: value_excerpt(value),
    };
    let Some([kind, d_time, d_angle]) = value.as_array().map(Vec::as_slice) else { return Err(error()) };
    let within = |part: &Value, kind: Number| as_f64(part).filter(|x| x.abs() <= kind.max_abs);
    let parts = (within(kind, ANY), within(d_time, TIME), within(d_angle, ANGLE));
    let (Some(_), Some(d_time), Some(d_angle)) = parts else { return Err(error()) };
    let previous = if index == 0 { 0.0 } else { times[index - 1] };
    let reach = match side {
        Side::In => times[index] - previous,
        Side::Out => times.get(index + 1).map_or(MAX_TIME_S, |next| next - times[index]),
    };
    let forward = match side {
        Side::In => -d_time,
        Side::Out => d_time,
    };
    if !(0.0..=reach + TIME_ROUNDING_S).contains(&forward) {
        return Err(error());
    }
    Ok((d_time, d_angle))
}

/// Handles of a bare-angle key: flat, a third of the way to the previous key (or to the
/// start) and to the next key.
pub(super) fn flat_handles(times: &[f64], index: usize) -> [(f64, f64); 2] {
    let before = times[index] - if index == 0 { 0.0 } else { times[index - 1] };
    let after = times.get(index + 1).map_or(before, |next| next - times[index]);
    [(-before / 3.0, 0.0), (after / 3.0, 0.0)]
}

fn as_f64(value: &Value) -> Option<f64> {
    match value {
        Value::F64(x) => Some(*x),
        Value::F32(x) => Some(f64::from(*x)),
        Value::Integer(i) => i.as_f64(),
        _ => None,
    }
}

/// A number of the `kind` the argument takes (NaN and infinities never are).
pub(super) fn number(
    argument: &'static str,
    at: String,
    value: &Value,
    kind: Number,
) -> Result<f64, ShapeError> {
    as_f64(value).filter(|x| x.abs() <= kind.max_abs).ok_or_else(|| ShapeError::Entry {
        argument,
        at,
        expected: kind.expected,
        got: value_excerpt(value),
    })
}

/// Times (after the start, at 0) that increase by at least `MIN_KEY_INTERVAL_S` each.
pub(super) fn increasing(times: &[f64]) -> bool {
    let mut previous = 0.0;
    times.iter().all(|&time| {
        let apart = time - previous >= MIN_KEY_INTERVAL_S - TIME_ROUNDING_S;
        previous = time;
        apart
    })
}

/// `fractionMaxSpeed`: in [`MIN_FRACTION`, 1].
pub(crate) fn fraction(value: f64) -> Result<f64, ShapeError> {
    if (MIN_FRACTION..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(ShapeError::Form {
            argument: "fractionMaxSpeed",
            expected: "a number in [0.001, 1]",
            got: value_excerpt(&Value::F64(value)),
        })
    }
}
