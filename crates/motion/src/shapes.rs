//! NAOqi's argument shapes for ALMotion: the angles, stiffnesses, times and Bezier keys
//! scripts pass, turned into one target or one list of key frames per joint (names are
//! resolved to joints by body.rs), or an error naming the argument, the joint, and what
//! was expected and got. docs/motion.md has the table of accepted shapes.
//! Its numbers are bounded (numbers.rs) so that every trajectory stays finite.

use std::slice;

use naobroker_framework::{CallError, Value};
use naobroker_protocol::{cut, value_excerpt, EXCERPT_BYTES};

mod numbers;

use numbers::{flat_handles, handle, increasing, number, Side, TIME};
pub(crate) use numbers::{fraction, Number, ANGLE, STIFFNESS};

/// What is wrong with a call's arguments.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ShapeError {
    /// The argument has none of the accepted forms.
    #[error("{argument}: expected {expected}, got {got}")]
    Form { argument: &'static str, expected: &'static str, got: String },
    /// A list that is neither one entry for all joints nor one per joint.
    #[error("{argument}: {got} for {joints} ({names}); expected {expected}")]
    Count { argument: &'static str, got: String, joints: String, names: String, expected: &'static str },
    /// One joint's entry is wrong (`at` is the joint, and the key frame when it matters).
    #[error("{argument}: {at}: expected {expected}, got {got}")]
    Entry { argument: &'static str, at: String, expected: &'static str, got: String },
    /// A joint's key frames and times do not pair up.
    #[error("{arguments}: {joint} has {values} but {times}; expected one time per key frame")]
    Frames { arguments: String, joint: String, values: String, times: String },
    /// A joint's times go backwards, repeat, start at or before 0, or are too close.
    #[error(
        "{argument}: {joint}: key-frame times must be positive and increasing by at least 0.001 s, \
         got {times}"
    )]
    Times { argument: &'static str, joint: String, times: String },
}

impl From<ShapeError> for CallError {
    fn from(error: ShapeError) -> CallError {
        CallError::bad_argument(error.to_string())
    }
}

/// A key-frame method's arguments as NAOqi's documentation names them, and what one of
/// its values is called.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyFrameArguments {
    pub(crate) values: &'static str,
    pub(crate) times: &'static str,
    /// One value, and several: ("angle", "angles").
    pub(crate) noun: (&'static str, &'static str),
    pub(crate) number: Number,
}

pub(crate) const ANGLE_INTERPOLATION: KeyFrameArguments =
    KeyFrameArguments { values: "angleLists", times: "timeLists", noun: ("angle", "angles"), number: ANGLE };
pub(crate) const STIFFNESS_INTERPOLATION: KeyFrameArguments = KeyFrameArguments {
    values: "stiffnessLists",
    times: "timeLists",
    noun: ("stiffness", "stiffnesses"),
    number: STIFFNESS,
};
pub(crate) const ANGLE_INTERPOLATION_BEZIER: KeyFrameArguments =
    KeyFrameArguments { values: "controlPoints", times: "times", noun: ("key", "keys"), number: ANGLE };

const TARGETS: &str = "a number for all joints or a list of one number per joint";
const KEY_FRAMES: &str = "a number or a list for all joints, or a list of one number or list per joint";
const CONTROL_POINTS: &str = "a key or a list of keys for all joints, or a list of one key or list per joint";
const KEY: &str = "an angle or [angle, [type, dTime, dAngle], [type, dTime, dAngle]]";

/// One joint's key frames: `values[i]` at `times[i]` seconds from the start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyFrames {
    pub(crate) values: Vec<f64>,
    pub(crate) times: Vec<f64>,
}

/// One joint's Bezier key frames: each key has an in and an out handle `(dTime, dAngle)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BezierFrames {
    pub(crate) values: Vec<f64>,
    pub(crate) times: Vec<f64>,
    pub(crate) handles: Vec<[(f64, f64); 2]>,
}

