//! ALMemory's events and micro-events: the declared ones with their recent values, bounded
//! in bytes in total and per client, and the methods that declare, raise, remove and list
//! them.

use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{encoded_size, excerpt, CallError, ClientId, KeyedMap, ModuleContext, Value};
use tokio::sync::oneshot;

use super::data::sorted_aside;
use super::ALMemory;
use crate::store::{EntryKind, Store};

/// Bytes a kept value costs beside its MessagePack size.
const KEPT_OVERHEAD: usize = 64;

/// One value kept for `getEventHistory`, and whose share of `max_history_bytes` it takes.
struct Kept {
    value: Value,
    bytes: usize,
    raiser: Option<ClientId>,
}

/// A declared event: its kind and its last values (`getEventHistory`).
pub(super) struct EventEntry {
    kind: EntryKind,
    history: VecDeque<Kept>,
}

/// Bytes of every event's history, in total and by the client that raised each value.
#[derive(Default)]
struct HistoryBytes {
    total: usize,
    by_client: KeyedMap<ClientId, usize>,
}

impl HistoryBytes {
    fn add(&mut self, kept: &Kept) {
        self.total += kept.bytes;
        if let Some(client) = &kept.raiser {
            *self.by_client.entry(client.clone()).or_default() += kept.bytes;
        }
    }

    fn release(&mut self, kept: &Kept) {
        self.total -= kept.bytes;
        let Some(client) = &kept.raiser else { return };
        if let Some(mine) = self.by_client.get_mut(client) {
            *mine -= kept.bytes;
            if *mine == 0 {
                self.by_client.remove(client);
            }
        }
    }
}

/// The declared events, and the `getDataOnChange` calls waiting for a key's next write.
#[derive(Default)]
pub(super) struct Events {
    pub(super) entries: KeyedMap<Arc<str>, EventEntry>,
    pub(super) waiters: KeyedMap<String, Vec<oneshot::Sender<Value>>>,
    history_bytes: HistoryBytes,
}

impl ALMemory {
    /// Declare the event (or change its kind) for `writer`; it gets a key holding nil until
    /// raised, refused past `[memory]`'s limits.
    pub(super) fn declare(
        &self,
        name: &str,
        kind: EntryKind,
        writer: Option<&ClientId>,
    ) -> Result<(), CallError> {
        // The DCM's events get their value when it raises them: nothing else creates a
        // key under its prefixes (a subscriber's placeholder would block a preference).
        if self.store.get(name).is_none() && !Store::is_dcm_owned(name) {
            self.store.insert(name, Value::Nil, kind, writer)?;
        }
        let mut events = self.events.borrow_mut();
        let entry = events
            .entries
            .entry(Arc::from(name))
            .or_insert_with(|| EventEntry { kind, history: VecDeque::new() });
        entry.kind = kind;
        Ok(())
    }

    /// Store the value, keep it in the history, and publish it to the subscribers. A
    /// client's value that would take the history past `max_history_bytes`, or past the
    /// client's share of it, is refused before anything is stored.
    pub(super) fn raise(
        &self,
        name: &str,
        value: Value,
        kind: EntryKind,
        raiser: Option<&ClientId>,
    ) -> Result<(), CallError> {
        if !self.events.borrow().entries.contains_key(name) {
            self.declare(name, kind, raiser)?;
        }
        let kept = Kept {
            bytes: encoded_size(&value) + KEPT_OVERHEAD,
            value: value.clone(),
            raiser: raiser.cloned(),
        };
        if self.config.event_history > 0 {
            self.check_history(name, &kept)?;
        }
        self.insert(name, value.clone(), kind, raiser)?;
        if self.config.event_history > 0 {
            let mut events = self.events.borrow_mut();
            let Events { entries, history_bytes, .. } = &mut *events;
            let entry = entries.get_mut(name).expect("declared above");
            history_bytes.add(&kept);
            entry.history.push_back(kept);
            while entry.history.len() > self.config.event_history {
                let dropped = entry.history.pop_front().expect("longer than the history");
                history_bytes.release(&dropped);
            }
        }
        self.broker.publish(name, &value);
        Ok(())
    }

