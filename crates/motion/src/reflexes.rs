//! ALMotion's reflex switches (smart stiffness, fall manager, collision protection, the
//! walk's foot contact protection). A
//! call sets the switch at once, so a query right after answers what the call set; the
//! motion thread reads the switches at the start of every cycle. The methods that set them
//! are in `module/reflex_methods.rs`.

use std::sync::atomic::{AtomicBool, Ordering};

use naobroker_framework::CallError;

use crate::fall::ANGLE_KEYS;
use crate::self_collision::Arm;

/// A reflex that cannot be switched as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwitchError {
    #[error("the fall manager reads {} and {}, which this robot does not have", ANGLE_KEYS[0], ANGLE_KEYS[1])]
    NoInertialUnit,
    #[error("collision protection is per arm: \"LArm\", \"RArm\" or \"Arms\", got {0:?}")]
    UnknownChain(String),
    #[error(
        "external collision protection is for \"Move\", \"Arms\", \"LArm\", \"RArm\" or \"All\", got {0:?}"
    )]
    UnknownExternal(String),
    /// The arm's chain name.
    #[error("this robot has no {0} (its five joints and collision shapes) to protect")]
    NoArm(&'static str),
}

impl From<SwitchError> for CallError {
    fn from(error: SwitchError) -> CallError {
        match error {
            SwitchError::UnknownChain(_) | SwitchError::UnknownExternal(_) => {
                CallError::bad_argument(error.to_string())
            }
            SwitchError::NoInertialUnit | SwitchError::NoArm(_) => CallError::refused(error.to_string()),
        }
    }
}

/// Shared by the API (writes) and the motion thread (reads): atomics only.
#[derive(Debug)]
pub struct Switches {
    smart_stiffness: AtomicBool,
    fall_manager: AtomicBool,
    collision: [AtomicBool; 2],
    /// The walk stops when the feet leave the ground (NAOqi's ENABLE_FOOT_CONTACT_PROTECTION).
    foot_contact: AtomicBool,
    /// External collision protection, per [`External`].
    external: [AtomicBool; 3],
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
            foot_contact: AtomicBool::new(true),
            external: Default::default(),
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

    pub fn foot_contact_protection(&self) -> bool {
        self.foot_contact.load(Ordering::Acquire)
    }

    pub fn set_foot_contact_protection(&self, on: bool) {
        self.foot_contact.store(on, Ordering::Release);
    }

    pub fn set_smart_stiffness(&self, on: bool) {
        self.smart_stiffness.store(on, Ordering::Release);
    }

    /// Refused on: the robot has no inertial unit.
    pub fn set_fall_manager(&self, on: bool) -> Result<(), SwitchError> {
        if on && !self.fall_available {
            return Err(SwitchError::NoInertialUnit);
        }
        self.fall_manager.store(on, Ordering::Release);
        Ok(())
    }

    /// Protect the arms of `chain` (`LArm`, `RArm` or `Arms`), or stop protecting them.
    /// Refused on for an arm the robot does not have.
    pub fn set_collision_protection(&self, chain: &str, on: bool) -> Result<(), SwitchError> {
        let arms = arms_of(chain)?;
        if let Some(missing) = arms.iter().find(|arm| on && !self.arms_available[arm.index()]) {
            return Err(SwitchError::NoArm(missing.chain()));
        }
        for arm in arms {
            self.collision[arm.index()].store(on, Ordering::Release);
        }
        Ok(())
    }

    /// The arms of `chain` (`LArm`, `RArm` or `Arms`), refused when the robot has none of them.
    pub fn protectable_arms(&self, chain: &str) -> Result<&'static [Arm], SwitchError> {
        let arms = arms_of(chain)?;
        match arms.iter().find(|arm| !self.arms_available[arm.index()]) {
            Some(missing) => Err(SwitchError::NoArm(missing.chain())),
            None => Ok(arms),
        }
    }

    pub fn external_protection(&self, what: External) -> bool {
        self.external[what as usize].load(Ordering::Acquire)
    }

    /// External collision protection on or off for `name`: "Move", "LArm", "RArm", "Arms"
    /// (both arms) or "All".
    pub fn set_external_protection(&self, name: &str, on: bool) -> Result<(), SwitchError> {
        for &what in externals_of(name)? {
            self.external[what as usize].store(on, Ordering::Release);
        }
        Ok(())
    }

    /// Whether external collision protection is on for everything `name` stands for.
    pub fn external_protected(&self, name: &str) -> Result<bool, SwitchError> {
        Ok(externals_of(name)?.iter().all(|&what| self.external_protection(what)))
    }

    /// Whether every arm of `chain` is protected.
    pub fn chain_protected(&self, chain: &str) -> Result<bool, SwitchError> {
        Ok(arms_of(chain)?.iter().all(|&arm| self.collision_protection(arm)))
    }
}

/// What external collision protection protects: the walk (against what the sonars see), each
/// arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum External {
    Move,
    LArm,
    RArm,
}

/// What a name of `setExternalCollisionProtectionEnabled` stands for.
fn externals_of(name: &str) -> Result<&'static [External], SwitchError> {
    const ALL: [External; 3] = [External::Move, External::LArm, External::RArm];
    match name {
        "Move" => Ok(&ALL[..1]),
        "LArm" => Ok(&ALL[1..2]),
        "RArm" => Ok(&ALL[2..]),
        "Arms" => Ok(&ALL[1..]),
        "All" => Ok(&ALL),
        other => Err(SwitchError::UnknownExternal(other.to_owned())),
    }
}

/// The arms a chain name stands for.
fn arms_of(chain: &str) -> Result<&'static [Arm], SwitchError> {
    match chain {
        "LArm" => Ok(&Arm::BOTH[..1]),
        "RArm" => Ok(&Arm::BOTH[1..]),
        "Arms" => Ok(&Arm::BOTH),
        other => Err(SwitchError::UnknownChain(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_answers_what_the_last_call_set() {
        let switches = Switches::new(true, true, [true, true]);
        assert!(switches.smart_stiffness() && switches.fall_manager());
        switches.set_smart_stiffness(false);
        assert!(!switches.smart_stiffness());
        switches.set_fall_manager(false).unwrap();
        assert!(!switches.fall_manager());
        assert!(switches.chain_protected("Arms").unwrap());
        switches.set_collision_protection("LArm", false).unwrap();
        assert!(!switches.chain_protected("LArm").unwrap());
        assert!(switches.chain_protected("RArm").unwrap());
        assert!(!switches.chain_protected("Arms").unwrap(), "Arms: both protected");
        switches.set_collision_protection("Arms", true).unwrap();
        assert!(switches.chain_protected("LArm").unwrap());
    }

    #[test]
    fn what_the_robot_lacks_cannot_be_switched_on() {
        let switches = Switches::new(false, true, [true, false]);
        assert!(!switches.fall_manager(), "no inertial unit: off whatever the configuration says");
        let error = switches.set_fall_manager(true).unwrap_err().to_string();
        assert!(error.contains("InertialSensor/AngleX"), "{error}");
        switches.set_fall_manager(false).unwrap();
        assert!(!switches.chain_protected("RArm").unwrap());
        let error = switches.set_collision_protection("Arms", true).unwrap_err().to_string();
        assert!(error.contains("no RArm"), "{error}");
        switches.set_collision_protection("RArm", false).unwrap();
        let error = switches.chain_protected("Head").unwrap_err().to_string();
        assert!(error.contains("\"LArm\", \"RArm\" or \"Arms\", got \"Head\""), "{error}");
    }
}
