//! ALMemory's events and micro-events: the declared ones with their recent values, and
//! the methods that declare, raise, remove and list them.

use std::collections::{HashMap, VecDeque};

use naobroker_framework::{excerpt, CallError, ModuleContext, Value};
use tokio::sync::oneshot;

use super::ALMemory;
use crate::store::{EntryKind, Store};

/// A declared event: its kind and its last values (`getEventHistory`).
pub(super) struct EventEntry {
    kind: EntryKind,
    history: VecDeque<Value>,
}

/// The declared events, and the `getDataOnChange` calls waiting for a key's next write.
#[derive(Default)]
pub(super) struct Events {
    pub(super) entries: HashMap<String, EventEntry>,
    pub(super) waiters: HashMap<String, Vec<oneshot::Sender<Value>>>,
}

impl ALMemory {
    /// Declare the event (or change its kind); it gets a key holding nil until raised.
    pub(super) fn declare(&self, name: &str, kind: EntryKind) {
        let mut events = self.events.borrow_mut();
        let entry = events
            .entries
            .entry(name.to_owned())
            .or_insert_with(|| EventEntry { kind, history: VecDeque::new() });
        entry.kind = kind;
        // The DCM's events get their value when it raises them: nothing else creates a
        // key under its prefixes (a subscriber's placeholder would block a preference).
        if self.store.get(name).is_none() && !Store::is_dcm_owned(name) {
            let _ = self.store.insert(name, Value::Nil, kind);
        }
    }

    /// Store the value, keep it in the history, and publish it to the subscribers.
    pub(super) fn raise(&self, name: &str, value: Value, kind: EntryKind) -> Result<(), CallError> {
        if !self.events.borrow().entries.contains_key(name) {
            self.declare(name, kind);
        }
        self.insert(name, value.clone(), kind)?;
        {
            let mut events = self.events.borrow_mut();
            let entry = events.entries.get_mut(name).expect("declared above");
            entry.history.push_back(value.clone());
            while entry.history.len() > self.config.event_history {
                entry.history.pop_front();
            }
        }
        self.broker.publish(name, &value);
        Ok(())
    }

    fn remove_declared(&self, name: &str, kind: EntryKind) -> Result<bool, CallError> {
        let mut events = self.events.borrow_mut();
        match events.entries.get(name) {
            Some(entry) if entry.kind == kind => {
                events.entries.remove(name);
                drop(events);
                self.store.remove(name)?;
                Ok(true)
            }
            _ => Err(CallError::new(format!("no {} named {}", kind.as_str(), excerpt(name)))),
        }
    }

    /// The declared events of one kind, sorted.
    fn event_names(&self, kind: EntryKind) -> Vec<String> {
        let mut names: Vec<String> = self
            .events
            .borrow()
            .entries
            .iter()
            .filter(|(_, entry)| entry.kind == kind)
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

pub(super) fn declare_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name,): (String,),
) -> Result<(), CallError> {
    this.check_write(&context.caller(), &name, &Value::Nil)?;
    this.declare(&name, EntryKind::Event);
    Ok(())
}

pub(super) fn raise_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, value): (String, Value),
) -> Result<(), CallError> {
    this.check_write(&context.caller(), &name, &value)?;
    this.raise(&name, value, EntryKind::Event)
}

pub(super) fn raise_micro_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, value): (String, Value),
) -> Result<(), CallError> {
    this.check_write(&context.caller(), &name, &value)?;
    this.raise(&name, value, EntryKind::MicroEvent)
}

pub(super) fn remove_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name,): (String,),
) -> Result<bool, CallError> {
    this.check_owner(&context.caller(), &name)?;
    this.remove_declared(&name, EntryKind::Event)
}

pub(super) fn remove_micro_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name,): (String,),
) -> Result<bool, CallError> {
    this.check_owner(&context.caller(), &name)?;
    this.remove_declared(&name, EntryKind::MicroEvent)
}

pub(super) fn get_event_list(
    this: &mut ALMemory,
    _: &ModuleContext,
    (): (),
) -> Result<Vec<String>, CallError> {
    Ok(this.event_names(EntryKind::Event))
}

pub(super) fn get_micro_event_list(
    this: &mut ALMemory,
    _: &ModuleContext,
    (): (),
) -> Result<Vec<String>, CallError> {
    Ok(this.event_names(EntryKind::MicroEvent))
}

/// The event's last values, oldest first (`[memory] event_history` of them at most).
pub(super) fn get_event_history(
    this: &mut ALMemory,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<Vec<Value>, CallError> {
    let events = this.events.borrow();
    let entry = events.entries.get(&name).ok_or_else(|| no_event(&name))?;
    Ok(entry.history.iter().cloned().collect())
}

pub(super) fn no_event(name: &str) -> CallError {
    CallError::new(format!("no event named {}", excerpt(name)))
}
