//! NAOqi's whole-body API (docs/whole-body.md): `wbEnable`, `wbFootState`,
//! `wbEnableBalanceConstraint`, `wbGoToBalance`, `wbEnableEffectorControl`,
//! `wbSetEffectorControl`, and the Cartesian control of `Torso`, `LLeg` and `RLeg` through
//! `setPositions`, `setTransforms`, `positionInterpolations`, `transformInterpolations` and
//! `positionInterpolation`, which the whole body moves in the motion cycle
//! (`engine/whole_body.rs`). The other effectors go on to `cartesian_control.rs`.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use naobroker_balance::{FootState, Side};
use naobroker_framework::{excerpt, CallError, Methods, ModuleContext, Value};
use naobroker_kinematics::transform::{norm, rotation_vector};
use naobroker_kinematics::{Chain, Transform};
use naobroker_protocol::value_excerpt;

use super::cartesian_args::{self, Form};
use super::cartesian_control;
use super::cartesian_queries::{cartesian, torso_in_space};
use super::client::Client;
use super::ALMotion;
use crate::cartesian::{Source, Space};
use crate::engine::whole_body::{Effector, Order};
use crate::engine::ToEngine;
use crate::shapes;

/// A Cartesian call's answer.
type Answer = Pin<Box<dyn Future<Output = Result<(), CallError>>>>;

/// What the calls set, as the API answers for it: the motion thread follows in order.
#[derive(Debug, Default)]
pub(super) struct Settings {
    enabled: Cell<bool>,
    feet: Cell<[Option<FootState>; 2]>,
    /// `wbEnableEffectorControl` of Head, LArm, RArm.
    effectors: Cell<[bool; 3]>,
}

/// The fastest a reactive whole-body target moves the torso or a foot (m/s, rad/s), at
/// `fractionMaxSpeed` 1.
const MAX_SPEED_M_S: f64 = 0.1;
const MAX_TURN_RAD_S: f64 = 1.0;
/// `wbGoToBalance`'s longest duration (s), as for key-frame times.
const MAX_DURATION_S: f64 = 3600.0;

/// A call the whole body's state forbids now (not enabled, an effector not controlled).
fn refuse(method: &str, why: impl std::fmt::Display) -> CallError {
    CallError::refused(format!("ALMotion.{method}: {why}"))
}

fn bad_argument(method: &str, why: impl std::fmt::Display) -> CallError {
    CallError::bad_argument(format!("ALMotion.{method}: {why}"))
}

/// The robot has what the whole body needs: NAO's legs and a kinematic model.
fn available(this: &ALMotion, method: &str) -> Result<(), CallError> {
    let (kinematics, _) = cartesian(this)?;
    naobroker_walk::LegGeometry::from_model(&kinematics.model)
        .map(|_| ())
        .map_err(|missing| refuse(method, format!("no whole body: {missing}")))
}

fn enabled(this: &ALMotion, method: &str) -> Result<(), CallError> {
    available(this, method)?;
    if this.whole_body.enabled.get() {
        Ok(())
    } else {
        Err(refuse(method, "the whole body is not enabled: call wbEnable(True) first"))
    }
}

/// NAOqi's leg names: "LLeg", "RLeg" or "Legs" → the feet they name (left, right).
fn legs(method: &str, argument: &str, name: &str) -> Result<[bool; 2], CallError> {
    match name {
        "LLeg" => Ok([true, false]),
        "RLeg" => Ok([false, true]),
        "Legs" => Ok([true, true]),
        other => Err(bad_argument(
            method,
            format!("{argument}: expected \"LLeg\", \"RLeg\" or \"Legs\", got {:?}", excerpt(other)),
        )),
    }
}

fn send(this: &ALMotion, order: Order) -> Result<(), CallError> {
    this.client.send(ToEngine::WholeBody(order))
}

/// `wbEnable(isEnabled)`.
pub(super) fn wb_enable(this: &mut ALMotion, _: &ModuleContext, (enable,): (bool,)) -> Result<(), CallError> {
    available(this, "wbEnable")?;
    send(this, Order::Enable(enable))?;
    this.whole_body.enabled.set(enable);
    Ok(())
}

