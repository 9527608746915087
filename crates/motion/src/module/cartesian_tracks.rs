//! A Cartesian call's planning, done on ALMotion's planning thread: what the call snapshot
//! on the actor's thread (`PlanRequest`: the model, the start angles, each move's frame) and
//! the joint tracks it becomes through `cartesian/plan.rs` (`plan`).

use std::sync::Arc;

use naobroker_framework::CallError;
use naobroker_kinematics::{Chain, Transform};

use crate::body::Body;
use crate::cartesian::{JointPlan, Planner, Waypoint};
use crate::engine::{Channel, TrackEntry};
use crate::trajectory::Track;

/// One chain end's move: its axis mask, and targets (in FRAME_TORSO) with their times
/// (none: as fast as `fractionMaxSpeed` allows).
pub(super) struct Move {
    pub(super) chain: Chain,
    pub(super) axis_mask: u8,
    pub(super) targets: Vec<Transform>,
    pub(super) times: Option<Vec<f64>>,
}

/// Everything a call's planning needs, taken when the call came.
pub(super) struct PlanRequest {
    /// The task's name, and whether the call waits for its end.
    pub(super) task: &'static str,
    pub(super) blocking: bool,
    /// The body, with its kinematic model (checked when the call came).
    pub(super) body: Arc<Body>,
    /// The command model's angles, in the kinematic model's order.
    pub(super) start: Vec<f64>,
    pub(super) moves: Vec<Move>,
    /// Reactive calls: the fraction of the joints' maximum speed; timed ones: none.
    pub(super) fraction: Option<f64>,
}

/// A planned call: its task's tracks, or why there are none.
pub(super) struct Planned {
    pub(super) task: &'static str,
    pub(super) blocking: bool,
    pub(super) tracks: Result<Vec<TrackEntry>, CallError>,
}

pub(super) fn plan(request: PlanRequest) -> Planned {
    Planned { task: request.task, blocking: request.blocking, tracks: tracks(&request) }
}

/// The joint tasks' tracks for the moves: timed by their times, or (`fraction`) at that
/// fraction of the slowest joint's maximum speed.
fn tracks(request: &PlanRequest) -> Result<Vec<TrackEntry>, CallError> {
    let PlanRequest { body, start, .. } = request;
    let kinematics = body
        .kinematics
        .as_deref()
        .ok_or_else(|| CallError::new("the robot description has no kinematic model ([kinematics])"))?;
    let model = &kinematics.model;
    let body_joint = |name: &str| body.joints.iter().position(|joint| joint.name == name);
    let limits: Vec<(f64, f64)> = model
        .joint_names()
        .iter()
        .map(|name| {
            body_joint(name).map_or((0.0, 0.0), |j| (body.joints[j].spec.min, body.joints[j].spec.max))
        })
        .collect();
    let mut tracks = Vec::new();
    for step in &request.moves {
        let times = step.times.clone().unwrap_or_else(|| vec![PROVISIONAL_S]);
        let waypoints: Vec<Waypoint> =
            step.targets.iter().zip(&times).map(|(&target, &time)| Waypoint { time, target }).collect();
        let planner = Planner { model, chain: step.chain, axis_mask: step.axis_mask, limits: &limits };
        let mut plan = planner.plan(start, &waypoints).map_err(|error| CallError::new(error.to_string()))?;
        if !plan.reached {
            tracing::info!(
                chain = step.chain.name(),
                "Cartesian target out of reach: moving to the nearest pose"
            );
        }
        if let Some(fraction) = request.fraction {
            retime(&mut plan, start, |joint| {
                body_joint(&model.joint_names()[joint])
                    .map_or(f64::INFINITY, |j| fraction * body.joints[j].spec.max_velocity)
            });
        }
        for (&joint, values) in plan.joints.iter().zip(plan.angles) {
            let Some(body_joint) = body_joint(&model.joint_names()[joint]) else { continue };
            let track = Track::Keys { times: plan.times.clone(), values };
            let motor = body.joints[body_joint].motor;
            tracks.push(TrackEntry { motor, channel: Channel::Position, track, relative: false });
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
