//! ALMotion's Cartesian control: `setPositions`, `setTransforms` (reactive),
//! `positionInterpolations`, `transformInterpolations` (NAOqi 2.x, blocking) and
//! `positionInterpolation` (NAOqi 1.x, blocking). A chain end's targets go through the
//! kinematic model's inverse kinematics, within the joints' limits, into an ordinary joint
//! task: key frames sub-sampled along straight lines (`cartesian/plan.rs`).

use std::future::Future;

use naobroker_framework::{CallError, ModuleContext, Value};
use naobroker_kinematics::{Chain, Pose, Transform};

use super::cartesian_args::{self, Form};
use super::cartesian_queries::cartesian;
use super::client::Client;
use super::ALMotion;
use crate::cartesian::{JointPlan, Kinematics, Planner, Source, Space, Waypoint};
use crate::engine::{Channel, TrackEntry};
use crate::shapes;
use crate::trajectory::Track;

/// One chain end's move: its frame, axis mask, and targets (in that frame) with their times
/// (none: as fast as `fractionMaxSpeed` allows).
struct Move {
    chain: Chain,
    space: Space,
    axis_mask: u8,
    targets: Vec<Transform>,
    times: Option<Vec<f64>>,
}

pub(super) fn set_positions(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, positions, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<(), CallError> {
    reactive(this, "setPositions", Form::Position6D, (&names, &frames, &positions, &masks), fraction)
}

pub(super) fn set_transforms(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, frames, transforms, fraction, masks): (Value, Value, Value, f64, Value),
) -> Result<(), CallError> {
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
        for step in &mut moves {
            let current = in_space(this, step.space, current_end(kinematics, step.chain, &start))?;
            let from = current.to_position6d();
            for target in &mut step.targets {
                let delta = target.to_position6d();
                *target = Transform::from_position6d([0, 1, 2, 3, 4, 5].map(|i| from[i] + delta[i]));
            }
        }
    }
    let tracks = tracks(this, &moves, None)?;
    let finished = this.client.begin("positionInterpolation", tracks)?;
    Ok(async move { finished.await.map(|_| ()) })
}

fn reactive(
    this: &ALMotion,
    task: &'static str,
    form: Form,
    arguments: (&Value, &Value, &Value, &Value),
    fraction: f64,
) -> Result<(), CallError> {
    let fraction = shapes::fraction(fraction)?;
    let moves = moves(form, arguments, None)?;
    let tracks = tracks(this, &moves, Some(fraction))?;
    this.client.start(task, tracks)?;
    Ok(())
}

fn timed(
    this: &ALMotion,
    task: &'static str,
    form: Form,
    arguments: (&Value, &Value, &Value, &Value),
    times: &Value,
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let moves = moves(form, arguments, Some(times))?;
    let tracks = tracks(this, &moves, None)?;
    let finished = this.client.begin(task, tracks)?;
    Ok(async move { finished.await.map(|_| ()) })
}