/// `wbFootState(stateName, supportLeg)`: "Fixed", "Plane" or "Free".
pub(super) fn wb_foot_state(
    this: &mut ALMotion,
    _: &ModuleContext,
    (state, leg): (String, String),
) -> Result<(), CallError> {
    available(this, "wbFootState")?;
    let state = match state.as_str() {
        "Fixed" => FootState::Fixed,
        "Plane" => FootState::Plane,
        "Free" => FootState::Free,
        other => {
            return Err(bad_argument(
                "wbFootState",
                format!("stateName: expected \"Fixed\", \"Plane\" or \"Free\", got {:?}", excerpt(other)),
            ))
        }
    };
    let feet = legs("wbFootState", "supportLeg", &leg)?;
    send(this, Order::FootState { state, feet })?;
    let mut states = this.whole_body.feet.get();
    for (foot, named) in states.iter_mut().zip(feet) {
        if named {
            *foot = Some(state);
        }
    }
    this.whole_body.feet.set(states);
    Ok(())
}

/// `wbEnableBalanceConstraint(isEnable, supportLeg)`.
pub(super) fn wb_enable_balance_constraint(
    this: &mut ALMotion,
    _: &ModuleContext,
    (enable, leg): (bool, String),
) -> Result<(), CallError> {
    available(this, "wbEnableBalanceConstraint")?;
    let feet = legs("wbEnableBalanceConstraint", "supportLeg", &leg)?;
    send(this, Order::Balance { enable, feet })
}

/// `wbGoToBalance(supportLeg, duration)`: blocks until the centre of mass is there.
pub(super) fn wb_go_to_balance(
    this: &mut ALMotion,
    _: &ModuleContext,
    (leg, duration): (String, f64),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    enabled(this, "wbGoToBalance")?;
    let foot = match legs("wbGoToBalance", "supportLeg", &leg)? {
        [true, false] => Some(Side::Left),
        [false, true] => Some(Side::Right),
        _ => None,
    };
    if !(duration.is_finite() && duration > 0.0 && duration <= MAX_DURATION_S) {
        return Err(bad_argument(
            "wbGoToBalance",
            format!("duration: expected seconds, more than 0 and at most {MAX_DURATION_S}, got {duration}"),
        ));
    }
    let client = &this.client;
    let legs_motors = leg_motors(this);
    let (id, finished) = client.register("wbGoToBalance", legs_motors);
    if let Err(error) = send(this, Order::GoToBalance { id, foot, duration }) {
        this.client.forget(id);
        return Err(error);
    }
    let end = this.client.wait_for_end(id, finished);
    Ok(async move { end.await.map(|_| ()) })
}

/// `rest` with the whole body enabled (NAOqi's `almotion_wbKick.py` ends that way): the
/// centre of mass back over both feet in [`LEAVE_S`], then the whole body off, before the
/// crouch: a crouch interpolated from a body balanced over one foot twists the feet on the
/// ground. `None` when it is not enabled.
pub(super) fn leave(
    this: &mut ALMotion,
) -> Result<Option<impl Future<Output = Result<(), CallError>>>, CallError> {
    if !this.whole_body.enabled.get() {
        return Ok(None);
    }
    let (id, finished) = this.client.register("rest", leg_motors(this));
    if let Err(error) = send(this, Order::GoToBalance { id, foot: None, duration: LEAVE_S }) {
        this.client.forget(id);
        return Err(error);
    }
    this.whole_body.enabled.set(false);
    let end = this.client.wait_for_end(id, finished);
    let off = WholeBodyOff(Rc::clone(&this.client));
    Ok(Some(async move {
        let _off = off;
        end.await.map(|_| ())
    }))
}

/// Turns the engine's whole body off when dropped: when `rest`'s return to both feet ends,
/// and also when `rest` is stopped or its caller leaves first, since the API already says
/// the whole body is off.
struct WholeBodyOff(Rc<Client>);

impl Drop for WholeBodyOff {
    fn drop(&mut self) {
        // Only a stopped motion thread refuses it, and then nothing moves anyway.
        let _ = self.0.send(ToEngine::WholeBody(Order::Enable(false)));
    }
}

/// How long `rest` takes to bring the centre of mass back over both feet (s).
const LEAVE_S: f64 = 1.0;

/// The motors of the legs, which whole-body tasks are listed with.
fn leg_motors(this: &ALMotion) -> u64 {
    let body = &this.client.body;
    ["LLeg", "RLeg"]
        .into_iter()
        .filter_map(|chain| body.expand(chain).ok())
        .flatten()
        .fold(0u64, |mask, joint| mask | 1 << body.joints[joint].motor)
}

