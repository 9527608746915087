//! ALMotion's locomotion API, NAOqi's names and semantics over the walk of the motion cycle:
//! `moveInit`, `move`, `moveToward`, `moveTo` (all its overloads), `stopMove`, `killMove`,
//! `moveIsActive`, `waitUntilMoveIsFinished`, `getMoveConfig`, the robot's position and
//! velocity, the arms' swing, and the deprecated `walk…` twins NAOqi 2.x still serves.
//! A walk needs stiff legs and a standing robot: otherwise `ALMotion/MoveFailed` is raised
//! with the reason, and the move does not start.

use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{CallError, Methods, ModuleContext, Value};
use naobroker_protocol::value_excerpt;
use naobroker_walk::Step;

use super::client::Client;
use super::move_config::{self, MoveConfig};
use super::ALMotion;
use crate::engine::walking::{displaced, Goal, MoveLimits, MoveOutcome, WALKING_STIFFNESS};
use crate::engine::ToEngine;

/// A robot leaning more than this (rad, the inertial unit's AngleX or AngleY) is not
/// standing for a walk.
const UPRIGHT_RAD: f64 = 0.5;
/// Knees bent more than this (rad) are crouching or sitting, not standing.
const STANDING_KNEE_RAD: f64 = 1.5;

/// Kills its move if the waiting call goes away first (`stop` on a posted `moveTo`).
struct KillMoveOnDrop {
    client: Rc<Client>,
    armed: bool,
}

impl Drop for KillMoveOnDrop {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.client.send(ToEngine::KillMove);
        }
    }
}

/// Why this robot cannot walk now, if it cannot.
fn refusal(this: &ALMotion) -> Result<Option<&'static str>, CallError> {
    let client = &this.client;
    if !client.shared.walk.available() {
        return Err(CallError::refused(
            "this robot has no legs to walk with (its description's [kinematics])",
        ));
    }
    client.catch_up();
    let legs = client.body.joints.iter().filter(|joint| joint.chain == "LLeg" || joint.chain == "RLeg");
    if legs.clone().any(|joint| client.shared.stiffness(joint.motor) < WALKING_STIFFNESS) {
        return Ok(Some("the legs are not stiff (wakeUp first)"));
    }
    let sensed = |key: &str| this.slots.layout().index_of(key).map(|index| this.slots.get(index));
    let leaning =
        crate::fall::ANGLE_KEYS.iter().filter_map(|key| sensed(key)).any(|angle| angle.abs() > UPRIGHT_RAD);
    if leaning {
        return Ok(Some("the robot is not upright"));
    }
    let crouching = legs
        .filter(|joint| joint.name.ends_with("KneePitch"))
        .filter_map(|joint| sensed(&client.body.motors[joint.motor].sensor_key))
        .any(|knee| knee > STANDING_KNEE_RAD);
    Ok(crouching.then_some("the robot is not standing (goToPosture StandInit first)"))
}

/// The walk may start: otherwise MoveFailed, and false.
pub(super) fn may_walk(this: &ALMotion) -> Result<bool, CallError> {
    match refusal(this)? {
        Some(reason) => {
            this.client.move_failed(reason, 0);
            Ok(false)
        }
        None => Ok(true),
    }
}

fn number(name: &str, value: f64) -> Result<f64, CallError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CallError::bad_argument(format!("{name} = {value}: expected a finite number")))
    }
}

/// `move(x, y, theta[, config])`: walk at this velocity (m/s, m/s, rad/s, FRAME_ROBOT) until
/// told otherwise; all zero stops. Non-blocking.
fn move_velocity(
    this: &mut ALMotion,
    _: &ModuleContext,
    (x, y, theta, config): (f64, f64, f64, Option<Value>),
) -> Result<(), CallError> {
    let (x, y, theta) = (number("x", x)?, number("y", y)?, number("theta", theta)?);
    let limits = MoveConfig::parse(config.as_ref())?.limits();
    if x == 0.0 && y == 0.0 && theta == 0.0 {
        return this.client.send(ToEngine::StopMove);
    }
    if may_walk(this)? {
        let period = limits.step_period_s;
        let step = Step { forward: x * period, left: y * period, turn: theta * period };
        drop(this.client.send_move(Goal::Steps(step), limits)?);
    }
    Ok(())
}

/// `moveToward(x, y, theta[, config])`: fractions (-1 to 1) of the largest step.
fn move_toward(
    this: &mut ALMotion,
    _: &ModuleContext,
    (x, y, theta, config): (f64, f64, f64, Option<Value>),
) -> Result<(), CallError> {
    toward(this, [x, y, theta], MoveConfig::parse(config.as_ref())?)
}

