//! Subscriptions and event delivery: the broker side of the one event path (`events.rs`).

use std::cell::Cell;
use std::rc::Rc;

use bytes::Bytes;
use naobroker_protocol::{excerpt, Value};
use tokio::sync::mpsc;

use super::adapter::{Connection, Outbound};
use super::clients::ClientState;
use super::events::Target;
use super::router::{Location, ModuleEntry, Router};
use super::{bump, Broker};
use crate::error::CallError;
use crate::event::{Event, EventStream};
use crate::hashing::KeyedMap;
use crate::identity::{Caller, ClientId};
use crate::invoke::{Invoke, ModuleHandle};

/// One event's bytes for the connections whose wire shares an encoding, made once per
/// publish (an event with a `lost` count of its own is encoded for its subscriber).
struct SharedEncodings<'a> {
    name: &'a str,
    value: &'a Value,
    by_wire: Vec<(&'static str, Option<Bytes>)>,
}

impl SharedEncodings<'_> {
    fn event_for(&mut self, connection: &dyn Connection, lost: u64) -> Option<Bytes> {
        let (name, value) = (self.name, self.value);
        let wire = connection.shared_encoding().filter(|_| lost == 0);
        let Some(wire) = wire else { return connection.encode(Outbound::Event { name, value, lost }) };
        if let Some((_, bytes)) = self.by_wire.iter().find(|(shared, _)| *shared == wire) {
            return bytes.clone();
        }
        let bytes = connection.encode(Outbound::Event { name, value, lost });
        self.by_wire.push((wire, bytes.clone()));
        bytes
    }
}

/// What one publish does beyond the broker's state: bytes to send, callbacks to run.
#[derive(Default)]
struct Deliveries {
    sends: Vec<(ClientId, Bytes)>,
    local_callbacks: Vec<(ModuleHandle, Invoke, Rc<Cell<u32>>)>,
    closed_streams: bool,
}

/// The bytes of `message` for `client` when its event window has room (`Some(true)`),
/// a drop counted when it has none (`Some(false)`), `None` for a client gone.
fn within_window(
    clients: &mut KeyedMap<ClientId, ClientState>,
    client: &ClientId,
    window: u32,
    encode: impl FnOnce(&dyn Connection) -> Option<Bytes>,
    deliveries: &mut Deliveries,
) -> Option<bool> {
    let known = clients.get_mut(client)?;
    if known.unacked >= window {
        known.events_dropped += 1;
        if known.events_dropped.is_power_of_two() {
            // 1, 2, 4, 8...: a subscriber that stays behind is not logged at every event.
            let dropped = known.events_dropped;
            tracing::warn!(%client, name = %known.name, window, dropped, "events dropped: window full");
        }
        return Some(false);
    }
    let payload = encode(known.connection.as_ref())?;
    known.unacked += 1;
    deliveries.sends.push((client.clone(), payload));
    Some(true)
}

impl Broker {
    /// Whether anyone (client, callback or in-process stream) listens to `name`.
    pub fn has_subscribers(&self, name: &str) -> bool {
        self.inner.router.borrow().events.has_subscribers(name)
    }

    /// An in-process stream of the events named `name`, held to the event window.
    pub fn subscribe_local(&self, name: &str) -> EventStream {
        let (sender, receiver) = mpsc::channel(self.inner.limits.event_window as usize);
        self.inner.router.borrow_mut().events.add_stream(name, sender);
        EventStream::new(receiver)
    }

    /// NAOqi's `subscribeToEvent`: call `module.method(event, value, message)` on each raise.
    /// True when new, false when it replaced the module's previous callback for `event`.
    pub fn subscribe_callback(
        &self,
        caller: &Caller,
        event: &str,
        module: &str,
        method: &str,
        message: Value,
    ) -> Result<bool, CallError> {
        let limits = &self.inner.limits;
        limits.check_name("event", event)?;
        self.may_act_for(caller, module)?;
        let (mut router, clients) = (self.inner.router.borrow_mut(), self.inner.clients.borrow());
        let Router { modules, events, .. } = &mut *router;
        let entry = modules.get(module).expect("checked by may_act_for");
        if !entry.methods.iter().any(|m| m.name == method) {
            return Err(CallError::not_found(format!(
                "module {module} has no method named {}",
                excerpt(method)
            )));
        }
        let owner = match &entry.location {
            Location::Remote(client) => clients.connected.get(client),
            Location::Local(_) => None,
        };
        if owner.is_some_and(|owner| owner.subscriptions(events) >= limits.max_subscriptions) {
            return Err(CallError::refused(format!(
                "{module}'s client already holds max_subscriptions ({})",
                limits.max_subscriptions
            )));
        }
        Ok(events.add_callback(event, module, method, message))
    }

    /// NAOqi's `unsubscribeToEvent(event, module)`.
    pub fn unsubscribe_callback(&self, caller: &Caller, event: &str, module: &str) -> Result<(), CallError> {
        self.may_act_for(caller, module)?;
        if !self.inner.router.borrow_mut().events.remove_callback(event, module) {
            return Err(CallError::not_found(format!("{module} is not subscribed to {}", excerpt(event))));
        }
        Ok(())
    }

    /// Modules with a callback on `event`.
    pub fn callback_subscribers(&self, event: &str) -> Vec<String> {
        self.inner.router.borrow().events.callback_modules(event)
    }

