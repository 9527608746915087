//! ALMotion's footsteps: `setFootSteps`, `setFootStepsWithSpeed` and `getFootSteps`, each
//! footstep of a leg relative to the other foot, clipped as NAOqi clips them, planned in the
//! walk one command each, and walked by a move that ends once they are.

use naobroker_framework::{CallError, Methods, ModuleContext, Value};
use naobroker_walk::{Foot, FootStep, Step, MAX_FOOTSTEPS};

use super::cartesian_queries::named_transform;
use super::locomotion::may_walk;
use super::move_config::{MoveConfig, STANCE_WIDTH_M};
use super::ALMotion;
use crate::engine::walking::{Goal, MoveLimits};
use crate::engine::ToEngine;

/// A footstep lasts at least this long, and at most (s).
const FOOTSTEP_S: (f64, f64) = (0.2, 2.0);

fn leg(name: &str) -> Result<Foot, CallError> {
    match name {
        "LLeg" => Ok(Foot::Left),
        "RLeg" => Ok(Foot::Right),
        other => Err(CallError::bad_argument(format!(
            "setFootSteps: leg {:?}: expected \"LLeg\" or \"RLeg\"",
            naobroker_framework::excerpt(other)
        ))),
    }
}

/// A footstep `[x, y, θ]` of `foot` relative to the other foot, clipped as NAOqi clips them
/// to the move config's largest step: forward within MaxStepX (backward, the walk's own
/// limit), outward from the stance's width to MaxStepY, turned within MaxStepTheta.
fn clipped(foot: Foot, step: &[f64], limits: &MoveLimits) -> Result<Step, CallError> {
    let &[x, y, theta] = step else {
        return Err(CallError::bad_argument(format!(
            "setFootSteps: a footstep is [x, y, theta], got {} numbers",
            step.len()
        )));
    };
    if ![x, y, theta].iter().all(|v| v.is_finite()) {
        return Err(CallError::bad_argument(format!("setFootSteps: footstep {step:?} is not finite")));
    }
    let side = if foot == Foot::Left { 1.0 } else { -1.0 };
    let outward = (side * y).clamp(STANCE_WIDTH_M, STANCE_WIDTH_M + 2.0 * limits.max_left_m);
    Ok(Step {
        forward: x.clamp(-limits.max_backward_m, limits.max_forward_m),
        left: side * outward,
        turn: theta.clamp(-2.0 * limits.max_turn_rad, 2.0 * limits.max_turn_rad),
    })
}

/// Plan footsteps and walk them (non-blocking): `durations` per step.
fn plan_footsteps(
    this: &ALMotion,
    legs: &[String],
    steps: &[Vec<f64>],
    durations: &[f64],
    clear: bool,
) -> Result<(), CallError> {
    if legs.len() != steps.len() || legs.len() != durations.len() || legs.is_empty() {
        return Err(CallError::bad_argument(format!(
            "setFootSteps: {} legs, {} footsteps and {} times: expected as many, at least one",
            legs.len(),
            steps.len(),
            durations.len()
        )));
    }
    let ahead = if clear { 0 } else { this.client.shared.walk.planned() as usize };
    if ahead + steps.len() > MAX_FOOTSTEPS {
        return Err(CallError::refused(format!(
            "setFootSteps: {} footsteps with {ahead} planned: at most {MAX_FOOTSTEPS} ahead",
            steps.len()
        )));
    }
    let limits = MoveConfig::default().limits();
    let mut planned = Vec::with_capacity(steps.len());
    for ((name, step), duration_s) in legs.iter().zip(steps).zip(durations) {
        let foot = leg(name)?;
        planned.push(FootStep { foot, relative: clipped(foot, step, &limits)?, duration_s: *duration_s });
    }
    if !may_walk(this)? {
        return Ok(());
    }
    for (index, step) in planned.iter().enumerate() {
        this.client.send(ToEngine::PlanFootStep { step: *step, clear: clear && index == 0 })?;
    }
    this.client.moves.planned(&planned, clear);
    drop(this.client.send_move(Goal::FootSteps, limits)?);
    Ok(())
}

