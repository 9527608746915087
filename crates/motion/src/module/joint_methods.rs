//! ALMotion's methods taking joint names with angles, times or stiffnesses, as named
//! handlers. Each checks its whole call (shapes.rs) and starts its task before answering,
//! so a bad call fails at once with its error, posted or not.

use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{CallError, ModuleContext, Value};

use super::client::Client;
use super::ALMotion;
use crate::engine::{Channel, TrackEntry};
use crate::shapes::{
    self, BezierFrames, KeyFrames, ANGLE, ANGLE_INTERPOLATION, STIFFNESS, STIFFNESS_INTERPOLATION,
};
use crate::trajectory::Track;

pub(super) fn set_angles(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, angles, fraction): (Value, Value, f64),
) -> Result<(), CallError> {
    toward(&this.client, "setAngles", (&names, "angles", &angles), fraction, false)
}

pub(super) fn change_angles(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, changes, fraction): (Value, Value, f64),
) -> Result<(), CallError> {
    toward(&this.client, "changeAngles", (&names, "changes", &changes), fraction, true)
}

pub(super) fn angle_interpolation(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, angles, times, absolute): (Value, Value, Value, bool),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let client = &this.client;
    let joints = client.body.resolve(&names)?;
    let frames = shapes::key_frames(ANGLE_INTERPOLATION, &client.names(&joints), &angles, &times)?;
    let tracks = driving(client, joints, frames)
        .map(|(joint, KeyFrames { values, times })| {
            let values = if absolute {
                values.iter().map(|&angle| client.clamp_angle(joint, angle)).collect()
            } else {
                values
            };
            client.track(joint, Channel::Position, Track::Keys { times, values }, !absolute)
        })
        .collect();
    blocking(client, "angleInterpolation", tracks)
}

pub(super) fn angle_interpolation_with_speed(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, targets, fraction): (Value, Value, f64),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let client = &this.client;
    let fraction = shapes::fraction(fraction)?;
    let joints = client.body.resolve(&names)?;
    let targets = shapes::targets(("targetAngles", ANGLE), &client.names(&joints), &targets)?;
    let (joints, targets): (Vec<usize>, Vec<f64>) = driving(client, joints, targets).unzip();
    blocking(client, "angleInterpolationWithSpeed", client.with_speed(&joints, &targets, fraction))
}

pub(super) fn angle_interpolation_bezier(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, times, control_points): (Value, Value, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let client = &this.client;
    let joints = client.body.resolve(&names)?;
    let frames = shapes::bezier_frames(&client.names(&joints), &times, &control_points)?;
    let tracks = driving(client, joints, frames)
        .map(|(joint, BezierFrames { values, times, handles })| {
            client.track(joint, Channel::Position, Track::Bezier { times, values, handles }, false)
        })
        .collect();
    blocking(client, "angleInterpolationBezier", tracks)
}

pub(super) fn set_stiffnesses(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, stiffnesses): (Value, Value),
) -> Result<(), CallError> {
    let client = &this.client;
    let joints = client.body.resolve(&names)?;
    let stiffnesses = shapes::targets(("stiffnesses", STIFFNESS), &client.names(&joints), &stiffnesses)?;
    let set: Vec<(usize, f64)> = driving(client, joints, stiffnesses)
        .map(|(joint, stiffness)| (joint, stiffness.clamp(0.0, 1.0)))
        .collect();
    let tracks = set
        .iter()
        .map(|&(joint, target)| {
            client.track(joint, Channel::Stiffness, Track::Toward { target, speed: f64::INFINITY }, false)
        })
        .collect();
    client.start("setStiffnesses", tracks)?;
    // getStiffnesses answers it at once, before the motion cycle applies it.
    for (joint, target) in set {
        client.unapplied.stiffness_set(client.body.joints[joint].motor, target);
    }
    Ok(())
}

/// The stiffness ALMotion commands: what the last call set (smart stiffness's lowered
/// value included).
pub(super) fn get_stiffnesses(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names,): (Value,),
) -> Result<Vec<f64>, CallError> {
    let client = &this.client;
    let joints = client.body.resolve(&names)?;
    Ok(joints
        .iter()
        .map(|&joint| client.unapplied.stiffness(client.body.joints[joint].motor, &client.shared))
        .collect())
}

pub(super) fn stiffness_interpolation(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, stiffnesses, times): (Value, Value, Value),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let client = &this.client;
    let joints = client.body.resolve(&names)?;
    let frames = shapes::key_frames(STIFFNESS_INTERPOLATION, &client.names(&joints), &stiffnesses, &times)?;
    let tracks = driving(client, joints, frames)
        .map(|(joint, KeyFrames { values, times })| {
            let values = values.iter().map(|stiffness| stiffness.clamp(0.0, 1.0)).collect();
            client.track(joint, Channel::Stiffness, Track::Keys { times, values }, false)
        })
        .collect();
    blocking(client, "stiffnessInterpolation", tracks)
}

/// `setAngles` and `changeAngles`: toward the targets at `fraction` of each joint's
/// maximum speed; `values` are changes from the current command when `relative`.
fn toward(
    client: &Client,
    task: &'static str,
    (names, argument, values): (&Value, &'static str, &Value),
    fraction: f64,
    relative: bool,
) -> Result<(), CallError> {
    let fraction = shapes::fraction(fraction)?;
    let joints = client.body.resolve(names)?;
    let values = shapes::targets((argument, ANGLE), &client.names(&joints), values)?;
    let tracks = driving(client, joints, values)
        .map(|(joint, value)| {
            let spec = &client.body.joints[joint].spec;
            let from = if relative { client.shared.position(client.body.joints[joint].motor) } else { 0.0 };
            let target = client.clamp_angle(joint, from + value);
            client.track(
                joint,
                Channel::Position,
                Track::Toward { target, speed: fraction * spec.max_velocity },
                false,
            )
        })
        .collect();
    client.start(task, tracks)?;
    Ok(())
}

/// The joints that drive their motor (one per motor, see `Body::drivers`) with their data.
fn driving<T>(client: &Client, joints: Vec<usize>, data: Vec<T>) -> impl Iterator<Item = (usize, T)> {
    let drives = client.body.drivers(&joints);
    joints.into_iter().zip(data).zip(drives).filter(|(_, drives)| *drives).map(|(pair, _)| pair)
}

/// Starts the task now; the call ends when the task does (also when it is killed).
fn blocking(
    client: &Rc<Client>,
    task: &'static str,
    tracks: Vec<TrackEntry>,
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let finished = client.begin(task, tracks)?;
    Ok(async move { finished.await.map(|_| ()) })
}
