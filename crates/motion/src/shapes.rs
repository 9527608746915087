//! NAOqi's argument shapes for ALMotion: the angles, stiffnesses, times and Bezier keys
//! scripts pass, turned into one target or one list of key frames per joint (names are
//! resolved to joints by body.rs), or an error naming the argument, the joint, and what
//! was expected and got. docs/motion.md has the table of accepted shapes.

use std::slice;

use naobroker_framework::{CallError, Value};
use naobroker_protocol::{cut, value_excerpt, EXCERPT_BYTES};

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
    /// A joint's times go backwards, repeat, or start at or before 0.
    #[error("{argument}: {joint}: key-frame times must be positive and increasing, got {times}")]
    Times { argument: &'static str, joint: String, times: String },
}

impl From<ShapeError> for CallError {
    fn from(error: ShapeError) -> CallError {
        CallError::new(error.to_string())
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
}

pub(crate) const ANGLE_INTERPOLATION: KeyFrameArguments =
    KeyFrameArguments { values: "angleLists", times: "timeLists", noun: ("angle", "angles") };
pub(crate) const STIFFNESS_INTERPOLATION: KeyFrameArguments =
    KeyFrameArguments { values: "stiffnessLists", times: "timeLists", noun: ("stiffness", "stiffnesses") };
pub(crate) const ANGLE_INTERPOLATION_BEZIER: KeyFrameArguments =
    KeyFrameArguments { values: "controlPoints", times: "times", noun: ("key", "keys") };

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
    argument: &'static str,
    joints: &[&str],
    values: &Value,
) -> Result<Vec<f64>, ShapeError> {
    let lists = per_joint(argument, joints, values, NUMBER, TARGETS)?;
    joints
        .iter()
        .zip(lists)
        .map(|(joint, entries)| match entries {
            [one] => finite(argument, joint.to_string(), one),
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
                .map(|(index, entry)| finite(arguments.values, key_frame(joint, index, entries.len()), entry))
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
                        finite(arguments.values, at.clone(), &parts[0])?,
                        [handle(&at, &parts[1], Side::In)?, handle(&at, &parts[2], Side::Out)?],
                    ),
                    bare if is_number(bare) => {
                        (finite(arguments.values, at, bare)?, flat_handles(&times, index))
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

/// A joint's times: finite seconds, positive and increasing, one per key frame.
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
        .map(|(index, entry)| finite(arguments.times, key_frame(joint, index, frames), entry))
        .collect::<Result<Vec<f64>, _>>()?;
    let increasing = times.iter().try_fold(0.0, |previous, &time| (time > previous).then_some(time));
    if increasing.is_none() {
        return Err(ShapeError::Times {
            argument: arguments.times,
            joint: joint.to_string(),
            times: quote(entries),
        });
    }
    Ok(times)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    In,
    Out,
}

/// A handle `[type, dTime, dAngle]`: the in handle points back in time, the out handle
/// forward, or the curve would run backwards in time.
fn handle(at: &str, value: &Value, side: Side) -> Result<(f64, f64), ShapeError> {
    let expected = match side {
        Side::In => "an in handle [type, dTime <= 0, dAngle]",
        Side::Out => "an out handle [type, dTime >= 0, dAngle]",
    };
    let error = || ShapeError::Entry {
        argument: ANGLE_INTERPOLATION_BEZIER.values,
        at: at.to_string(),
        expected,
        got: value_excerpt(value),
    };
    let Some([kind, d_time, d_angle]) = value.as_array().map(Vec::as_slice) else { return Err(error()) };
    let number = |part: &Value| -> Option<f64> { as_f64(part).filter(|x| x.is_finite()) };
    let (Some(_), Some(d_time), Some(d_angle)) = (number(kind), number(d_time), number(d_angle)) else {
        return Err(error());
    };
    let backwards = match side {
        Side::In => d_time > 0.0,
        Side::Out => d_time < 0.0,
    };
    if backwards {
        return Err(error());
    }
    Ok((d_time, d_angle))
}

/// Handles of a bare-angle key: flat, a third of the way to the previous key (or to the
/// start) and to the next key.
fn flat_handles(times: &[f64], index: usize) -> [(f64, f64); 2] {
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

fn finite(argument: &'static str, at: String, value: &Value) -> Result<f64, ShapeError> {
    as_f64(value).filter(|x| x.is_finite()).ok_or_else(|| ShapeError::Entry {
        argument,
        at,
        expected: "a finite number",
        got: value_excerpt(value),
    })
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
mod tests {
    use super::*;

    const HEAD: [&str; 2] = ["HeadYaw", "HeadPitch"];
    const YAW: [&str; 1] = ["HeadYaw"];

    fn n(x: f64) -> Value {
        Value::F64(x)
    }

    fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Array(items.into_iter().collect())
    }

    fn numbers(xs: &[f64]) -> Value {
        list(xs.iter().map(|&x| n(x)))
    }

    /// A Choregraphe-style key with symmetric handles.
    fn key(angle: f64, d_time: f64) -> Value {
        list([n(angle), list([3.into(), n(-d_time), n(0.0)]), list([3.into(), n(d_time), n(0.0)])])
    }

    fn frames(values: &[f64], times: &[f64]) -> KeyFrames {
        KeyFrames { values: values.to_vec(), times: times.to_vec() }
    }

    fn angles(joints: &[&str], values: Value, times: Value) -> Result<Vec<KeyFrames>, ShapeError> {
        key_frames(ANGLE_INTERPOLATION, joints, &values, &times)
    }

    fn error(result: Result<impl std::fmt::Debug, ShapeError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn targets_a_number_for_all_or_one_per_joint() {
        assert_eq!(targets("stiffnesses", &HEAD, &n(1.0)).unwrap(), [1.0, 1.0]);
        assert_eq!(targets("angles", &HEAD, &numbers(&[0.2, 0.1])).unwrap(), [0.2, 0.1]);
        assert_eq!(targets("angles", &YAW, &numbers(&[0.3])).unwrap(), [0.3]);
        assert_eq!(targets("angles", &YAW, &1.into()).unwrap(), [1.0], "integers are numbers");
    }

    #[test]
    fn targets_errors_name_the_argument_joint_and_shape() {
        assert_eq!(
            error(targets("angles", &HEAD, &numbers(&[0.1]))),
            "angles: 1 number for 2 joints (HeadYaw, HeadPitch); \
             expected a number for all joints or a list of one number per joint"
        );
        assert_eq!(
            error(targets("angles", &YAW, &numbers(&[0.1, 0.2]))),
            "angles: HeadYaw: expected one number, got [0.1, 0.2]"
        );
        assert_eq!(
            error(targets("changes", &HEAD, &list([n(0.1), n(f64::NAN)]))),
            "changes: HeadPitch: expected a finite number, got NaN"
        );
        assert_eq!(
            error(targets("angles", &YAW, &"up".into())),
            "angles: expected a number for all joints or a list of one number per joint, got \"up\""
        );
    }

    #[test]
    fn one_number_and_one_time_for_all_joints() {
        let body: Vec<String> = (0..26).map(|i| format!("J{i}")).collect();
        let body: Vec<&str> = body.iter().map(String::as_str).collect();
        let stiffness = key_frames(STIFFNESS_INTERPOLATION, &body, &n(1.0), &n(1.0)).unwrap();
        assert_eq!(stiffness, vec![frames(&[1.0], &[1.0]); 26]);
    }

    #[test]
    fn one_joint_a_number_a_flat_list_or_a_list_holding_one_list() {
        assert_eq!(angles(&YAW, n(0.5), n(1.0)).unwrap(), [frames(&[0.5], &[1.0])]);
        let flat = angles(&YAW, numbers(&[1.0, 0.0]), numbers(&[1.0, 2.0])).unwrap();
        assert_eq!(flat, [frames(&[1.0, 0.0], &[1.0, 2.0])]);
        let choregraphe = angles(&YAW, list([numbers(&[0.5])]), list([numbers(&[1.0])])).unwrap();
        assert_eq!(choregraphe, [frames(&[0.5], &[1.0])]);
        let mixed = angles(&YAW, list([numbers(&[1.0, 0.0])]), numbers(&[1.0, 2.0])).unwrap();
        assert_eq!(mixed, [frames(&[1.0, 0.0], &[1.0, 2.0])]);
    }

    #[test]
    fn one_angle_and_one_time_per_joint() {
        let each = angles(&HEAD, numbers(&[0.2, 0.1]), numbers(&[1.0, 1.2])).unwrap();
        assert_eq!(each, [frames(&[0.2], &[1.0]), frames(&[0.1], &[1.2])]);
        let one_time = angles(&HEAD, numbers(&[0.2, 0.1]), n(1.0)).unwrap();
        assert_eq!(one_time, [frames(&[0.2], &[1.0]), frames(&[0.1], &[1.0])]);
    }

    #[test]
    fn one_list_per_joint_or_one_time_list_shared() {
        let per_joint = angles(
            &HEAD,
            list([numbers(&[1.0, 0.0]), numbers(&[-0.5, 0.5, 0.0])]),
            list([numbers(&[1.0, 2.0]), numbers(&[1.0, 2.0, 3.0])]),
        )
        .unwrap();
        assert_eq!(
            per_joint,
            [frames(&[1.0, 0.0], &[1.0, 2.0]), frames(&[-0.5, 0.5, 0.0], &[1.0, 2.0, 3.0])]
        );
        // Two numbers for two joints that have two key frames each: the times they share.
        let shared =
            angles(&HEAD, list([numbers(&[0.3, 0.0]), numbers(&[0.2, 0.0])]), numbers(&[1.0, 2.0])).unwrap();
        assert_eq!(shared, [frames(&[0.3, 0.0], &[1.0, 2.0]), frames(&[0.2, 0.0], &[1.0, 2.0])]);
        let one_frame_each = angles(&HEAD, numbers(&[0.3, 0.2]), numbers(&[1.5])).unwrap();
        assert_eq!(one_frame_each, [frames(&[0.3], &[1.5]), frames(&[0.2], &[1.5])]);
    }

    #[test]
    fn per_joint_entries_may_mix_numbers_and_lists() {
        let mixed = angles(&HEAD, list([numbers(&[0.3, 0.0]), n(0.2)]), list([numbers(&[1.0, 2.0]), n(1.0)]))
            .unwrap();
        assert_eq!(mixed, [frames(&[0.3, 0.0], &[1.0, 2.0]), frames(&[0.2], &[1.0])]);
    }

    #[test]
    fn key_frame_errors_name_the_argument_joint_and_shape() {
        assert_eq!(
            error(key_frames(STIFFNESS_INTERPOLATION, &HEAD, &list([numbers(&[1.0])]), &n(1.0))),
            "stiffnessLists: 1 list for 2 joints (HeadYaw, HeadPitch); \
             expected a number or a list for all joints, or a list of one number or list per joint"
        );
        assert_eq!(
            error(angles(&HEAD, numbers(&[0.1, 0.2, 0.3]), n(1.0))),
            "angleLists: 3 numbers for 2 joints (HeadYaw, HeadPitch); \
             expected a number or a list for all joints, or a list of one number or list per joint"
        );
        assert_eq!(
            error(angles(&YAW, numbers(&[0.1, 0.2]), numbers(&[1.0]))),
            "angleLists and timeLists: HeadYaw has 2 angles but 1 time; expected one time per key frame"
        );
        assert_eq!(
            error(angles(&HEAD, numbers(&[0.2, 0.1]), numbers(&[1.0, 2.0, 3.0]))),
            "angleLists and timeLists: HeadYaw has 1 angle but 3 times; expected one time per key frame"
        );
        assert_eq!(
            error(angles(&YAW, numbers(&[0.1, 0.2]), numbers(&[1.0, 1.0]))),
            "timeLists: HeadYaw: key-frame times must be positive and increasing, got [1, 1]"
        );
        assert_eq!(
            error(angles(&YAW, n(0.1), n(0.0))),
            "timeLists: HeadYaw: key-frame times must be positive and increasing, got [0]"
        );
        assert_eq!(
            error(angles(
                &HEAD,
                list([numbers(&[0.1, f64::NAN]), n(0.0)]),
                list([numbers(&[1.0, 2.0]), n(1.0)])
            )),
            "angleLists: HeadYaw key frame 2: expected a finite number, got NaN"
        );
        assert_eq!(
            error(angles(&YAW, list([]), list([]))),
            "angleLists: HeadYaw: expected at least one key frame, got []"
        );
        assert_eq!(
            error(angles(&YAW, list([numbers(&[0.1]), numbers(&[0.2])]), numbers(&[1.0, 2.0]))),
            "angleLists: HeadYaw key frame 1: expected a finite number, got [0.1]"
        );
        assert_eq!(
            error(angles(&HEAD, n(0.1), "soon".into())),
            "timeLists: expected a number or a list for all joints, or one per joint, got \"soon\""
        );
    }

    #[test]
    fn bezier_keys_one_list_per_joint() {
        let points = list([list([key(0.5, 0.3), key(0.0, 0.3)]), list([key(0.2, 0.4)])]);
        let times = list([numbers(&[1.0, 2.0]), numbers(&[1.2])]);
        let parsed = bezier_frames(&HEAD, &times, &points).unwrap();
        assert_eq!(parsed[0].values, [0.5, 0.0]);
        assert_eq!(parsed[0].times, [1.0, 2.0]);
        assert_eq!(parsed[0].handles, [[(-0.3, 0.0), (0.3, 0.0)]; 2]);
        assert_eq!(parsed[1].handles, [[(-0.4, 0.0), (0.4, 0.0)]]);
    }

    #[test]
    fn bezier_one_joint_keys_flat_or_in_a_list() {
        let keys = [key(0.5, 0.3), key(0.0, 0.3)];
        let flat = bezier_frames(&YAW, &numbers(&[1.0, 2.0]), &list(keys.clone())).unwrap();
        let nested = bezier_frames(&YAW, &list([numbers(&[1.0, 2.0])]), &list([list(keys.clone())])).unwrap();
        assert_eq!(flat, nested);
        assert_eq!(flat[0].values, [0.5, 0.0]);
        let single = bezier_frames(&YAW, &n(1.0), &key(0.5, 0.3)).unwrap();
        assert_eq!(single[0].values, [0.5]);
    }

    #[test]
    fn bezier_bare_angles_get_flat_handles_and_times_may_be_shared() {
        let bare = bezier_frames(&YAW, &list([numbers(&[1.0, 1.5])]), &list([numbers(&[0.5, 0.0])])).unwrap();
        assert_eq!(bare[0].values, [0.5, 0.0]);
        assert_eq!(
            bare[0].handles,
            [[(-1.0 / 3.0, 0.0), (0.5 / 3.0, 0.0)], [(-0.5 / 3.0, 0.0), (0.5 / 3.0, 0.0)]]
        );
        let points = list([list([key(0.3, 0.2), key(0.0, 0.2)]), list([key(0.2, 0.2), key(0.0, 0.2)])]);
        let shared = bezier_frames(&HEAD, &numbers(&[1.0, 2.0]), &points).unwrap();
        assert!(shared.iter().all(|joint| joint.times == [1.0, 2.0]));
    }

    #[test]
    fn bezier_errors_name_the_key() {
        let missing_handle = list([n(0.5), list([3.into(), n(-0.3), n(0.0)])]);
        assert_eq!(
            error(bezier_frames(&YAW, &numbers(&[1.0, 2.0]), &list([key(0.1, 0.3), missing_handle]))),
            "controlPoints: HeadYaw key frame 2: expected an angle or [angle, [type, dTime, dAngle], \
             [type, dTime, dAngle]], got [0.5, [3, -0.3, 0]]"
        );
        let forward_in = list([n(0.5), list([3.into(), n(0.3), n(0.0)]), list([3.into(), n(0.3), n(0.0)])]);
        assert_eq!(
            error(bezier_frames(&YAW, &n(1.0), &forward_in)),
            "controlPoints: HeadYaw: expected an in handle [type, dTime <= 0, dAngle], got [3, 0.3, 0]"
        );
        let short_out = list([n(0.5), list([3.into(), n(-0.3), n(0.0)]), list([n(0.3)])]);
        assert_eq!(
            error(bezier_frames(&YAW, &n(1.0), &short_out)),
            "controlPoints: HeadYaw: expected an out handle [type, dTime >= 0, dAngle], got [0.3]"
        );
        assert_eq!(
            error(bezier_frames(&HEAD, &n(1.0), &list([key(0.1, 0.3)]))),
            "controlPoints: 1 key for 2 joints (HeadYaw, HeadPitch); expected a key or a list of keys \
             for all joints, or a list of one key or list per joint"
        );
    }

    #[test]
    fn long_inputs_are_quoted_short() {
        let long = numbers(&vec![0.5; 10_000]);
        let message = error(targets("angles", &YAW, &long));
        assert!(message.len() < 200, "{message}");
        let names: Vec<String> = (0..100).map(|i| format!("Joint{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let message = error(targets("angles", &names, &numbers(&[0.1])));
        assert!(message.len() < 250, "{message}");
    }
}
