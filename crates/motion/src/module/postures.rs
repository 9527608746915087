//! The methods that go to NAO's StandInit and Crouch postures (`wakeUp`, `rest`), each a
//! stiffness task and a posture task run one after the other; the postures' joint tables are
//! ALRobotPosture's library (`naobroker_posture::library`), one table per posture.

use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{CallError, ModuleContext};
use naobroker_posture::library::{Posture, CROUCH, STAND_INIT};

use super::client::Client;
use super::ALMotion;

/// The joints of `posture`'s table the robot has and their angles, one joint per motor
/// (the table names RHipYawPitch beside LHipYawPitch, whose motor it shares).
fn table(client: &Client, posture: &Posture) -> Result<(Vec<usize>, Vec<f64>), CallError> {
    let (joints, targets) = client.posture(posture.joints)?;
    let drives = client.body.drivers(&joints);
    Ok(joints
        .into_iter()
        .zip(targets)
        .zip(drives)
        .filter(|(_, drives)| *drives)
        .map(|(pair, _)| pair)
        .unzip())
}

pub(super) fn wake_up(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> impl Future<Output = Result<(), CallError>> {
    let client = Rc::clone(&this.client);
    async move {
        let all: Vec<usize> = (0..client.body.joints.len()).collect();
        let ones = vec![1.0; all.len()];
        client.clone().run("wakeUp", client.stiffness_tracks(&all, &ones, 0.5)).await?;
        let (joints, targets) = table(&client, &STAND_INIT)?;
        let completed = client.clone().run("wakeUp", client.with_speed(&joints, &targets, 0.3)).await?;
        client.awake.set(completed);
        Ok(())
    }
}

pub(super) fn rest(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> impl Future<Output = Result<(), CallError>> {
    let client = Rc::clone(&this.client);
    let leaving = super::whole_body::leave(this);
    async move {
        if let Some(leaving) = leaving? {
            leaving.await?;
        }
        let (joints, targets) = table(&client, &CROUCH)?;
        client.clone().run("rest", client.with_speed(&joints, &targets, 0.3)).await?;
        let all: Vec<usize> = (0..client.body.joints.len()).collect();
        let zeros = vec![0.0; all.len()];
        client.clone().run("rest", client.stiffness_tracks(&all, &zeros, 0.5)).await?;
        client.awake.set(false);
        Ok(())
    }
}

pub(super) fn robot_is_wake_up(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<bool, CallError> {
    Ok(this.client.awake.get())
}