/// `setFootSteps(legNames, footSteps, timeList, clearExisting)`: each footstep `[x, y, θ]` of
/// that leg relative to the other foot, ending at its time (s from now, increasing).
fn set_foot_steps(
    this: &mut ALMotion,
    _: &ModuleContext,
    (legs, steps, times, clear): (Vec<String>, Vec<Vec<f64>>, Vec<f64>, bool),
) -> Result<(), CallError> {
    let mut durations = Vec::with_capacity(times.len());
    let mut before = 0.0;
    for &time in &times {
        if !(time.is_finite() && time > before) {
            return Err(CallError::bad_argument(format!(
                "setFootSteps: times {times:?}: expected increasing positive seconds"
            )));
        }
        durations.push((time - before).clamp(FOOTSTEP_S.0, FOOTSTEP_S.1));
        before = time;
    }
    plan_footsteps(this, &legs, &steps, &durations, clear)
}

/// `setFootStepsWithSpeed(legNames, footSteps, fractionMaxSpeed, clearExisting)`: each
/// footstep at a fraction (0 to 1] of the walk's step frequency.
fn set_foot_steps_with_speed(
    this: &mut ALMotion,
    _: &ModuleContext,
    (legs, steps, fractions, clear): (Vec<String>, Vec<Vec<f64>>, Vec<f64>, bool),
) -> Result<(), CallError> {
    let period = MoveConfig::default().limits().step_period_s;
    let mut durations = Vec::with_capacity(fractions.len());
    for &fraction in &fractions {
        if !(fraction.is_finite() && fraction > 0.0 && fraction <= 1.0) {
            return Err(CallError::bad_argument(format!(
                "setFootStepsWithSpeed: fractionMaxSpeed {fraction}: expected (0, 1]"
            )));
        }
        durations.push((period / fraction).clamp(FOOTSTEP_S.0, FOOTSTEP_S.1));
    }
    plan_footsteps(this, &legs, &steps, &durations, clear)
}

fn footstep_value(step: &FootStep) -> Value {
    let name = if step.foot == Foot::Left { "LLeg" } else { "RLeg" };
    let Step { forward, left, turn } = step.relative;
    let place = Value::Array(vec![forward.into(), left.into(), turn.into()]);
    Value::Array(vec![name.into(), place, step.duration_s.into()])
}

/// `getFootSteps()`: `[[\"LLeg\", \"RLeg\"], [[x, y, θ] of each foot in FRAME_WORLD],
/// [the footstep under way], [the footsteps ahead]]`, a footstep `[leg, [x, y, θ], seconds]`.
fn get_foot_steps(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Vec<Value>, CallError> {
    this.client.catch_up();
    let mut feet = Vec::with_capacity(2);
    for name in ["LLeg", "RLeg"] {
        let [x, y, _, _, _, yaw] = named_transform(this, name, &Value::from(1), true)?.to_position6d();
        feet.push(Value::Array(vec![x.into(), y.into(), yaw.into()]));
    }
    let walking = this.client.shared.walk.active();
    let ahead = this.client.shared.walk.planned() as usize;
    let (current, ahead) = this.client.moves.footsteps(ahead, walking);
    Ok(vec![
        Value::Array(vec!["LLeg".into(), "RLeg".into()]),
        Value::Array(feet),
        Value::Array(current.iter().map(footstep_value).collect()),
        Value::Array(ahead.iter().map(footstep_value).collect()),
    ])
}

/// The footstep methods.
pub(super) fn add_to(m: &mut Methods<ALMotion>) {
    m.add(
        "setFootSteps",
        "setFootSteps(legNames, footSteps, timeList, clearExisting): footsteps [x, y, theta] of each leg \
         relative to the other foot, ending at their times; non-blocking.",
        set_foot_steps,
    )
    .add(
        "setFootStepsWithSpeed",
        "setFootStepsWithSpeed(legNames, footSteps, fractionMaxSpeed, clearExisting): footsteps at \
         fractions of the walk's step frequency; non-blocking.",
        set_foot_steps_with_speed,
    )
    .add(
        "getFootSteps",
        "[[legNames], [[x, y, theta] of the feet in FRAME_WORLD], [the footstep under way], [those ahead]], \
         a footstep [leg, [x, y, theta], seconds].",
        get_foot_steps,
    );
}
