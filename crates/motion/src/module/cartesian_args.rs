//! The arguments of ALMotion's Cartesian control methods in every shape NAOqi accepts:
//! one effector or a list; one frame, axis mask or path for all or one per effector; a path
//! of one point or a list of points; one time or a list per effector. Errors name the
//! argument and what was wrong.

use naobroker_framework::{excerpt, CallError, Value};
use naobroker_kinematics::{Chain, Transform};
use naobroker_protocol::value_excerpt;

use super::cartesian_queries::space;
use crate::cartesian::Space;

/// How a call gives a target: NAOqi's Position6D, or a 4x4 matrix row-major.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Position6D,
    Matrix,
}

impl Form {
    fn width(self) -> usize {
        match self {
            Form::Position6D => 6,
            Form::Matrix => 16,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Form::Position6D => "a Position6D (6 floats)",
            Form::Matrix => "a transform (16 floats, a 4x4 matrix row-major)",
        }
    }

    /// The target `numbers` stand for, or what is wrong with them.
    fn transform(self, numbers: &[f64]) -> Result<Transform, &'static str> {
        if numbers.iter().any(|number| !number.is_finite()) {
            return Err("not finite");
        }
        let transform = match self {
            Form::Position6D => numbers.try_into().ok().map(Transform::from_position6d),
            Form::Matrix => numbers.try_into().ok().and_then(Transform::from_matrix16),
        };
        transform.ok_or("not a rigid transform")
    }
}

/// The chains naobroker moves through inverse kinematics.
const CONTROLLED: [Chain; 3] = [Chain::Head, Chain::LArm, Chain::RArm];

/// The most points a path may have: each costs the planning thread an inverse kinematics
/// solve of its own and up to a few hundred short steps, so a huge path would hold every
/// Cartesian call behind it for minutes.
pub(super) const MAX_PATH_POINTS: usize = 200;

/// The effectors a call names: one name or a list.
pub(super) fn effectors(argument: &str, value: &Value) -> Result<Vec<Chain>, CallError> {
    let names: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    if names.is_empty() {
        return Err(CallError::bad_argument(format!("{argument}: no effector named")));
    }
    let chains = names
        .into_iter()
        .map(|name| {
            let text = name.as_str().ok_or_else(|| {
                CallError::bad_argument(format!(
                    "{argument}: expected effector names, got {}",
                    value_excerpt(name)
                ))
            })?;
            let unsupported = || {
                CallError::bad_argument(format!(
                    "{argument}: Cartesian control of {text:?} is not supported beside Head, LArm or \
                     RArm: the whole body moves Torso, LLeg and RLeg, one per call"
                ))
            };
            match Chain::from_name(text) {
                Some(chain) if CONTROLLED.contains(&chain) => Ok(chain),
                Some(_) => Err(unsupported()),
                None if text == "Torso" => Err(unsupported()),
                None => Err(CallError::bad_argument(format!(
                    "{argument}: unknown effector {:?}: expected Head, LArm or RArm",
                    excerpt(text)
                ))),
            }
        })
        .collect::<Result<Vec<Chain>, CallError>>()?;
    if let Some((index, chain)) =
        chains.iter().enumerate().find(|(index, chain)| chains[..*index].contains(chain))
    {
        return Err(CallError::bad_argument(format!(
            "{argument}: {} named twice (entries {} and {})",
            chain.name(),
            chains.iter().position(|c| c == chain).unwrap_or_default() + 1,
            index + 1
        )));
    }
    Ok(chains)
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| value.as_i64().map(|n| n as f64))
}

/// `value`'s entries for `count` effectors: `value` itself when `is_one` says it is one
/// effector's (for all of them, or for the only one), else a list of one per effector.
fn per_effector(
    value: &Value,
    count: usize,
    all_share: bool,
    is_one: impl Fn(&Value) -> bool,
) -> Option<Vec<&Value>> {
    if is_one(value) && (all_share || count == 1) {
        return Some(vec![value; count]);
    }
    match value {
        Value::Array(items) if items.len() == count && items.iter().all(&is_one) => {
            Some(items.iter().collect())
        }
        _ => None,
    }
}

