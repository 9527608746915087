//! ALMotion's Cartesian control: `setPositions`, `setTransforms` (reactive, answered once
//! their task has started), `positionInterpolations`, `transformInterpolations` (NAOqi 2.x,
//! blocking) and `positionInterpolation` (NAOqi 1.x, blocking). A chain end's targets go
//! through the kinematic model's inverse kinematics, within the joints' limits, into an
//! ordinary joint task: key frames sub-sampled along straight lines (`cartesian/plan.rs`).
//! The handler checks the arguments and snapshots what planning needs; the planning itself
//! runs on ALMotion's planning thread (`cartesian_planning.rs`), never on the broker's.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{CallError, ModuleContext, Value};
use naobroker_kinematics::{Pose, Transform};

use super::cartesian_args::{self, Form};
use super::cartesian_planning::OffThread;
use super::cartesian_queries::{cartesian, torso_in_space};
use super::cartesian_tracks::{self, Move, PlanRequest, Planned};
use super::client::Client;
use super::ALMotion;
use crate::cartesian::{Kinematics, Source, Space};
use crate::shapes;

/// At most this many Cartesian calls wait for their planning at a time (all callers
/// together); one more is refused at once with an error naming the limit.
const PLANNING_LIMIT: usize = 16;

/// The end of a blocking call's task (`Ok(false)`: killed or replaced).
type TaskEnd = Pin<Box<dyn Future<Output = Result<bool, CallError>>>>;

/// ALMotion's planning thread: a call's plan in, its started task out (a blocking call's
/// end to wait for), in call order.
pub(super) type Planning = OffThread<PlanRequest, Result<Option<TaskEnd>, CallError>>;

pub(super) fn set_positions(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, positions, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    reactive(this, "setPositions", Form::Position6D, (&names, &frames, &positions, &masks), fraction)
}

pub(super) fn set_transforms(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, transforms, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    reactive(this, "setTransforms", Form::Matrix, (&names, &frames, &transforms, &masks), fraction)
}

pub(super) fn position_interpolations(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, paths, masks, times): (Value, Value, Value, Value, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    timed(this, "positionInterpolations", Form::Position6D, (&names, &frames, &paths, &masks), &times)
}

pub(super) fn transform_interpolations(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, paths, masks, times): (Value, Value, Value, Value, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    timed(this, "transformInterpolations", Form::Matrix, (&names, &frames, &paths, &masks), &times)
}

/// NAOqi 1.x: `positionInterpolation(chainName, space, path, axisMask, durations,
/// isAbsolute)`; a relative path adds to the chain end's commanded Position6D.
pub(super) fn position_interpolation(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, frame, path, mask, durations, absolute): (Value, Value, Value, Value, Value, bool),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let mut moves = moves(Form::Position6D, (&name, &frame, &path, &mask), Some(&durations))?;
    if !absolute {
        let (kinematics, _) = cartesian(this)?;
        let start = commanded_angles(&this.client, kinematics);
        for (space, step) in &mut moves {
            let current = in_space(this, *space, current_end(kinematics, step, &start))?;
            let from = current.to_position6d();
            for target in &mut step.targets {
                let delta = target.to_position6d();
                *target = Transform::from_position6d([0, 1, 2, 3, 4, 5].map(|i| from[i] + delta[i]));
            }
        }
    }
    let planned = submit(this, "positionInterpolation", moves, None)?;
    Ok(async move { finish(planned.await?).await })
}

fn reactive(
    this: &mut ALMotion,
    task: &'static str,
    form: Form,
    arguments: (&Value, &Value, &Value, &Value),
    fraction: f64,
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let fraction = shapes::fraction(fraction)?;
    let moves = moves(form, arguments, None)?;
    let planned = submit(this, task, moves, Some(fraction))?;
    Ok(async move { planned.await?.map(|_| ()) })
}

fn timed(
    this: &mut ALMotion,
    task: &'static str,
    form: Form,
    arguments: (&Value, &Value, &Value, &Value),
    times: &Value,
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let moves = moves(form, arguments, Some(times))?;
    let planned = submit(this, task, moves, None)?;
    Ok(async move { finish(planned.await?).await })
}

/// A blocking call's answer: once its task has ended.
async fn finish(started: Result<Option<TaskEnd>, CallError>) -> Result<(), CallError> {
    match started? {
        Some(end) => end.await.map(|_| ()),
        None => Ok(()),
    }
}