fn toward(this: &ALMotion, fractions: [f64; 3], config: MoveConfig) -> Result<(), CallError> {
    for (name, value) in ["x", "y", "theta"].into_iter().zip(fractions) {
        if !(value.is_finite() && (-1.0..=1.0).contains(&value)) {
            return Err(CallError::bad_argument(format!("{name} = {value}: expected a fraction in [-1, 1]")));
        }
    }
    if fractions == [0.0; 3] {
        return this.client.send(ToEngine::StopMove);
    }
    let limits = config.limits();
    if may_walk(this)? {
        let [x, y, theta] = fractions;
        let forward = if x >= 0.0 { limits.max_forward_m } else { limits.max_backward_m };
        let step =
            Step { forward: x * forward, left: y * limits.max_left_m, turn: theta * limits.max_turn_rad };
        drop(this.client.send_move(Goal::Steps(step), limits)?);
    }
    Ok(())
}

/// `setWalkTargetVelocity(x, y, theta, frequency[, config])`: NAOqi 1.x's moveToward.
fn set_walk_target_velocity(
    this: &mut ALMotion,
    _: &ModuleContext,
    (x, y, theta, frequency, config): (f64, f64, f64, f64, Option<Value>),
) -> Result<(), CallError> {
    let mut pairs = config.and_then(|config| config.as_array().cloned()).unwrap_or_default();
    pairs.push(Value::Array(vec!["Frequency".into(), frequency.into()]));
    toward(this, [x, y, theta], MoveConfig::parse(Some(&Value::Array(pairs)))?)
}

/// A place relative to the robot: x, y (m), θ (rad).
fn place(value: &Value) -> Option<[f64; 3]> {
    let items = value.as_array()?;
    let numbers: Vec<f64> =
        items.iter().filter_map(|v| v.as_f64().or_else(|| v.as_i64().map(|i| i as f64))).collect();
    (items.len() == 3 && numbers.len() == 3 && numbers.iter().all(|n| n.is_finite()))
        .then(|| [numbers[0], numbers[1], numbers[2]])
}

fn as_number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| value.as_i64().map(|i| i as f64))
}

/// What a `moveTo` call asks: the places (relative to where the robot is when it starts),
/// a duration, a config.
struct MoveTo {
    places: Vec<[f64; 3]>,
    seconds: Option<f64>,
    config: MoveConfig,
}

/// `moveTo`'s overloads: `(x, y, θ)`, `(x, y, θ, time)`, `(x, y, θ, config)`,
/// `(x, y, θ, time, config)`, `(controlPoints)`, `(controlPoints, config)`.
fn move_to_arguments(arguments: [Option<&Value>; 5]) -> Result<MoveTo, CallError> {
    let bad = |what: &str| CallError::bad_argument(format!("moveTo: {what}"));
    match arguments {
        [Some(points), config, None, None, None] if points.is_array() => {
            let places = points.as_array().into_iter().flatten().map(place).collect::<Option<Vec<_>>>();
            let places = places.filter(|places| !places.is_empty()).ok_or_else(|| {
                bad(&format!("expected control points [[x, y, theta], ...], got {}", value_excerpt(points)))
            })?;
            Ok(MoveTo { places, seconds: None, config: MoveConfig::parse(config)? })
        }
        [Some(x), Some(y), Some(theta), fourth, fifth] => {
            let [x, y, theta] = [x, y, theta].map(as_number);
            let (Some(x), Some(y), Some(theta)) = (x, y, theta) else {
                return Err(bad("expected numbers x, y, theta"));
            };
            let target = [number("x", x)?, number("y", y)?, number("theta", theta)?];
            let (seconds, config) = match (fourth, fifth) {
                (Some(time), config) if as_number(time).is_some() => (as_number(time), config),
                (config, None) => (None, config),
                _ => return Err(bad("expected (x, y, theta[, time][, config])")),
            };
            if let Some(seconds) = seconds.filter(|seconds| !(seconds.is_finite() && *seconds > 0.0)) {
                return Err(bad(&format!("time = {seconds}: expected a positive number of seconds")));
            }
            Ok(MoveTo { places: vec![target], seconds, config: MoveConfig::parse(config)? })
        }
        _ => Err(bad("expected (x, y, theta[, time][, config]) or (controlPoints[, config])")),
    }
}