/// The frames: one for all effectors, or one each.
pub(super) fn spaces(value: &Value, count: usize) -> Result<Vec<Space>, CallError> {
    let is_frame = |v: &Value| number(v).is_some();
    let entries = per_effector(value, count, true, is_frame).ok_or_else(|| {
        CallError::bad_argument(format!(
            "frames: expected a frame, or one per effector ({count}), got {}",
            value_excerpt(value)
        ))
    })?;
    entries.into_iter().map(|entry| space("frames", entry)).collect()
}

/// The axis masks: one for all effectors, or one each; 1 x, 2 y, 4 z, 8 wx, 16 wy, 32 wz.
pub(super) fn axis_masks(value: &Value, count: usize) -> Result<Vec<u8>, CallError> {
    let refused = || {
        CallError::bad_argument(format!(
            "axisMasks: expected an axis mask from 1 to 63 (7 position, 56 rotation, 63 both), or one per \
             effector ({count}), got {}",
            value_excerpt(value)
        ))
    };
    let is_mask = |v: &Value| v.as_i64().is_some_and(|mask| (1..=63).contains(&mask));
    let entries = per_effector(value, count, true, is_mask).ok_or_else(refused)?;
    Ok(entries.into_iter().map(|entry| entry.as_i64().unwrap_or_default() as u8).collect())
}

/// One point's numbers, if `value` is a list of `width` numbers.
fn point(value: &Value, width: usize) -> Option<Vec<f64>> {
    match value {
        Value::Array(items) if items.len() == width => items.iter().map(number).collect(),
        _ => None,
    }
}

/// One effector's path: one point, or a list of points.
fn path_points(value: &Value, width: usize) -> Option<Vec<Vec<f64>>> {
    if let Some(one) = point(value, width) {
        return Some(vec![one]);
    }
    match value {
        Value::Array(items) if !items.is_empty() => items.iter().map(|item| point(item, width)).collect(),
        _ => None,
    }
}

/// The targets per effector, in their frames: for one effector a point or a list of points,
/// for several one such entry each.
pub(super) fn paths(
    argument: &str,
    value: &Value,
    chains: &[&str],
    form: Form,
) -> Result<Vec<Vec<Transform>>, CallError> {
    let width = form.width();
    let entries =
        per_effector(value, chains.len(), false, |v| path_points(v, width).is_some()).ok_or_else(|| {
            CallError::bad_argument(format!(
                "{argument}: expected for each of the {} effector(s) {} or a list of them, got {}",
                chains.len(),
                form.noun(),
                value_excerpt(value)
            ))
        })?;
    entries
        .into_iter()
        .zip(chains)
        .map(|(entry, chain)| {
            let points = path_points(entry, width).unwrap_or_default();
            if points.len() > MAX_PATH_POINTS {
                return Err(CallError::bad_argument(format!(
                    "{argument}: {chain}: a path of {} points; at most {MAX_PATH_POINTS}",
                    points.len()
                )));
            }
            points
                .iter()
                .enumerate()
                .map(|(index, numbers)| {
                    form.transform(numbers).map_err(|wrong| {
                        CallError::bad_argument(format!("{argument}: {chain} point {}: {wrong}", index + 1))
                    })
                })
                .collect()
        })
        .collect()
}