/// Snapshot what the moves' planning needs (the targets in FRAME_TORSO, the commanded
/// angles) and queue it on the planning thread; the future gives the started task.
fn submit(
    this: &mut ALMotion,
    task: &'static str,
    moves: Vec<(Space, Move)>,
    fraction: Option<f64>,
) -> Result<impl Future<Output = Result<Result<Option<TaskEnd>, CallError>, CallError>>, CallError> {
    let (kinematics, _) = cartesian(this)?;
    let start = commanded_angles(&this.client, kinematics);
    let mut in_torso = Vec::with_capacity(moves.len());
    for (space, mut step) in moves {
        let to_torso = torso_in(this, space)?.inverse();
        step.targets.iter_mut().for_each(|target| *target = to_torso.then(target));
        // Finite numbers far enough out overflow on the way (a relative path's sum, too).
        let overflowed =
            step.targets.iter().position(|target| !target.to_matrix16().iter().all(|v| v.is_finite()));
        if let Some(index) = overflowed {
            return Err(CallError::bad_argument(format!(
                "paths: {} point {}: too far to be expressed in FRAME_TORSO",
                step.chain.name(),
                index + 1
            )));
        }
        in_torso.push(step);
    }
    let request = PlanRequest {
        task,
        blocking: fraction.is_none(),
        body: Arc::clone(&this.client.body),
        start,
        moves: in_torso,
        fraction,
    };
    planning(this)?.submit(request)
}

/// The planning thread, started by the first Cartesian call (on the actor's thread).
fn planning(this: &mut ALMotion) -> Result<&Planning, CallError> {
    let planning = match this.cartesian_planning.take() {
        Some(planning) => planning,
        None => {
            let client = Rc::clone(&this.client);
            let deliver = move |planned: Planned| -> Result<Option<TaskEnd>, CallError> {
                let tracks = planned.tracks?;
                if planned.blocking {
                    Ok(Some(Box::pin(client.begin(planned.task, tracks)?)))
                } else {
                    client.start(planned.task, tracks)?;
                    Ok(None)
                }
            };
            OffThread::spawn("ALMotion planning", PLANNING_LIMIT, cartesian_tracks::plan, deliver)?
        }
    };
    Ok(this.cartesian_planning.insert(planning))
}

/// A call's moves, checked whole, each with the frame its targets are in.
fn moves(
    form: Form,
    (names, frames, paths, masks): (&Value, &Value, &Value, &Value),
    times: Option<&Value>,
) -> Result<Vec<(Space, Move)>, CallError> {
    let chains = cartesian_args::effectors("effectorNames", names)?;
    let spaces = cartesian_args::spaces(frames, chains.len())?;
    let axis_masks = cartesian_args::axis_masks(masks, chains.len())?;
    let names: Vec<&str> = chains.iter().map(|chain| chain.name()).collect();
    let targets = cartesian_args::paths("paths", paths, &names, form)?;
    let times = match times {
        Some(times) => {
            let points: Vec<usize> = targets.iter().map(Vec::len).collect();
            cartesian_args::times("times", times, &names, &points)?.into_iter().map(Some).collect()
        }
        None => {
            if let Some((chain, _)) = chains.iter().zip(&targets).find(|(_, targets)| targets.len() != 1) {
                return Err(CallError::bad_argument(format!(
                    "paths: {}: one target, not a path",
                    chain.name()
                )));
            }
            vec![None; chains.len()]
        }
    };
    Ok(chains
        .into_iter()
        .zip(spaces)
        .zip(axis_masks)
        .zip(targets.into_iter().zip(times))
        .map(|(((chain, space), axis_mask), (targets, times))| {
            (space, Move { chain, axis_mask, targets, times })
        })
        .collect())
}

/// The command model's angles, in the kinematic model's order.
fn commanded_angles(client: &Client, kinematics: &Kinematics) -> Vec<f64> {
    let mut angles = vec![0.0; kinematics.model.joint_names().len()];
    kinematics.angles_from_motors(|motor| client.shared.position(motor), &mut angles);
    angles
}

/// The chain end's transform in FRAME_TORSO at `angles`.
fn current_end(kinematics: &Kinematics, step: &Move, angles: &[f64]) -> Transform {
    let mut pose = Pose::new(&kinematics.model);
    pose.update(&kinematics.model, angles);
    pose.transform(kinematics.model.chain_end(step.chain))
}

/// FRAME_TORSO in FRAME_ROBOT (and FRAME_WORLD), of the command model.
fn torso_in(this: &ALMotion, space: Space) -> Result<Transform, CallError> {
    let (_, published) = cartesian(this)?;
    let torso_in_robot = published.read(|snapshot| snapshot.torso_in_robot(Source::Commanded));
    Ok(torso_in_space(this, space, torso_in_robot, Source::Commanded))
}

fn in_space(this: &ALMotion, space: Space, in_torso: Transform) -> Result<Transform, CallError> {
    Ok(torso_in(this, space)?.then(&in_torso))
}
