//! ALMemory's subscriptions NAOqi style: the broker calls `module.method(event, value,
//! message)` on each raise. Only the module's own client (or the broker) may subscribe or
//! unsubscribe it; the broker keeps the subscriptions and delivers the events.

use naobroker_framework::{CallError, Caller, ModuleContext, Value};

use super::events::no_event;
use super::ALMemory;
use crate::store::EntryKind;

impl ALMemory {
    /// Subscribe `callback` (module, method), declaring the event if needed.
    fn subscribe(
        &self,
        caller: &Caller,
        name: &str,
        callback: (&str, &str),
        message: Value,
        kind: EntryKind,
    ) -> Result<bool, CallError> {
        let (module, method) = callback;
        self.broker.subscribe_callback(caller, name, module, method, message)?;
        if !self.events.borrow().entries.contains_key(name) {
            // Past `[memory]`'s limits the event has no key: no subscription to it either.
            if let Err(error) = self.declare(name, kind, caller.client()) {
                let _ = self.broker.unsubscribe_callback(caller, name, module);
                return Err(error);
            }
        }
        Ok(true)
    }

    fn unsubscribe(&self, caller: &Caller, name: &str, module: &str) -> Result<bool, CallError> {
        if !self.events.borrow().entries.contains_key(name) {
            return Err(no_event(name));
        }
        self.broker.unsubscribe_callback(caller, name, module)?;
        Ok(true)
    }
}

pub(super) fn get_subscribers(
    this: &mut ALMemory,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<Vec<String>, CallError> {
    if !this.events.borrow().entries.contains_key(name.as_str()) {
        return Err(no_event(&name));
    }
    Ok(this.broker.callback_subscribers(&name))
}

pub(super) fn subscribe_to_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, module, method): (String, String, String),
) -> Result<bool, CallError> {
    this.subscribe(&context.caller(), &name, (&module, &method), Value::from(""), EntryKind::Event)
}

pub(super) fn subscribe_to_micro_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, module, message, method): (String, String, Value, String),
) -> Result<bool, CallError> {
    this.subscribe(&context.caller(), &name, (&module, &method), message, EntryKind::MicroEvent)
}

pub(super) fn unsubscribe_to_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, module): (String, String),
) -> Result<bool, CallError> {
    this.unsubscribe(&context.caller(), &name, &module)
}

pub(super) fn unsubscribe_to_micro_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, module): (String, String),
) -> Result<bool, CallError> {
    this.unsubscribe(&context.caller(), &name, &module)
}
