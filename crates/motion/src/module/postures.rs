//! NAO's StandInit and crouch postures and the methods that go to them (`wakeUp`, `rest`),
//! each a stiffness task and a posture task run one after the other.

use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{CallError, ModuleContext};

use super::ALMotion;

/// NAO's StandInit posture (radians), used by `wakeUp`.
const STAND_INIT: &[(&str, f64)] = &[
    ("HeadYaw", 0.0),
    ("HeadPitch", 0.0),
    ("LShoulderPitch", 1.40),
    ("LShoulderRoll", 0.30),
    ("LElbowYaw", -1.39),
    ("LElbowRoll", -1.00),
    ("LWristYaw", 0.0),
    ("LHand", 0.25),
    ("LHipYawPitch", 0.0),
    ("LHipRoll", 0.0),
    ("LHipPitch", -0.45),
    ("LKneePitch", 0.70),
    ("LAnklePitch", -0.35),
    ("LAnkleRoll", 0.0),
    ("RHipRoll", 0.0),
    ("RHipPitch", -0.45),
    ("RKneePitch", 0.70),
    ("RAnklePitch", -0.35),
    ("RAnkleRoll", 0.0),
    ("RShoulderPitch", 1.40),
    ("RShoulderRoll", -0.30),
    ("RElbowYaw", 1.39),
    ("RElbowRoll", 1.00),
    ("RWristYaw", 0.0),
    ("RHand", 0.25),
];

/// NAO's crouch, used by `rest` before stiffness goes off.
const CROUCH: &[(&str, f64)] = &[
    ("HeadYaw", 0.0),
    ("HeadPitch", 0.0),
    ("LShoulderPitch", 1.50),
    ("LShoulderRoll", 0.15),
    ("LElbowYaw", -1.20),
    ("LElbowRoll", -0.50),
    ("LWristYaw", 0.0),
    ("LHand", 0.25),
    ("LHipYawPitch", 0.0),
    ("LHipRoll", 0.0),
    ("LHipPitch", -0.87),
    ("LKneePitch", 2.09),
    ("LAnklePitch", -1.18),
    ("LAnkleRoll", 0.0),
    ("RHipRoll", 0.0),
    ("RHipPitch", -0.87),
    ("RKneePitch", 2.09),
    ("RAnklePitch", -1.18),
    ("RAnkleRoll", 0.0),
    ("RShoulderPitch", 1.50),
    ("RShoulderRoll", -0.15),
    ("RElbowYaw", 1.20),
    ("RElbowRoll", 0.50),
    ("RWristYaw", 0.0),
    ("RHand", 0.25),
];

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
        let (joints, targets) = client.posture(STAND_INIT)?;
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
    async move {
        let (joints, targets) = client.posture(CROUCH)?;
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
