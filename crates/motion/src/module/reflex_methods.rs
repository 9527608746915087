//! ALMotion's methods over its reflexes: smart stiffness, the fall manager and the arms'
//! collision protection switched on and off, and asked about.

use naobroker_framework::{CallError, Methods, ModuleContext};

use super::ALMotion;

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
        "setCollisionProtectionEnabled(chainName, enable): keep LArm, RArm or Arms out of the torso \
         and legs (on by default). Returns true.",
        set_collision_protection_enabled,
    )
    .add(
        "getCollisionProtectionEnabled",
        "getCollisionProtectionEnabled(chainName): whether LArm, RArm or both Arms are protected.",
        get_collision_protection_enabled,
    );
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