    /// Deliver an event to every subscriber, each held to the event window.
    pub fn publish(&self, name: &str, value: &Value) {
        self.trace_event(name);
        let window = self.inner.limits.event_window;
        let mut deliveries = Deliveries::default();
        let mut encodings = SharedEncodings { name, value, by_wire: Vec::new() };
        let (mut sent, mut dropped) = (0u64, 0u64);
        {
            let (mut router, mut clients) = (self.inner.router.borrow_mut(), self.inner.clients.borrow_mut());
            let Router { events, modules, .. } = &mut *router;
            let clients = &mut clients.connected;
            let Some(subscribers) = events.subscribers_mut(name) else { return };
            for subscriber in subscribers.iter_mut() {
                let lost = subscriber.lost;
                let delivered = match &subscriber.target {
                    Target::Client(client) => {
                        let encode = |connection: &dyn Connection| encodings.event_for(connection, lost);
                        within_window(clients, client, window, encode, &mut deliveries)
                    }
                    Target::Callback { module, method, message, in_flight } => {
                        let callback =
                            Outbound::Callback { module, method, event: name, value, message, lost };
                        match modules.get(module.as_str()) {
                            Some(ModuleEntry { location: Location::Remote(client), .. }) => {
                                let encode = |connection: &dyn Connection| connection.encode(callback);
                                within_window(clients, client, window, encode, &mut deliveries)
                            }
                            Some(ModuleEntry { location: Location::Local(actor), .. }) => {
                                local_callback(actor, callback, in_flight, window, &mut deliveries)
                            }
                            None => None,
                        }
                    }
                    Target::Stream(stream) => to_stream(stream, name, value, lost, &mut deliveries),
                };
                match delivered {
                    Some(true) => {
                        subscriber.lost = 0;
                        sent += 1;
                    }
                    Some(false) => {
                        subscriber.lost += 1;
                        dropped += 1;
                    }
                    None => {}
                }
            }
            if deliveries.closed_streams {
                events.prune(name);
            }
        }
        let counters = &self.inner.counters;
        counters.events_sent.set(counters.events_sent.get() + sent);
        counters.events_dropped.set(counters.events_dropped.get() + dropped);
        for (client, payload) in deliveries.sends {
            self.send_bytes(&client, payload);
        }
        // Each callback on a task of its own: the raiser's call ends first, and a module's
        // callback never runs inside the call that raised the event.
        for (actor, invoke, in_flight) in deliveries.local_callbacks {
            let broker = self.downgrade();
            actix_rt::spawn(async move {
                let result = actor.invoke(invoke).into_future().await;
                in_flight.set(in_flight.get() - 1);
                if let (Err(error), Some(broker)) = (result, broker.upgrade()) {
                    bump(&broker.inner.counters.call_errors);
                    tracing::debug!(%error, "event callback failed");
                }
            });
        }
    }

    pub(super) fn subscribe_client(&self, client: &ClientId, event: &str) -> Result<(), CallError> {
        let limits = &self.inner.limits;
        limits.check_name("event", event)?;
        let (mut router, mut clients) = (self.inner.router.borrow_mut(), self.inner.clients.borrow_mut());
        let events = &mut router.events;
        let Some(known) = clients.connected.get_mut(client) else { return Ok(()) };
        if !known.events.contains(event) && known.subscriptions(events) >= limits.max_subscriptions {
            return Err(CallError::refused(format!(
                "this client already holds max_subscriptions ({})",
                limits.max_subscriptions
            )));
        }
        known.events.insert(event.to_owned());
        events.add_client(event, client);
        Ok(())
    }

    /// Stop `client`'s stream of `event`; answers whether it had one.
    pub(super) fn unsubscribe_client(&self, client: &ClientId, event: &str) -> bool {
        if let Some(known) = self.inner.clients.borrow_mut().connected.get_mut(client) {
            known.events.remove(event);
        }
        self.inner.router.borrow_mut().events.remove_client(event, client)
    }
}

/// An in-process module's callback, within its own window of callbacks under way.
fn local_callback(
    actor: &ModuleHandle,
    callback: Outbound<'_>,
    in_flight: &Rc<Cell<u32>>,
    window: u32,
    deliveries: &mut Deliveries,
) -> Option<bool> {
    let Outbound::Callback { method, event, value, message, lost, .. } = callback else { return None };
    // The subscription checked the method: a module in this process keeps its methods.
    let method = actor.resolve(method)?;
    if in_flight.get() >= window {
        return Some(false);
    }
    in_flight.set(in_flight.get() + 1);
    let args = vec![event.into(), value.clone(), message.clone()];
    let invoke = Invoke { method, args, post: false, caller: Caller::Broker, lost };
    deliveries.local_callbacks.push((Rc::clone(actor), invoke, Rc::clone(in_flight)));
    Some(true)
}

/// An in-process stream: full drops the event, closed prunes the stream.
fn to_stream(
    stream: &mpsc::Sender<Event>,
    name: &str,
    value: &Value,
    lost: u64,
    deliveries: &mut Deliveries,
) -> Option<bool> {
    match stream.try_send(Event { name: name.to_owned(), value: value.clone(), lost }) {
        Ok(()) => Some(true),
        Err(mpsc::error::TrySendError::Full(_)) => Some(false),
        Err(mpsc::error::TrySendError::Closed(_)) => {
            deliveries.closed_streams = true;
            None
        }
    }
}