/// The walk's limits slowed so that `target` takes about `seconds`.
fn paced(mut limits: MoveLimits, target: [f64; 3], seconds: f64) -> MoveLimits {
    let period = limits.step_period_s;
    let [x, y, theta] = target;
    // At full speed the body moves a whole step each step: forward, and sideways and turning
    // too (their opening and closing steps each move it by the step).
    let fastest = (x.abs() / limits.max_forward_m.max(1e-6))
        .max(y.abs() / limits.max_left_m.max(1e-6))
        .max(theta.abs() / limits.max_turn_rad.max(1e-6))
        * period;
    let fraction = (fastest / seconds).clamp(0.05, 1.0);
    limits.max_forward_m *= fraction;
    limits.max_backward_m *= fraction;
    limits.max_left_m *= fraction;
    limits.max_turn_rad *= fraction;
    limits
}

/// `moveTo(...)`: walk to a place relative to the robot (or through control points), and
/// answer whether it got there. Blocks; works through `post`.
fn move_to(
    this: &mut ALMotion,
    _: &ModuleContext,
    (a, b, c, d, e): (Value, Option<Value>, Option<Value>, Option<Value>, Option<Value>),
) -> Result<impl Future<Output = Result<bool, CallError>>, CallError> {
    let request = move_to_arguments([Some(&a), b.as_ref(), c.as_ref(), d.as_ref(), e.as_ref()])?;
    let allowed = may_walk(this)?;
    let client = Rc::clone(&this.client);
    Ok(async move {
        if !allowed {
            return Ok(false);
        }
        let start = client.shared.walk.position(true);
        let mut guard = KillMoveOnDrop { client: Rc::clone(&client), armed: true };
        for relative in request.places {
            let mut limits = request.config.limits();
            if let Some(seconds) = request.seconds {
                limits = paced(limits, relative, seconds);
            }
            let ended = client.send_move(Goal::Place(displaced(start, relative)), limits)?;
            let outcome = ended.await.map_err(|_| CallError::new("ALMotion stopped"))?;
            if outcome != MoveOutcome::Arrived {
                guard.armed = false;
                return Ok(false);
            }
        }
        guard.armed = false;
        Ok(true)
    })
}

/// `moveInit()`: to the walk's stance, ready to step. Blocks.
fn move_init(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let ended = if may_walk(this)? {
        Some(this.client.send_move(Goal::Steps(Step::ZERO), MoveConfig::default().limits())?)
    } else {
        None
    };
    Ok(async move {
        if let Some(ended) = ended {
            ended.await.map_err(|_| CallError::new("ALMotion stopped"))?;
        }
        Ok(())
    })
}