/// Times per effector, one per path point, in seconds, positive and increasing.
pub(super) fn times(
    argument: &str,
    value: &Value,
    chains: &[&str],
    points: &[usize],
) -> Result<Vec<Vec<f64>>, CallError> {
    let is_times = |v: &Value| match v {
        Value::Array(items) => !items.is_empty() && items.iter().all(|item| number(item).is_some()),
        other => number(other).is_some(),
    };
    let entries = per_effector(value, chains.len(), false, is_times).ok_or_else(|| {
        CallError::bad_argument(format!(
            "{argument}: expected for each of the {} effector(s) a time or a list of times (s), got {}",
            chains.len(),
            value_excerpt(value)
        ))
    })?;
    entries
        .into_iter()
        .zip(chains)
        .zip(points)
        .map(|((entry, chain), &expected)| {
            let times: Vec<f64> = match entry {
                Value::Array(items) => items.iter().filter_map(number).collect(),
                one => number(one).into_iter().collect(),
            };
            if times.len() != expected {
                return Err(CallError::bad_argument(format!(
                    "{argument}: {chain}: {} time(s) for {expected} path point(s)",
                    times.len()
                )));
            }
            let increasing = times.iter().try_fold(0.0, |last, &t| (t.is_finite() && t > last).then_some(t));
            if increasing.is_none() {
                return Err(CallError::bad_argument(format!(
                    "{argument}: {chain}: times must be positive and increasing, got {times:?}"
                )));
            }
            Ok(times)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn position(x: f64) -> Value {
        array([x, 0.1, 0.2, 0.0, 0.0, 0.0].map(Value::from).to_vec())
    }

    #[test]
    fn one_effector_takes_a_point_a_list_or_a_list_holding_its_list() {
        let one = ["LArm"];
        let form = Form::Position6D;
        assert_eq!(paths("paths", &position(0.1), &one, form).unwrap()[0].len(), 1);
        let two_points = array(vec![position(0.1), position(0.2)]);
        assert_eq!(paths("paths", &two_points, &one, form).unwrap()[0].len(), 2);
        let wrapped = array(vec![two_points.clone()]);
        assert_eq!(paths("paths", &wrapped, &one, form).unwrap()[0].len(), 2);
        let both = paths("paths", &array(vec![two_points, position(0.3)]), &["LArm", "RArm"], form);
        assert_eq!(both.unwrap().iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(times("times", &Value::from(2.0), &one, &[1]).unwrap(), [vec![2.0]]);
        let lists = array(vec![array(vec![1.0.into(), 2.0.into()]), Value::from(1)]);
        assert_eq!(times("times", &lists, &["LArm", "RArm"], &[2, 1]).unwrap()[1], [1.0]);
        assert_eq!(spaces(&Value::from(2), 2).unwrap(), [Space::Robot, Space::Robot]);
        assert_eq!(axis_masks(&array(vec![7.into(), 63.into()]), 2).unwrap(), [7, 63]);
    }

    #[test]
    fn errors_name_the_argument_and_what_is_wrong() {
        let one = ["LArm"];
        let error = |result: Result<Vec<Vec<Transform>>, CallError>| result.unwrap_err().message;
        let short = array(vec![0.1.into(), 0.2.into()]);
        assert!(error(paths("paths", &short, &one, Form::Position6D)).contains("a Position6D (6 floats)"));
        let skewed: Vec<Value> = (0..16).map(|i| Value::from(f64::from(i))).collect();
        let message = error(paths("paths", &array(skewed), &one, Form::Matrix));
        assert!(message.contains("LArm point 1: not a rigid transform"), "{message}");
        let nan = array([0.1, f64::NAN, 0.2, 0.0, 0.0, 0.0].map(Value::from).to_vec());
        let message = error(paths("paths", &array(vec![position(0.1), nan]), &one, Form::Position6D));
        assert!(message.contains("LArm point 2: not finite"), "{message}");
        let huge = array(vec![position(0.1); MAX_PATH_POINTS + 1]);
        let message = error(paths("paths", &huge, &one, Form::Position6D));
        assert!(message.contains("LArm: a path of 201 points; at most 200"), "{message}");
        let many = array(vec!["LArm".into(), "RArm".into(), "LArm".into()]);
        let message = effectors("effectorNames", &many).unwrap_err().message;
        assert!(message.contains("LArm named twice (entries 1 and 3)"), "{message}");
        let message = times("times", &array(vec![2.0.into(), 1.0.into()]), &one, &[2]).unwrap_err().message;
        assert!(message.contains("positive and increasing"), "{message}");
        let message = times("times", &Value::from(1.0), &one, &[2]).unwrap_err().message;
        assert!(message.contains("1 time(s) for 2 path point(s)"), "{message}");
        assert!(spaces(&Value::from(4), 1).unwrap_err().message.contains("got 4"));
        assert!(axis_masks(&Value::from(0), 1).unwrap_err().message.contains("from 1 to 63"));
        let message = effectors("effectorNames", &Value::from("LLeg")).unwrap_err().message;
        assert!(message.contains("Cartesian control of \"LLeg\" is not supported"), "{message}");
        let message = effectors("effectorNames", &Value::from("Tail")).unwrap_err().message;
        assert!(message.contains("unknown effector \"Tail\""), "{message}");
    }
}
