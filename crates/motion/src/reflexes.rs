//! ALMotion's reflex switches (smart stiffness, fall manager, collision protection) and
//! their methods. A call sets the switch at once, so a query right after answers what the
//! call set; the motion thread reads the switches at the start of every cycle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use naobroker_framework::{CallError, Methods};

use crate::collision::Arm;
use crate::fall::ANGLE_KEYS;
use crate::runner::MotionShared;
use crate::ALMotion;

/// Shared by the API (writes) and the motion thread (reads): atomics only.
#[derive(Debug)]
pub struct Switches {
    smart_stiffness: AtomicBool,
    fall_manager: AtomicBool,
    collision: [AtomicBool; 2],
    /// The robot has the inertial unit's angles the fall manager reads.
    fall_available: bool,
    /// The robot has each arm's joints.
    arms_available: [bool; 2],
}

impl Switches {
    /// NAOqi's defaults: every reflex on, where the robot has what it needs.
    pub fn new(fall_available: bool, fall_enabled: bool, arms_available: [bool; 2]) -> Switches {
        Switches {
            smart_stiffness: AtomicBool::new(true),
            fall_manager: AtomicBool::new(fall_available && fall_enabled),
            collision: arms_available.map(AtomicBool::new),
            fall_available,
            arms_available,
        }
    }

    pub fn smart_stiffness(&self) -> bool {
        self.smart_stiffness.load(Ordering::Acquire)
    }

    pub fn fall_manager(&self) -> bool {
        self.fall_manager.load(Ordering::Acquire)
    }

    pub fn fall_available(&self) -> bool {
        self.fall_available
    }

    pub fn collision_protection(&self, arm: Arm) -> bool {
        self.collision[arm.index()].load(Ordering::Acquire)
    }
}

/// Where the methods find the switches (the module's fields are private to module.rs).
pub(crate) type SharedOf = fn(&ALMotion) -> &Arc<MotionShared>;

pub(crate) fn methods(m: &mut Methods<ALMotion>, shared: SharedOf) {
    m.add(
        "setSmartStiffnessEnabled",
        "Smart stiffness: lower the stiffness of idle, unloaded joints (on by default).",
        move |this, _, (on,): (bool,)| {
            set_smart_stiffness(&shared(this).switches, on);
            Ok(())
        },
    )
    .add("getSmartStiffnessEnabled", "Whether smart stiffness is on.", move |this, _, ()| {
        Ok(shared(this).switches.smart_stiffness())
    })
    .add(
        "setFallManagerEnabled",
        "Fall manager (on by default): past the tilt threshold, kill the tasks, protective posture, \
         stiffness off; events robotIsFalling, ALMotion/RobotIsFalling, robotHasFallen.",
        move |this, _, (on,): (bool,)| set_fall_manager(&shared(this).switches, on),
    )
    .add("getFallManagerEnabled", "Whether the fall manager is on.", move |this, _, ()| {
        Ok(shared(this).switches.fall_manager())
    })
    .add(
        "setCollisionProtectionEnabled",
        "setCollisionProtectionEnabled(chainName, enable): keep LArm, RArm or Arms out of the torso \
         and legs (on by default). Returns true.",
        move |this, _, (chain, on): (String, bool)| {
            set_collision_protection(&shared(this).switches, &chain, on)
        },
    )
    .add(
        "getCollisionProtectionEnabled",
        "getCollisionProtectionEnabled(chainName): whether LArm, RArm or both Arms are protected.",
        move |this, _, (chain,): (String,)| collision_protection(&shared(this).switches, &chain),
    );
}

fn set_smart_stiffness(switches: &Switches, on: bool) {
    switches.smart_stiffness.store(on, Ordering::Release);
}

fn set_fall_manager(switches: &Switches, on: bool) -> Result<(), CallError> {
    if on && !switches.fall_available {
        return Err(CallError::new(format!(
            "the fall manager reads {} and {}, which this robot does not have",
            ANGLE_KEYS[0], ANGLE_KEYS[1]
        )));
    }
    switches.fall_manager.store(on, Ordering::Release);
    Ok(())
}

/// The arms a chain name stands for.
fn arms_of(chain: &str) -> Result<&'static [Arm], CallError> {
    match chain {
        "LArm" => Ok(&Arm::BOTH[..1]),
        "RArm" => Ok(&Arm::BOTH[1..]),
        "Arms" => Ok(&Arm::BOTH),
        other => Err(CallError::new(format!(
            "collision protection is per arm: \"LArm\", \"RArm\" or \"Arms\", got {other:?}"
        ))),
    }
}

fn set_collision_protection(switches: &Switches, chain: &str, on: bool) -> Result<bool, CallError> {
    let arms = arms_of(chain)?;
    if let Some(missing) = arms.iter().find(|arm| on && !switches.arms_available[arm.index()]) {
        return Err(CallError::new(format!(
            "this robot has no {} (ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll) to protect",
            missing.chain()
        )));
    }
    for arm in arms {
        switches.collision[arm.index()].store(on, Ordering::Release);
    }
    Ok(true)
}

fn collision_protection(switches: &Switches, chain: &str) -> Result<bool, CallError> {
    Ok(arms_of(chain)?.iter().all(|&arm| switches.collision_protection(arm)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_answers_what_the_last_call_set() {
        let switches = Switches::new(true, true, [true, true]);
        assert!(switches.smart_stiffness() && switches.fall_manager());
        set_smart_stiffness(&switches, false);
        assert!(!switches.smart_stiffness());
        set_fall_manager(&switches, false).unwrap();
        assert!(!switches.fall_manager());
        assert!(collision_protection(&switches, "Arms").unwrap());
        assert!(set_collision_protection(&switches, "LArm", false).unwrap());
        assert!(!collision_protection(&switches, "LArm").unwrap());
        assert!(collision_protection(&switches, "RArm").unwrap());
        assert!(!collision_protection(&switches, "Arms").unwrap(), "Arms: both protected");
        set_collision_protection(&switches, "Arms", true).unwrap();
        assert!(collision_protection(&switches, "LArm").unwrap());
    }

    #[test]
    fn what_the_robot_lacks_cannot_be_switched_on() {
        let switches = Switches::new(false, true, [true, false]);
        assert!(!switches.fall_manager(), "no inertial unit: off whatever the configuration says");
        let error = set_fall_manager(&switches, true).unwrap_err().message;
        assert!(error.contains("InertialSensor/AngleX"), "{error}");
        set_fall_manager(&switches, false).unwrap();
        assert!(!collision_protection(&switches, "RArm").unwrap());
        let error = set_collision_protection(&switches, "Arms", true).unwrap_err().message;
        assert!(error.contains("no RArm"), "{error}");
        set_collision_protection(&switches, "RArm", false).unwrap();
        let error = collision_protection(&switches, "Head").unwrap_err().message;
        assert!(error.contains("\"LArm\", \"RArm\" or \"Arms\", got \"Head\""), "{error}");
    }
}
