//! ALMotion's methods over its reflexes: smart stiffness, the fall manager, the arms'
//! collision protection and the walk's foot contact protection switched on and off, and
//! asked about.

use naobroker_framework::{CallError, Methods, ModuleContext, Value};
use naobroker_protocol::value_excerpt;

use super::ALMotion;
use crate::self_collision::Level;

/// Add the reflexes' methods to ALMotion's table.
pub(super) fn add_to(m: &mut Methods<ALMotion>) {
    m.add(
        "setSmartStiffnessEnabled",
        "Smart stiffness: lower the stiffness of idle, unloaded joints (on by default).",
        set_smart_stiffness_enabled,
    )
    .add("getSmartStiffnessEnabled", "Whether smart stiffness is on.", get_smart_stiffness_enabled)
    .add(
        "setFallManagerEnabled",
        "Fall manager (on by default): past the tilt threshold, kill the tasks, protective posture, \
         stiffness off; events robotIsFalling, ALMotion/RobotIsFalling, and robotHasFallen once \
         the body is at rest.",
        set_fall_manager_enabled,
    )
    .add("getFallManagerEnabled", "Whether the fall manager is on.", get_fall_manager_enabled)
    .add(
        "setCollisionProtectionEnabled",
        "setCollisionProtectionEnabled(chainName, enable): keep LArm, RArm or Arms off the torso, \
         the head and the other arm (on by default). Returns true.",
        set_collision_protection_enabled,
    )
    .add(
        "getCollisionProtectionEnabled",
        "getCollisionProtectionEnabled(chainName): whether LArm, RArm or both Arms are protected.",
        get_collision_protection_enabled,
    )
    .add(
        "setExternalCollisionProtectionEnabled",
        "setExternalCollisionProtectionEnabled(name, enable): \"Move\" stops a forward walk when a sonar \
         sees an obstacle within 0.4 m; \"LArm\", \"RArm\", \"Arms\", \"All\" (off by default).",
        set_external_collision_protection_enabled,
    )
    .add(
        "getExternalCollisionProtectionEnabled",
        "getExternalCollisionProtectionEnabled(name): whether it is on for Move, LArm, RArm, Arms or All.",
        get_external_collision_protection_enabled,
    )
    .add(
        "isCollision",
        "isCollision(chainName): \"none\", \"near\" or \"collision\": how close LArm, RArm or the \
         nearer of the Arms is to the body or the other arm, at the pose ALMotion commands.",
        is_collision,
    )
    .add(
        "setMotionConfig",
        "setMotionConfig([[\"ENABLE_FOOT_CONTACT_PROTECTION\", enable]]): stop the walk when the feet \
         leave the ground (on by default).",
        set_motion_config,
    );
}

/// NAOqi's one motion config key that concerns this ALMotion.
const FOOT_CONTACT_PROTECTION: &str = "ENABLE_FOOT_CONTACT_PROTECTION";

fn set_motion_config(this: &mut ALMotion, _: &ModuleContext, (config,): (Value,)) -> Result<(), CallError> {
    let bad = |what: &Value| {
        CallError::bad_argument(format!(
            "setMotionConfig: expected [[\"{FOOT_CONTACT_PROTECTION}\", true|false], ...], got {}",
            value_excerpt(what)
        ))
    };
    let pairs = config.as_array().ok_or_else(|| bad(&config))?;
    let mut settings = Vec::with_capacity(pairs.len());
    for pair in pairs {
        match pair.as_array().map(Vec::as_slice) {
            Some([key, value]) if key.as_str() == Some(FOOT_CONTACT_PROTECTION) => {
                settings.push(value.as_bool().ok_or_else(|| bad(pair))?);
            }
            _ => return Err(bad(pair)),
        }
    }
    // Checked whole before anything is set: a config with a bad entry changes nothing.
    for on in settings {
        this.client.shared.switches.set_foot_contact_protection(on);
    }
    Ok(())
}

fn set_smart_stiffness_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (on,): (bool,),
) -> Result<(), CallError> {
    this.client.shared.switches.set_smart_stiffness(on);
    Ok(())
}

fn get_smart_stiffness_enabled(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<bool, CallError> {
    Ok(this.client.shared.switches.smart_stiffness())
}

fn set_fall_manager_enabled(this: &mut ALMotion, _: &ModuleContext, (on,): (bool,)) -> Result<(), CallError> {
    Ok(this.client.shared.switches.set_fall_manager(on)?)
}

fn get_fall_manager_enabled(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<bool, CallError> {
    Ok(this.client.shared.switches.fall_manager())
}

/// NAOqi answers true.
fn set_collision_protection_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain, on): (String, bool),
) -> Result<bool, CallError> {
    this.client.shared.switches.set_collision_protection(&chain, on)?;
    Ok(true)
}

fn get_collision_protection_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain,): (String,),
) -> Result<bool, CallError> {
    Ok(this.client.shared.switches.chain_protected(&chain)?)
}

/// The level of the arm (or the worse of both arms) the chain names, as the last motion
/// cycle left it.
fn is_collision(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain,): (String,),
) -> Result<&'static str, CallError> {
    let shared = &this.client.shared;
    let arms = shared.switches.protectable_arms(&chain)?;
    Ok(arms.iter().map(|&arm| shared.collision_levels.get(arm)).max().unwrap_or(Level::None).name())
}

fn set_external_collision_protection_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, on): (String, bool),
) -> Result<(), CallError> {
    Ok(this.client.shared.switches.set_external_protection(&name, on)?)
}

fn get_external_collision_protection_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<bool, CallError> {
    Ok(this.client.shared.switches.external_protected(&name)?)
}