/// The effectors `wbEnableEffectorControl` takes.
fn controlled_effector(method: &str, name: &str) -> Result<usize, CallError> {
    match name {
        "Head" => Ok(0),
        "LArm" => Ok(1),
        "RArm" => Ok(2),
        other => Err(bad_argument(
            method,
            format!("effectorName: expected \"Head\", \"LArm\" or \"RArm\", got {:?}", excerpt(other)),
        )),
    }
}

/// `wbEnableEffectorControl(effectorName, isEnabled)`.
pub(super) fn wb_enable_effector_control(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, enable): (String, bool),
) -> Result<(), CallError> {
    enabled(this, "wbEnableEffectorControl")?;
    let index = controlled_effector("wbEnableEffectorControl", &name)?;
    let mut effectors = this.whole_body.effectors.get();
    effectors[index] = enable;
    this.whole_body.effectors.set(effectors);
    Ok(())
}

/// `wbSetEffectorControl(effectorName, targetCoordinate)`: the head's orientation
/// `[wx, wy, wz]` (rad), or an arm's hand position `[x, y, z]` (m), in FRAME_ROBOT; the
/// effector goes there at half its joints' speed, the whole body balancing under it.
pub(super) fn wb_set_effector_control(
    this: &mut ALMotion,
    context: &ModuleContext,
    (name, target): (String, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    const METHOD: &str = "wbSetEffectorControl";
    enabled(this, METHOD)?;
    let index = controlled_effector(METHOD, &name)?;
    if !this.whole_body.effectors.get()[index] {
        return Err(refuse(
            METHOD,
            format!("{name} is not controlled: call wbEnableEffectorControl({name:?}, True) first"),
        ));
    }
    let numbers: Option<Vec<f64>> = match &target {
        Value::Array(items) if items.len() == 3 => {
            items.iter().map(|item| item.as_f64().or_else(|| item.as_i64().map(|n| n as f64))).collect()
        }
        _ => None,
    };
    let Some(numbers) = numbers.filter(|numbers| numbers.iter().all(|n| n.is_finite() && n.abs() <= 100.0))
    else {
        return Err(bad_argument(
            METHOD,
            format!("targetCoordinate: expected 3 finite numbers, got {}", value_excerpt(&target)),
        ));
    };
    let (position, mask) = if index == 0 {
        ([0.0, 0.0, 0.0, numbers[0], numbers[1], numbers[2]], 56)
    } else {
        ([numbers[0], numbers[1], numbers[2], 0.0, 0.0, 0.0], 7)
    };
    let position = Value::Array(position.into_iter().map(Value::from).collect());
    let arguments = (Value::from(name), Value::from(2), position, 0.5, Value::from(mask));
    cartesian_control::set_positions(this, context, arguments)
}

/// The whole-body effector a Cartesian call names, if it names one: alone, or refused.
fn whole_body_effector(names: &Value) -> Result<Option<Effector>, CallError> {
    let listed: Vec<&Value> = match names {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let found: Vec<Effector> =
        listed.iter().filter_map(|name| name.as_str().and_then(Effector::from_name)).collect();
    match (found.as_slice(), listed.len()) {
        ([], _) => Ok(None),
        ([effector], 1) => Ok(Some(*effector)),
        _ => Err(CallError::bad_argument(format!(
            "effectorNames: {}: the whole body moves Torso, LLeg and RLeg, one per call and alone",
            value_excerpt(names)
        ))),
    }
}

/// A call's Cartesian arguments: effector names, frames, paths, axis masks.
type Arguments = (Value, Value, Value, Value);

pub(super) fn set_positions(
    this: &mut ALMotion,
    context: &ModuleContext,
    (names, frames, positions, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<Answer, CallError> {
    match whole_body_effector(&names)? {
        Some(effector) => {
            let fraction = shapes::fraction(fraction)?;
            path(
                this,
                "setPositions",
                effector,
                Form::Position6D,
                (names, frames, positions, masks),
                Timing::Speed(fraction),
            )
        }
        None => Ok(Box::pin(cartesian_control::set_positions(
            this,
            context,
            (names, frames, positions, fraction, masks),
        )?)),
    }
}

pub(super) fn set_transforms(
    this: &mut ALMotion,
    context: &ModuleContext,
    (names, frames, transforms, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<Answer, CallError> {
    match whole_body_effector(&names)? {
        Some(effector) => {
            let fraction = shapes::fraction(fraction)?;
            path(
                this,
                "setTransforms",
                effector,
                Form::Matrix,
                (names, frames, transforms, masks),
                Timing::Speed(fraction),
            )
        }
        None => Ok(Box::pin(cartesian_control::set_transforms(
            this,
            context,
            (names, frames, transforms, fraction, masks),
        )?)),
    }
}

pub(super) fn position_interpolations(
    this: &mut ALMotion,
    context: &ModuleContext,
    (names, frames, paths, masks, times): (Value, Value, Value, Value, Value),
) -> Result<Answer, CallError> {
    match whole_body_effector(&names)? {
        Some(effector) => path(
            this,
            "positionInterpolations",
            effector,
            Form::Position6D,
            (names, frames, paths, masks),
            Timing::Times(&times),
        ),
        None => Ok(Box::pin(cartesian_control::position_interpolations(
            this,
            context,
            (names, frames, paths, masks, times),
        )?)),
    }
}

pub(super) fn transform_interpolations(
    this: &mut ALMotion,
    context: &ModuleContext,
    (names, frames, paths, masks, times): (Value, Value, Value, Value, Value),
) -> Result<Answer, CallError> {
    match whole_body_effector(&names)? {
        Some(effector) => path(
            this,
            "transformInterpolations",
            effector,
            Form::Matrix,
            (names, frames, paths, masks),
            Timing::Times(&times),
        ),
        None => Ok(Box::pin(cartesian_control::transform_interpolations(
            this,
            context,
            (names, frames, paths, masks, times),
        )?)),
    }
}

/// NAOqi 1.x's `positionInterpolation(chainName, space, path, axisMask, durations,
/// isAbsolute)`: a relative path adds to the effector's commanded Position6D.
pub(super) fn position_interpolation(
    this: &mut ALMotion,
    context: &ModuleContext,
    (name, frame, path_value, mask, durations, absolute): (Value, Value, Value, Value, Value, bool),
) -> Result<Answer, CallError> {
    let Some(effector) = whole_body_effector(&name)? else {
        return Ok(Box::pin(cartesian_control::position_interpolation(
            this,
            context,
            (name, frame, path_value, mask, durations, absolute),
        )?));
    };
    let path_value = if absolute {
        path_value
    } else {
        let space = cartesian_args::spaces(&frame, 1)?[0];
        let current = current_in(this, effector, space)?.to_position6d();
        let names = [effector.name()];
        let deltas = cartesian_args::paths("path", &path_value, &names, Form::Position6D)?;
        let points = deltas[0]
            .iter()
            .map(|delta| {
                let delta = delta.to_position6d();
                Value::Array((0..6).map(|axis| Value::from(current[axis] + delta[axis])).collect())
            })
            .collect();
        Value::Array(points)
    };
    path(
        this,
        "positionInterpolation",
        effector,
        Form::Position6D,
        (name, frame, path_value, mask),
        Timing::Times(&durations),
    )
}

/// How a path is timed: its key times, or as fast as a fraction of the top speed allows.
enum Timing<'a> {
    Times(&'a Value),
    Speed(f64),
}

/// FRAME_TORSO in `space`, of the command model.
fn torso_in(this: &ALMotion, space: Space) -> Result<Transform, CallError> {
    let (_, published) = cartesian(this)?;
    let torso_in_robot = published.read(|snapshot| snapshot.torso_in_robot(Source::Commanded));
    Ok(torso_in_space(this, space, torso_in_robot, Source::Commanded))
}

/// The effector's commanded transform in `space`.
fn current_in(this: &ALMotion, effector: Effector, space: Space) -> Result<Transform, CallError> {
    Ok(torso_in(this, space)?.then(&current_in_torso(this, effector)?))
}

fn current_in_torso(this: &ALMotion, effector: Effector) -> Result<Transform, CallError> {
    let (kinematics, published) = cartesian(this)?;
    let name = match effector {
        Effector::Torso => return Ok(Transform::IDENTITY),
        Effector::LLeg => Chain::LLeg.name(),
        Effector::RLeg => Chain::RLeg.name(),
    };
    let slot =
        kinematics.frame_slot(name).ok_or_else(|| CallError::new(format!("the model has no {name}")))?;
    Ok(published.read(|snapshot| snapshot.transform(Source::Commanded, slot)))
}

/// Check a whole-body Cartesian call whole, then send its path: its keys in FRAME_TORSO as
/// the command model has it now. Timed calls answer at the path's end, reactive ones at once.
fn path(
    this: &mut ALMotion,
    method: &'static str,
    effector: Effector,
    form: Form,
    (_, frames, paths, masks): Arguments,
    timing: Timing,
) -> Result<Answer, CallError> {
    available(this, method)?;
    let borrowed = !this.whole_body.enabled.get();
    if let Some(foot) = effector.foot_index().filter(|_| !borrowed) {
        // Under the whole body a foot moves only as its state allows.
        if this.whole_body.feet.get()[foot].is_none_or(|state| state == FootState::Fixed) {
            return Err(refuse(
                method,
                format!(
                    "{0} is Fixed: call wbFootState(\"Free\", \"{0}\") (or \"Plane\") first",
                    effector.name()
                ),
            ));
        }
    }
    let names = [effector.name()];
    let space = cartesian_args::spaces(&frames, 1)?[0];
    let axis_mask = cartesian_args::axis_masks(&masks, 1)?[0];
    let targets = cartesian_args::paths("paths", &paths, &names, form)?.remove(0);
    let to_torso = torso_in(this, space)?.inverse();
    let targets: Vec<Transform> = targets.iter().map(|target| to_torso.then(target)).collect();
    if let Some(index) = targets.iter().position(|target| !target.to_matrix16().iter().all(|v| v.is_finite()))
    {
        return Err(bad_argument(
            method,
            format!("paths: {} point {}: too far to be expressed in FRAME_TORSO", effector.name(), index + 1),
        ));
    }
    let times = match timing {
        Timing::Times(times) => cartesian_args::times("times", times, &names, &[targets.len()])?.remove(0),
        Timing::Speed(fraction) => {
            if targets.len() != 1 {
                return Err(bad_argument(
                    method,
                    format!("paths: {}: one target, not a path", effector.name()),
                ));
            }
            let from = current_in_torso(this, effector)?;
            let distance = norm([0, 1, 2].map(|axis| targets[0].translation[axis] - from.translation[axis]));
            let turn = norm(rotation_vector(&from.inverse().then(&targets[0]).rotation));
            // The smooth profile peaks at 1.5 × the mean speed.
            let seconds = 1.5 * (distance / MAX_SPEED_M_S).max(turn / MAX_TURN_RAD_S) / fraction;
            vec![seconds.max(0.02)]
        }
    };
    let blocking = matches!(timing, Timing::Times(_));
    let (id, finished) = this.client.register(method, leg_motors(this));
    let sent = targets.iter().zip(&times).enumerate().try_for_each(|(index, (&target, &time))| {
        send(this, Order::Key { effector, first: index == 0, time, target })
    });
    if let Err(error) = sent.and_then(|()| send(this, Order::Path { id, effector, axis_mask, borrowed })) {
        this.client.forget(id);
        return Err(error);
    }
    if blocking {
        let end = this.client.wait_for_end(id, finished);
        Ok(Box::pin(async move { end.await.map(|_| ()) }))
    } else {
        // A reactive call answers once its path is sent; it runs on without a waiter.
        drop(finished);
        Ok(Box::pin(std::future::ready(Ok(()))))
    }
}

pub(super) fn add_to(m: &mut Methods<ALMotion>) {
    m.add("wbEnable", "wbEnable(isEnabled): the whole-body balancer drives the legs, or stops.", wb_enable)
        .add(
            "wbFootState",
            "wbFootState(stateName, supportLeg): \"Fixed\", \"Plane\" or \"Free\" for \"LLeg\", \"RLeg\" or \
             \"Legs\".",
            wb_foot_state,
        )
        .add(
            "wbEnableBalanceConstraint",
            "wbEnableBalanceConstraint(isEnable, supportLeg): keep the centre of mass over the support \
             polygon of \"Legs\", \"LLeg\" or \"RLeg\".",
            wb_enable_balance_constraint,
        )
        .add_async_checked(
            "wbGoToBalance",
            "wbGoToBalance(supportLeg, duration): the centre of mass over \"LLeg\", \"RLeg\" or \"Legs\" in \
             duration s; blocks until there.",
            wb_go_to_balance,
        )
        .add(
            "wbEnableEffectorControl",
            "wbEnableEffectorControl(effectorName, isEnabled): \"Head\", \"LArm\" or \"RArm\" follows \
             wbSetEffectorControl.",
            wb_enable_effector_control,
        )
        .add_async_checked(
            "wbSetEffectorControl",
            "wbSetEffectorControl(effectorName, targetCoordinate): the head's [wx, wy, wz] or a hand's \
             [x, y, z] in FRAME_ROBOT, the whole body balancing.",
            wb_set_effector_control,
        );
}
