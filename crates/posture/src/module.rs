//! The ALRobotPosture module: NAOqi's method table over the posture library, the mover
//! and the recogniser.

use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext};

use crate::error::PostureError;
use crate::library::{self, Family, Posture, LIBRARY};
use crate::mover::{Mover, Route, FAMILY_CHANGED, POSTURE_CHANGED, UNKNOWN};

/// The ALRobotPosture module, hosted by the broker beside ALMotion.
pub struct ALRobotPosture {
    mover: Rc<Mover>,
    broker: Broker,
}

impl ALRobotPosture {
    pub fn new(broker: Broker) -> ALRobotPosture {
        // Only this module says what posture the robot is in.
        broker.reserve_keys("ALRobotPosture", [POSTURE_CHANGED, FAMILY_CHANGED]);
        ALRobotPosture { mover: Rc::new(Mover::new(broker.clone())), broker }
    }
}

fn posture_named(name: &str) -> Result<&'static Posture, PostureError> {
    library::find(name).ok_or_else(|| PostureError::UnknownPosture {
        name: naobroker_framework::excerpt(name),
        known: LIBRARY.map(|posture| posture.name).join(", "),
    })
}

/// Checks the call now, so that a bad name or speed fails before anything moves.
fn move_to(
    this: &ALRobotPosture,
    context: &ModuleContext,
    (name, speed): (String, f64),
    route: Route,
) -> Result<impl Future<Output = Result<bool, CallError>>, CallError> {
    let target = posture_named(&name)?;
    if !(speed > 0.0 && speed <= 1.0) {
        return Err(PostureError::Speed(speed).into());
    }
    Ok(Rc::clone(&this.mover).go(context.clone(), target, speed, route))
}

impl Module for ALRobotPosture {
    fn name(&self) -> String {
        "ALRobotPosture".into()
    }

    fn description(&self) -> String {
        "NAOqi's predefined postures (Stand, StandInit, StandZero, Crouch, Sit, SitRelax, LyingBelly, \
         LyingBack): going to them through ALMotion and recognising the current one from the sensors."
            .into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add_async_checked(
            "goToPosture",
            "goToPosture(postureName, maxSpeedFraction): through the safe intermediate postures; blocks; \
             true when the sensors then say the robot is in it.",
            |this, context, args| move_to(this, context, args, Route::Safe),
        )
        .add_async_checked(
            "applyPosture",
            "applyPosture(postureName, maxSpeedFraction): straight to the posture, no intermediate one; \
             blocks; true when reached.",
            |this, context, args| move_to(this, context, args, Route::Direct),
        )
        .add_async(
            "getPosture",
            "The predefined posture the robot is in, from its sensors, or \"Unknown\".",
            |this, context, ()| {
                let (mover, context) = (Rc::clone(&this.mover), context.clone());
                async move {
                    let reading = mover.look(&context).await?;
                    Ok(reading.posture().map_or(UNKNOWN, |posture| posture.name))
                }
            },
        )
        .add_async(
            "getPostureFamily",
            "The posture family the robot is in (Standing, Crouching, Sitting, LyingBelly, LyingBack), or \
             \"Unknown\".",
            |this, context, ()| {
                let (mover, context) = (Rc::clone(&this.mover), context.clone());
                async move {
                    let reading = mover.look(&context).await?;
                    Ok(reading.family().map_or(UNKNOWN, Family::name))
                }
            },
        )
        .add("getPostureList", "The predefined postures' names.", |_, _, ()| {
            Ok(LIBRARY.map(|posture| posture.name).to_vec())
        })
        .add("getPostureFamilyList", "The posture families the robot can be told in.", |_, _, ()| {
            Ok(Family::ALL.map(Family::name).to_vec())
        })
        .add_async("stopMove", "Stops the current goToPosture or applyPosture.", |this, context, ()| {
            let (mover, context) = (Rc::clone(&this.mover), context.clone());
            async move { mover.stop(&context).await }
        })
        .add(
            "setMaxTryNumber",
            "setMaxTryNumber(n): how many times goToPosture tries before answering false (3).",
            |this, _, (tries,): (i32,)| match u32::try_from(tries) {
                Ok(tries) if tries >= 1 => {
                    this.mover.max_tries.set(tries);
                    Ok(())
                }
                _ => Err(PostureError::MaxTries(tries).into()),
            },
        );
    }

    fn started(&mut self, _context: &ModuleContext) {
        for event in [POSTURE_CHANGED, FAMILY_CHANGED] {
            if let Err(error) = self.broker.declare_event(event) {
                tracing::error!(event, %error, "cannot declare a posture event");
            }
        }
    }
}