/// One target per joint (`setAngles`, `changeAngles`, `angleInterpolationWithSpeed`,
/// `setStiffnesses`): a number for all joints, or a list of one number per joint.
pub(crate) fn targets(
    (argument, kind): (&'static str, Number),
    joints: &[&str],
    values: &Value,
) -> Result<Vec<f64>, ShapeError> {
    let lists = per_joint(argument, joints, values, NUMBER, TARGETS)?;
    joints
        .iter()
        .zip(lists)
        .map(|(joint, entries)| match entries {
            [one] => number(argument, joint.to_string(), one, kind),
            _ => Err(ShapeError::Entry {
                argument,
                at: joint.to_string(),
                expected: "one number",
                got: quote(entries),
            }),
        })
        .collect()
}

/// Key frames per joint (`angleInterpolation`, `stiffnessInterpolation`).
pub(crate) fn key_frames(
    arguments: KeyFrameArguments,
    joints: &[&str],
    values: &Value,
    times: &Value,
) -> Result<Vec<KeyFrames>, ShapeError> {
    let value_lists = per_joint(arguments.values, joints, values, NUMBER, KEY_FRAMES)?;
    let time_lists = time_lists(arguments.times, joints, times, &value_lists)?;
    joints
        .iter()
        .zip(value_lists)
        .zip(time_lists)
        .map(|((joint, entries), times)| {
            let times = key_times(arguments, joint, times, entries.len())?;
            let values = entries
                .iter()
                .enumerate()
                .map(|(index, entry)| {
                    let at = key_frame(joint, index, entries.len());
                    number(arguments.values, at, entry, arguments.number)
                })
                .collect::<Result<_, _>>()?;
            Ok(KeyFrames { values, times })
        })
        .collect()
}

/// Bezier key frames per joint (`angleInterpolationBezier`). A key is
/// `[angle, [type, dTime, dAngle], [type, dTime, dAngle]]` (in and out handles, `type` is
/// not used) or a bare angle, whose handles are flat and a third of the way to the
/// neighbouring keys.
pub(crate) fn bezier_frames(
    joints: &[&str],
    times: &Value,
    control_points: &Value,
) -> Result<Vec<BezierFrames>, ShapeError> {
    let arguments = ANGLE_INTERPOLATION_BEZIER;
    let key_lists = per_joint(arguments.values, joints, control_points, BEZIER_KEY, CONTROL_POINTS)?;
    let time_lists = time_lists(arguments.times, joints, times, &key_lists)?;
    joints
        .iter()
        .zip(key_lists)
        .zip(time_lists)
        .map(|((joint, keys), times)| {
            let times = key_times(arguments, joint, times, keys.len())?;
            let mut values = Vec::with_capacity(keys.len());
            let mut handles = Vec::with_capacity(keys.len());
            for (index, key) in keys.iter().enumerate() {
                let at = key_frame(joint, index, keys.len());
                let (value, key_handles) = match key {
                    Value::Array(parts) if is_key(key) => (
                        number(arguments.values, at.clone(), &parts[0], ANGLE)?,
                        [
                            handle(&at, &parts[1], Side::In, &times, index)?,
                            handle(&at, &parts[2], Side::Out, &times, index)?,
                        ],
                    ),
                    bare if is_number(bare) => {
                        (number(arguments.values, at, bare, ANGLE)?, flat_handles(&times, index))
                    }
                    other => {
                        let got = value_excerpt(other);
                        return Err(ShapeError::Entry { argument: arguments.values, at, expected: KEY, got });
                    }
                };
                values.push(value);
                handles.push(key_handles);
            }
            Ok(BezierFrames { values, times, handles })
        })
        .collect()
}

/// What one entry of a list is: a number, or a Bezier key.
#[derive(Debug, Clone, Copy)]
struct Entry {
    is: fn(&Value) -> bool,
    noun: (&'static str, &'static str),
}

const NUMBER: Entry = Entry { is: is_number, noun: ("number", "numbers") };
const BEZIER_KEY: Entry = Entry { is: is_key, noun: ("key", "keys") };

fn is_number(value: &Value) -> bool {
    matches!(value, Value::F64(_) | Value::F32(_) | Value::Integer(_))
}

/// A Bezier key: a bare angle, or `[angle, [handle], [handle]]`.
fn is_key(value: &Value) -> bool {
    match value {
        Value::Array(parts) => {
            parts.len() == 3 && is_number(&parts[0]) && parts[1].is_array() && parts[2].is_array()
        }
        other => is_number(other),
    }
}

/// The entries (key frames, or one target) `value` gives each joint: one entry for all
/// joints; for one joint, its list or a list holding its list; else one entry or one list
/// per joint.
fn per_joint<'a>(
    argument: &'static str,
    joints: &[&str],
    value: &'a Value,
    entry: Entry,
    expected: &'static str,
) -> Result<Vec<&'a [Value]>, ShapeError> {
    let is_entry = entry.is;
    if is_entry(value) {
        return Ok(vec![slice::from_ref(value); joints.len()]);
    }
    let Value::Array(items) = value else {
        return Err(ShapeError::Form { argument, expected, got: value_excerpt(value) });
    };
    let entries = |item: &'a Value| match item {
        Value::Array(inner) if !is_entry(item) => inner.as_slice(),
        entry => slice::from_ref(entry),
    };
    match (joints.len(), items.as_slice()) {
        (1, [only]) => Ok(vec![entries(only)]),
        (1, _) => Ok(vec![items.as_slice()]),
        (count, _) if items.len() == count => Ok(items.iter().map(entries).collect()),
        _ => Err(ShapeError::Count {
            argument,
            got: plural(items.len(), item_noun(items, entry)),
            joints: plural(joints.len(), ("joint", "joints")),
            names: cut(&joints.join(", "), EXCERPT_BYTES),
            expected,
        }),
    }
}

