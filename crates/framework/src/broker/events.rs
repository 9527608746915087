//! The one event path: who listens to which event, and the window rule every kind of
//! subscriber follows.
//!
//! A subscriber is a remote client's stream, a NAOqi-style callback (a module's method,
//! in the broker or in a client), or an in-process SDK stream. Each may have at most
//! `event_window` events sent and not yet consumed; past that an event is dropped for that
//! subscriber only and counted in its `lost`, which travels with the next event it gets.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use naobroker_protocol::Value;
use tokio::sync::mpsc;

use super::trace::TRACE_EVENT;
use crate::event::Event;
use crate::hashing::KeyedMap;
use crate::identity::ClientId;
use crate::logs;

pub(crate) enum Target {
    /// A remote client's event stream (`Subscribe` on the wire).
    Client(ClientId),
    /// `module.method(event, value, message)`, wherever the module runs.
    Callback { module: String, method: String, message: Value, in_flight: Rc<Cell<u32>> },
    /// An in-process [`EventStream`](crate::EventStream).
    Stream(mpsc::Sender<Event>),
}

pub(crate) struct Subscriber {
    pub(crate) target: Target,
    /// Events dropped for this subscriber since the last one it was sent.
    pub(crate) lost: u64,
}

#[derive(Default)]
pub(crate) struct Registry {
    by_event: KeyedMap<String, Vec<Subscriber>>,
    /// Whether anyone subscribes to the trace: asked at every call's end, kept here so that
    /// the answer costs no lookup.
    traced: bool,
}

impl Registry {
    pub(crate) fn subscribers_mut(&mut self, event: &str) -> Option<&mut Vec<Subscriber>> {
        self.by_event.get_mut(event)
    }

    fn add(&mut self, event: &str, target: Target) {
        self.by_event.entry(event.to_owned()).or_default().push(Subscriber { target, lost: 0 });
        self.note_listeners(event);
    }

    /// Log lines are formatted and handed to the broker, and calls traced, only while someone
    /// subscribes to them.
    fn note_listeners(&mut self, event: &str) {
        if event == logs::LOG_EVENT {
            logs::set_wanted(self.by_event.contains_key(event));
        }
        if event == TRACE_EVENT {
            self.traced = self.by_event.contains_key(event);
        }
    }

    /// Whether anyone subscribes to `ServiceDirectory/Trace`.
    pub(crate) fn traced(&self) -> bool {
        self.traced
    }

    fn remove_where(&mut self, event: &str, matches: impl Fn(&Target) -> bool) -> bool {
        let Some(subscribers) = self.by_event.get_mut(event) else { return false };
        let before = subscribers.len();
        subscribers.retain(|subscriber| !matches(&subscriber.target));
        let removed = subscribers.len() != before;
        if subscribers.is_empty() {
            self.by_event.remove(event);
            self.note_listeners(event);
        }
        removed
    }

    /// A client's stream; false when it already had one for `event`.
    pub(crate) fn add_client(&mut self, event: &str, client: &ClientId) -> bool {
        let exists = self.by_event.get(event).is_some_and(|subscribers| {
            subscribers.iter().any(|s| matches!(&s.target, Target::Client(c) if c == client))
        });
        if !exists {
            self.add(event, Target::Client(client.clone()));
        }
        !exists
    }

    pub(crate) fn remove_client(&mut self, event: &str, client: &ClientId) -> bool {
        self.remove_where(event, |target| matches!(target, Target::Client(c) if c == client))
    }

    /// A module's callback; replaces the module's previous one for `event` (NAOqi keeps one
    /// subscription per module and event). True when it is new.
    pub(crate) fn add_callback(&mut self, event: &str, module: &str, method: &str, message: Value) -> bool {
        let replaced = self.remove_callback(event, module);
        let target = Target::Callback {
            module: module.to_owned(),
            method: method.to_owned(),
            message,
            in_flight: Rc::default(),
        };
        self.add(event, target);
        !replaced
    }

    pub(crate) fn remove_callback(&mut self, event: &str, module: &str) -> bool {
        self.remove_where(event, |target| matches!(target, Target::Callback { module: m, .. } if m == module))
    }

    pub(crate) fn callback_modules(&self, event: &str) -> Vec<String> {
        let subscribers = self.by_event.get(event).map(Vec::as_slice).unwrap_or_default();
        subscribers
            .iter()
            .filter_map(|subscriber| match &subscriber.target {
                Target::Callback { module, .. } => Some(module.clone()),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn add_stream(&mut self, event: &str, sender: mpsc::Sender<Event>) {
        self.add(event, Target::Stream(sender));
    }

    /// Forget every callback of `module`.
    pub(crate) fn remove_module(&mut self, module: &str) {
        let events: Vec<String> = self.by_event.keys().cloned().collect();
        for event in &events {
            self.remove_callback(event, module);
        }
    }

    /// How many callbacks the modules in `modules` hold.
    pub(crate) fn callbacks_of(&self, modules: &HashSet<String>) -> usize {
        let subscribers = self.by_event.values().flatten();
        let of_modules =
            |target: &Target| matches!(target, Target::Callback { module, .. } if modules.contains(module));
        subscribers.filter(|subscriber| of_modules(&subscriber.target)).count()
    }

    pub(crate) fn subscriber_count(&self, event: &str) -> usize {
        self.by_event.get(event).map_or(0, Vec::len)
    }

    pub(crate) fn has_subscribers(&self, event: &str) -> bool {
        self.by_event.get(event).is_some_and(|subscribers| !subscribers.is_empty())
    }

    /// Drop subscribers that can no longer receive (closed in-process streams).
    pub(crate) fn prune(&mut self, event: &str) {
        self.remove_where(event, |target| matches!(target, Target::Stream(sender) if sender.is_closed()));
    }
}