    /// Whether keeping `kept` in `name`'s history (its oldest value dropped when the history
    /// is full) stays within `max_history_bytes` and the raiser's share. The broker's own
    /// raises are counted, never refused.
    fn check_history(&self, name: &str, kept: &Kept) -> Result<(), CallError> {
        let Some(client) = &kept.raiser else { return Ok(()) };
        let events = self.events.borrow();
        let history = &events.entries.get(name).expect("declared").history;
        let dropped = history.front().filter(|_| history.len() >= self.config.event_history);
        let freed = dropped.map_or(0, |oldest| oldest.bytes);
        let freed_mine =
            dropped.filter(|oldest| oldest.raiser.as_ref() == Some(client)).map_or(0, |oldest| oldest.bytes);
        let limit = self.config.max_history_bytes;
        let total = events.history_bytes.total - freed + kept.bytes;
        if total > limit {
            return Err(CallError::refused(format!(
                "the event history would hold {total} bytes, past max_history_bytes ({limit}): \
                 remove events first"
            )));
        }
        let mine = events.history_bytes.by_client.get(client).copied().unwrap_or(0) - freed_mine + kept.bytes;
        let share = self.config.store_limits().share(limit);
        if mine > share {
            return Err(CallError::refused(format!(
                "this client's values in the event history would hold {mine} bytes, past its share of \
                 max_history_bytes ({}% = {share}): remove its events first",
                self.config.client_share_percent
            )));
        }
        Ok(())
    }

    fn remove_declared(&self, name: &str, kind: EntryKind) -> Result<bool, CallError> {
        let mut events = self.events.borrow_mut();
        match events.entries.get(name) {
            Some(entry) if entry.kind == kind => {
                let removed = events.entries.remove(name).expect("found above");
                for kept in &removed.history {
                    events.history_bytes.release(kept);
                }
                drop(events);
                self.store.remove(name)?;
                Ok(true)
            }
            _ => Err(CallError::not_found(format!("no {} named {}", kind.as_str(), excerpt(name)))),
        }
    }

    /// The declared events of one kind, sorted, listed as the keys are (`sorted_aside`):
    /// the broker's thread only copies the names' handles, once the listing's turn came.
    fn event_names(&self, kind: EntryKind) -> impl Future<Output = Result<Value, CallError>> {
        let events = Rc::clone(&self.events);
        sorted_aside(&self.listing, move || {
            let names: Vec<Arc<str>> = events
                .borrow()
                .entries
                .iter()
                .filter(|(_, entry)| entry.kind == kind)
                .map(|(name, _)| Arc::clone(name))
                .collect();
            move || names
        })
    }
}

pub(super) fn declare_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name,): (String,),
) -> Result<(), CallError> {
    let caller = context.caller();
    this.check_write(&caller, &name, &Value::Nil)?;
    this.declare(&name, EntryKind::Event, caller.client())
}

pub(super) fn raise_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, value): (String, Value),
) -> Result<(), CallError> {
    let caller = context.caller();
    this.check_write(&caller, &name, &value)?;
    this.raise(&name, value, EntryKind::Event, caller.client())
}

pub(super) fn raise_micro_event(
    this: &mut ALMemory,
    context: &ModuleContext,
    (name, value): (String, Value),
) -> Result<(), CallError> {
    let caller = context.caller();
    this.check_write(&caller, &name, &value)?;
    this.raise(&name, value, EntryKind::MicroEvent, caller.client())
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
) -> impl Future<Output = Result<Value, CallError>> {
    this.event_names(EntryKind::Event)
}

pub(super) fn get_micro_event_list(
    this: &mut ALMemory,
    _: &ModuleContext,
    (): (),
) -> impl Future<Output = Result<Value, CallError>> {
    this.event_names(EntryKind::MicroEvent)
}

/// The event's last values, oldest first (`[memory] event_history` of them at most).
pub(super) fn get_event_history(
    this: &mut ALMemory,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<Vec<Value>, CallError> {
    let events = this.events.borrow();
    let entry = events.entries.get(name.as_str()).ok_or_else(|| no_event(&name))?;
    Ok(entry.history.iter().map(|kept| kept.value.clone()).collect())
}

pub(super) fn no_event(name: &str) -> CallError {
    CallError::not_found(format!("no event named {}", excerpt(name)))
}