/// Times per joint: as [`per_joint`], and also one flat list shared by all joints. A flat
/// list as long as the joints are many is one time per joint when every joint has one
/// key frame, else the list all joints share.
fn time_lists<'a>(
    argument: &'static str,
    joints: &[&str],
    times: &'a Value,
    frames: &[&[Value]],
) -> Result<Vec<&'a [Value]>, ShapeError> {
    if let Value::Array(items) = times {
        let one_each = items.len() == joints.len() && frames.iter().all(|frames| frames.len() == 1);
        if joints.len() > 1 && items.iter().all(is_number) && !one_each {
            return Ok(vec![items.as_slice(); joints.len()]);
        }
    }
    per_joint(argument, joints, times, NUMBER, "a number or a list for all joints, or one per joint")
}

/// A joint's times, one per key frame: seconds up to `MAX_TIME_S`, each at least
/// `MIN_KEY_INTERVAL_S` after the one before (the first after 0).
fn key_times(
    arguments: KeyFrameArguments,
    joint: &str,
    entries: &[Value],
    frames: usize,
) -> Result<Vec<f64>, ShapeError> {
    if frames == 0 {
        return Err(ShapeError::Entry {
            argument: arguments.values,
            at: joint.to_string(),
            expected: "at least one key frame",
            got: "[]".into(),
        });
    }
    if entries.len() != frames {
        return Err(ShapeError::Frames {
            arguments: format!("{} and {}", arguments.values, arguments.times),
            joint: joint.to_string(),
            values: plural(frames, arguments.noun),
            times: plural(entries.len(), ("time", "times")),
        });
    }
    let times = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| number(arguments.times, key_frame(joint, index, frames), entry, TIME))
        .collect::<Result<Vec<f64>, _>>()?;
    if !increasing(&times) {
        return Err(ShapeError::Times {
            argument: arguments.times,
            joint: joint.to_string(),
            times: quote(entries),
        });
    }
    Ok(times)
}

/// "HeadYaw", or "HeadYaw key frame 2" when the joint has several.
fn key_frame(joint: &str, index: usize, frames: usize) -> String {
    if frames > 1 {
        format!("{joint} key frame {}", index + 1)
    } else {
        joint.to_string()
    }
}

fn item_noun(items: &[Value], entry: Entry) -> (&'static str, &'static str) {
    if items.iter().all(entry.is) {
        entry.noun
    } else if items.iter().all(|item| item.is_array() && !(entry.is)(item)) {
        ("list", "lists")
    } else {
        ("item", "items")
    }
}

fn plural(count: usize, (one, several): (&str, &str)) -> String {
    format!("{count} {}", if count == 1 { one } else { several })
}

fn quote(entries: &[Value]) -> String {
    value_excerpt(&Value::Array(entries.to_vec()))
}

#[cfg(test)]
mod tests;