/// `waitUntilMoveIsFinished()`: returns when the move under way ends (at once without one).
fn wait_until_move_is_finished(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> impl Future<Output = Result<(), CallError>> {
    this.client.catch_up();
    let ended = this.client.moves.current().map(|id| this.client.moves.wait_for(id));
    async move {
        if let Some(ended) = ended {
            let _ = ended.await;
        }
        Ok(())
    }
}

fn stop_move(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<(), CallError> {
    this.client.send(ToEngine::StopMove)
}

fn kill_move(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<(), CallError> {
    this.client.send(ToEngine::KillMove)
}

fn move_is_active(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<bool, CallError> {
    this.client.catch_up();
    Ok(this.client.moves.current().is_some() || this.client.shared.walk.active())
}

/// `getMoveConfig("Max" | "Min" | "Default")`: `[[key, value], ...]`.
fn get_move_config(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<Vec<Value>, CallError> {
    let _ = this;
    match name.as_str() {
        "Max" => Ok(move_config::table(&move_config::MAX)),
        "Min" => Ok(move_config::table(&move_config::MIN)),
        "Default" => Ok(move_config::table(&move_config::DEFAULT)),
        other => Err(CallError::bad_argument(format!(
            "getMoveConfig: {:?}: expected \"Max\", \"Min\" or \"Default\"",
            naobroker_framework::excerpt(other)
        ))),
    }
}

/// `getRobotPosition(useSensors)`: `[x, y, θ]` in FRAME_WORLD.
fn get_robot_position(
    this: &mut ALMotion,
    _: &ModuleContext,
    (use_sensors,): (bool,),
) -> Result<Vec<f64>, CallError> {
    this.client.catch_up();
    Ok(this.client.shared.walk.position(use_sensors).to_vec())
}

/// `getNextRobotPosition()`: where the robot will be when the step under way ends.
fn get_next_robot_position(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Vec<f64>, CallError> {
    Ok(this.client.shared.walk.next_position().to_vec())
}

/// `getRobotVelocity()`: `[vx, vy, vθ]` in FRAME_ROBOT (m/s, rad/s).
fn get_robot_velocity(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Vec<f64>, CallError> {
    Ok(this.client.shared.walk.velocity().to_vec())
}

/// `setMoveArmsEnabled(left, right)`: whether the walk swings each arm no task holds.
fn set_move_arms_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (left, right): (bool, bool),
) -> Result<(), CallError> {
    this.client.send(ToEngine::MoveArms([left, right]))?;
    this.client.moves.set_arms([left, right]);
    Ok(())
}

/// `getMoveArmsEnabled("LArm" | "RArm" | "Arms")`.
fn get_move_arms_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain,): (String,),
) -> Result<bool, CallError> {
    let [left, right] = this.client.moves.arms();
    match chain.as_str() {
        "LArm" => Ok(left),
        "RArm" => Ok(right),
        "Arms" => Ok(left && right),
        other => Err(CallError::bad_argument(format!(
            "getMoveArmsEnabled: {:?}: expected \"LArm\", \"RArm\" or \"Arms\"",
            naobroker_framework::excerpt(other)
        ))),
    }
}

/// The locomotion methods, and their deprecated `walk…` names.
pub(super) fn add_to(m: &mut Methods<ALMotion>) {
    m.add_async_checked("moveInit", "To the walk's stance, ready to step. Blocks until there.", move_init)
        .add_async_checked("walkInit", "Deprecated: moveInit.", move_init)
        .add(
        "move",
        "move(x, y, theta[, moveConfig]): walk at this velocity (m/s, m/s, rad/s) until told otherwise; \
         zeros stop. Non-blocking.",
        move_velocity,
    )
    .add(
        "moveToward",
        "moveToward(x, y, theta[, moveConfig]): fractions (-1..1) of the largest step; zeros stop.",
        move_toward,
    )
    .add(
        "setWalkTargetVelocity",
        "Deprecated: setWalkTargetVelocity(x, y, theta, frequency[, moveConfig]), NAOqi 1.x's \
         moveToward.",
        set_walk_target_velocity,
    )
    .add_async_checked(
        "moveTo",
        "moveTo(x, y, theta[, time][, moveConfig]) or moveTo(controlPoints[, moveConfig]): walk to a place \
         relative to the robot; true when it got there. Blocks.",
        move_to,
    )
    .add_async_checked("walkTo", "Deprecated: moveTo.", move_to)
    .add("stopMove", "Stop the walk on the next double support.", stop_move)
    .add("stopWalk", "Deprecated: stopMove.", stop_move)
    .add("killMove", "Stop the walk at once.", kill_move)
    .add("killWalk", "Deprecated: killMove.", kill_move)
    .add("moveIsActive", "True while the robot walks.", move_is_active)
    .add("walkIsActive", "Deprecated: moveIsActive.", move_is_active)
    .add_async("waitUntilMoveIsFinished", "Returns when the walk ends.", wait_until_move_is_finished)
    .add_async("waitUntilWalkIsFinished", "Deprecated: waitUntilMoveIsFinished.", wait_until_move_is_finished)
    .add(
        "getMoveConfig",
        "getMoveConfig(\"Max\" | \"Min\" | \"Default\"): [[key, value], ...] of the move config.",
        get_move_config,
    )
    .add(
        "getRobotPosition",
        "getRobotPosition(useSensors): [x, y, theta] in FRAME_WORLD, from the executed steps or with the \
         gyroscope's heading.",
        get_robot_position,
    )
    .add("getNextRobotPosition", "[x, y, theta] when the step under way ends.", get_next_robot_position)
    .add("getRobotVelocity", "[vx, vy, vtheta] of the walk in FRAME_ROBOT.", get_robot_velocity)
    .add("setMoveArmsEnabled", "setMoveArmsEnabled(left, right): arms swing walking.", set_move_arms_enabled)
    .add("setWalkArmsEnabled", "Deprecated: setMoveArmsEnabled.", set_move_arms_enabled)
    .add("getMoveArmsEnabled", "getMoveArmsEnabled(\"LArm\" | \"RArm\" | \"Arms\").", get_move_arms_enabled)
    .add("getWalkArmsEnabled", "Deprecated: getMoveArmsEnabled.", get_move_arms_enabled);
}
