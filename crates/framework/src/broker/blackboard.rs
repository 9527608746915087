//! The blackboard in-process code writes to without naming a module or a method: ALMemory
//! registers as its implementation, and the DCM, ALMotion, ALSensors and in-process modules
//! raise events and write keys through the broker, typed.

use std::rc::Rc;

use naobroker_protocol::Value;

use super::Broker;
use crate::error::{CallError, RegistrationError};

/// The module clients reach the blackboard by (NAOqi's name).
pub const MEMORY_MODULE: &str = "ALMemory";

/// What in-process code writes to the blackboard, as the broker's own code: the checks a
/// client's call gets (names and values within the limits, keys reserved by a module) apply.
pub trait Blackboard {
    /// NAOqi's `declareEvent`.
    fn declare_event(&self, name: &str) -> Result<(), CallError>;
    /// NAOqi's `raiseEvent`: store the value and deliver it to every subscriber.
    fn raise_event(&self, name: &str, value: Value) -> Result<(), CallError>;
    /// NAOqi's `insertData`.
    fn insert_data(&self, key: &str, value: Value) -> Result<(), CallError>;
}

impl Broker {
    /// Make `blackboard` the one in-process writes go to (ALMemory, when it is added).
    pub fn set_blackboard(&self, blackboard: Rc<dyn Blackboard>) -> Result<(), RegistrationError> {
        let mut router = self.router().borrow_mut();
        if router.blackboard.is_some() {
            return Err(RegistrationError::BlackboardTaken);
        }
        router.blackboard = Some(blackboard);
        Ok(())
    }

    fn blackboard(&self) -> Result<Rc<dyn Blackboard>, CallError> {
        let blackboard = self.router().borrow().blackboard.clone();
        blackboard.ok_or_else(|| CallError::not_found(format!("no module named {MEMORY_MODULE}")))
    }

    /// Declare event `name` on the blackboard.
    pub fn declare_event(&self, name: &str) -> Result<(), CallError> {
        self.blackboard()?.declare_event(name)
    }

    /// Raise event `name` on the blackboard: stored, and delivered to every subscriber.
    pub fn raise_event(&self, name: &str, value: Value) -> Result<(), CallError> {
        self.blackboard()?.raise_event(name, value)
    }

    /// Write `key` on the blackboard.
    pub fn insert_data(&self, key: &str, value: Value) -> Result<(), CallError> {
        self.blackboard()?.insert_data(key, value)
    }
}