/// A call's moves, checked whole.
fn moves(
    form: Form,
    (names, frames, paths, masks): (&Value, &Value, &Value, &Value),
    times: Option<&Value>,
) -> Result<Vec<Move>, CallError> {
    let chains = cartesian_args::effectors("effectorNames", names)?;
    let spaces = cartesian_args::spaces(frames, chains.len())?;
    let axis_masks = cartesian_args::axis_masks(masks, chains.len())?;
    let targets = cartesian_args::paths("paths", paths, &chains, form)?;
    let times = match times {
        Some(times) => {
            let points: Vec<usize> = targets.iter().map(Vec::len).collect();
            cartesian_args::times("times", times, &chains, &points)?.into_iter().map(Some).collect()
        }
        None => {
            if let Some((chain, _)) = chains.iter().zip(&targets).find(|(_, targets)| targets.len() != 1) {
                return Err(CallError::new(format!("paths: {}: one target, not a path", chain.name())));
            }
            vec![None; chains.len()]
        }
    };
    Ok(chains
        .into_iter()
        .zip(spaces)
        .zip(axis_masks)
        .zip(targets.into_iter().zip(times))
        .map(|(((chain, space), axis_mask), (targets, times))| Move {
            chain,
            space,
            axis_mask,
            targets,
            times,
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
fn current_end(kinematics: &Kinematics, chain: Chain, angles: &[f64]) -> Transform {
    let mut pose = Pose::new(&kinematics.model);
    pose.update(&kinematics.model, angles);
    pose.transform(kinematics.model.chain_end(chain))
}

/// FRAME_TORSO in FRAME_ROBOT (and FRAME_WORLD), of the command model.
fn torso_in(this: &ALMotion, space: Space) -> Result<Transform, CallError> {
    let (_, published) = cartesian(this)?;
    Ok(match space {
        Space::Torso => Transform::IDENTITY,
        Space::World | Space::Robot => published.read(|snapshot| snapshot.torso_in_robot(Source::Commanded)),
    })
}

fn in_space(this: &ALMotion, space: Space, in_torso: Transform) -> Result<Transform, CallError> {
    Ok(torso_in(this, space)?.then(&in_torso))
}

/// The joint tasks' tracks for `moves`: timed by their times, or (`fraction`) at that
/// fraction of the slowest joint's maximum speed.
fn tracks(this: &ALMotion, moves: &[Move], fraction: Option<f64>) -> Result<Vec<TrackEntry>, CallError> {
    let (kinematics, _) = cartesian(this)?;
    let client = &this.client;
    let model = &kinematics.model;
    let body_joint = |name: &str| client.body.joints.iter().position(|joint| joint.name == name);
    let limits: Vec<(f64, f64)> = model
        .joint_names()
        .iter()
        .map(|name| {
            body_joint(name)
                .map_or((0.0, 0.0), |j| (client.body.joints[j].spec.min, client.body.joints[j].spec.max))
        })
        .collect();
    let start = commanded_angles(client, kinematics);
    let mut tracks = Vec::new();
    for step in moves {
        let torso_in_space = torso_in(this, step.space)?;
        let to_torso = torso_in_space.inverse();
        let times = step.times.clone().unwrap_or_else(|| vec![PROVISIONAL_S]);
        let waypoints: Vec<Waypoint> = step
            .targets
            .iter()
            .zip(&times)
            .map(|(target, &time)| Waypoint { time, target: to_torso.then(target) })
            .collect();
        let planner = Planner { model, chain: step.chain, axis_mask: step.axis_mask, limits: &limits };
        let mut plan = planner.plan(&start, &waypoints).map_err(|error| CallError::new(error.to_string()))?;
        if !plan.reached {
            tracing::info!(
                chain = step.chain.name(),
                "Cartesian target out of reach: moving to the nearest pose"
            );
        }
        if let Some(fraction) = fraction {
            retime(&mut plan, &start, |joint| {
                body_joint(&model.joint_names()[joint])
                    .map_or(f64::INFINITY, |j| fraction * client.body.joints[j].spec.max_velocity)
            });
        }
        for (&joint, values) in plan.joints.iter().zip(plan.angles) {
            let Some(body_joint) = body_joint(&model.joint_names()[joint]) else { continue };
            let track = Track::Keys { times: plan.times.clone(), values };
            tracks.push(client.track(body_joint, Channel::Position, track, false));
        }
    }
    Ok(tracks)
}

/// The duration a reactive move is planned with before it is timed by speed: long enough
/// that its steps are as short as they can be.
const PROVISIONAL_S: f64 = 1000.0;

/// Time `plan` so that each joint's peak speed (the smooth profile's 1.5 × its mean) is
/// at most `speed(joint)`; at least one motion cycle.
fn retime(plan: &mut JointPlan, start: &[f64], speed: impl Fn(usize) -> f64) {
    let duration = plan
        .joints
        .iter()
        .zip(&plan.angles)
        .map(|(&joint, values)| {
            let travel: f64 =
                std::iter::once(&start[joint]).chain(values).zip(values).map(|(a, b)| (b - a).abs()).sum();
            1.5 * travel / speed(joint)
        })
        .fold(0.02, f64::max);
    let Some(&planned) = plan.times.last() else { return };
    plan.times.iter_mut().for_each(|time| *time *= duration / planned);
}
