//! Subscriptions and event delivery, the one event path (`events.rs`) across the two halves:
//! the router walks an event's subscribers ([`Router::fan_out`]) and offers each client's to
//! the client side, whose [`EventWindows`] holds each to its event window and encodes it;
//! the broker ([`Broker::publish`]) joins the two and sends what they decided.

use std::cell::{Cell, RefMut};
use std::rc::Rc;

use bytes::Bytes;
use naobroker_protocol::{excerpt, Value};
use tokio::sync::mpsc;

use super::adapter::{Connection, Outbound};
use super::clients::{ClientSide, Clients};
use super::events::Target;
use super::router::{Location, ModuleEntry, Router};
use super::{bump, Broker};
use crate::error::CallError;
use crate::event::{Event, EventStream};
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

/// What the router's walk of one event's subscribers decided: how many were sent and
/// dropped, and the in-process callbacks to run.
#[derive(Default)]
pub(super) struct FanOut {
    sent: u64,
    dropped: u64,
    local_callbacks: Vec<(ModuleHandle, Invoke, Rc<Cell<u32>>)>,
    closed_streams: bool,
}

/// The client side's part of one publish: each client's event window, the event's bytes
/// encoded once per shared wire encoding, and the bytes to send once the walk is over.
pub(super) struct EventWindows<'a> {
    clients: RefMut<'a, Clients>,
    window: u32,
    encodings: SharedEncodings<'a>,
    sends: Vec<(ClientId, Bytes)>,
}

impl EventWindows<'_> {
    /// `message` (an event or a callback) for `client`: encoded and counted when its event
    /// window has room (`Some(true)`), a drop counted when it has none (`Some(false)`),
    /// `None` for a client gone.
    fn offer(&mut self, client: &ClientId, message: Outbound<'_>) -> Option<bool> {
        let window = self.window;
        let known = self.clients.connected.get_mut(client)?;
        if known.unacked >= window {
            known.events_dropped += 1;
            if known.events_dropped.is_power_of_two() {
                // 1, 2, 4, 8...: a subscriber that stays behind is not logged at every event.
                let dropped = known.events_dropped;
                tracing::warn!(%client, name = %known.name, window, dropped, "events dropped: window full");
            }
            return Some(false);
        }
        let connection = known.connection.as_ref();
        let payload = match message {
            Outbound::Event { lost, .. } => self.encodings.event_for(connection, lost),
            message => connection.encode(message),
        }?;
        known.unacked += 1;
        self.sends.push((client.clone(), payload));
        Some(true)
    }
}

impl ClientSide {
    /// The event windows of every client, for one publish of `name`: the client side's cell
    /// is held until [`Self::send_events`] takes them back.
    pub(super) fn event_windows<'a>(&'a self, name: &'a str, value: &'a Value) -> EventWindows<'a> {
        EventWindows {
            clients: self.state.borrow_mut(),
            window: self.limits.event_window,
            encodings: SharedEncodings { name, value, by_wire: Vec::new() },
            sends: Vec::new(),
        }
    }

    /// Send what a publish put in the event windows.
    pub(super) fn send_events(self: &Rc<Self>, windows: EventWindows<'_>) {
        let EventWindows { clients, sends, .. } = windows;
        drop(clients);
        for (client, payload) in sends {
            self.send_bytes(&client, payload);
        }
    }
}

impl Router {
    /// Walk the subscribers of event `name`: a client's stream or a client's module's
    /// callback is offered to the client side (`offer`, which answers as
    /// [`EventWindows::offer`]); an in-process callback or stream is held to its own window
    /// here. `None` when nobody subscribes to `name`.
    pub(super) fn fan_out(
        &mut self,
        name: &str,
        value: &Value,
        window: u32,
        offer: &mut dyn FnMut(&ClientId, Outbound<'_>) -> Option<bool>,
    ) -> Option<FanOut> {
        let mut fan_out = FanOut::default();
        let Router { events, modules, .. } = self;
        let subscribers = events.subscribers_mut(name)?;
        for subscriber in subscribers.iter_mut() {
            let lost = subscriber.lost;
            let delivered = match &subscriber.target {
                Target::Client(client) => offer(client, Outbound::Event { name, value, lost }),
                Target::Callback { module, method, message, in_flight } => {
                    let callback = Outbound::Callback { module, method, event: name, value, message, lost };
                    match modules.get(module.as_str()) {
                        Some(ModuleEntry { location: Location::Remote(client), .. }) => {
                            offer(client, callback)
                        }
                        Some(ModuleEntry { location: Location::Local(actor), .. }) => {
                            local_callback(actor, callback, in_flight, window, &mut fan_out)
                        }
                        None => None,
                    }
                }
                Target::Stream(stream) => to_stream(stream, name, value, lost, &mut fan_out),
            };
            match delivered {
                Some(true) => {
                    subscriber.lost = 0;
                    fan_out.sent += 1;
                }
                Some(false) => {
                    subscriber.lost += 1;
                    fan_out.dropped += 1;
                }
                None => {}
            }
        }
        if fan_out.closed_streams {
            events.prune(name);
        }
        Some(fan_out)
    }
}

impl Broker {
    /// Whether anyone (client, callback or in-process stream) listens to `name`.
    pub fn has_subscribers(&self, name: &str) -> bool {
        self.router().borrow().events.has_subscribers(name)
    }

    /// An in-process stream of the events named `name`, held to the event window.
    pub fn subscribe_local(&self, name: &str) -> EventStream {
        let (sender, receiver) = mpsc::channel(self.limits().event_window as usize);
        self.router().borrow_mut().events.add_stream(name, sender);
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
        let limits = self.limits();
        limits.check_name("event", event)?;
        self.may_act_for(caller, module)?;
        let mut router = self.router().borrow_mut();
        let Router { modules, events, .. } = &mut *router;
        let entry = modules.get(module).expect("checked by may_act_for");
        if !entry.methods.iter().any(|m| m.name == method) {
            return Err(CallError::not_found(format!(
                "module {module} has no method named {}",
                excerpt(method)
            )));
        }
        let held = match &entry.location {
            Location::Remote(client) => {
                self.clients().subscriptions_of(client, |modules| events.callbacks_of(modules))
            }
            Location::Local(_) => None,
        };
        if held.is_some_and(|held| held >= limits.max_subscriptions) {
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
        if !self.router().borrow_mut().events.remove_callback(event, module) {
            return Err(CallError::not_found(format!("{module} is not subscribed to {}", excerpt(event))));
        }
        Ok(())
    }

    /// Modules with a callback on `event`.
    pub fn callback_subscribers(&self, event: &str) -> Vec<String> {
        self.router().borrow().events.callback_modules(event)
    }

    /// Deliver an event to every subscriber, each held to the event window: the router
    /// walks the subscribers, the client side holds clients to their windows and sends.
    pub fn publish(&self, name: &str, value: &Value) {
        self.trace_event(name);
        let clients = self.clients();
        let mut windows = clients.event_windows(name, value);
        let window = windows.window;
        let mut offer = |client: &ClientId, message: Outbound<'_>| windows.offer(client, message);
        let fanned = self.router().borrow_mut().fan_out(name, value, window, &mut offer);
        let Some(FanOut { sent, dropped, local_callbacks, .. }) = fanned else { return };
        let counters = &self.inner.counters;
        counters.events_sent.set(counters.events_sent.get() + sent);
        counters.events_dropped.set(counters.events_dropped.get() + dropped);
        clients.send_events(windows);
        // Each callback on a task of its own: the raiser's call ends first, and a module's
        // callback never runs inside the call that raised the event.
        for (actor, invoke, in_flight) in local_callbacks {
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

    /// `client`'s stream of `event`: the client side counts it, the router adds it.
    pub(super) fn subscribe_client(&self, client: &ClientId, event: &str) -> Result<(), CallError> {
        self.limits().check_name("event", event)?;
        // The router stays borrowed across the client side's check, which counts and never
        // removes a client: a removal would run the departures hook, which borrows the router.
        let mut router = self.router().borrow_mut();
        let events = &mut router.events;
        if self.clients().subscribe(client, event, |modules| events.callbacks_of(modules))? {
            events.add_client(event, client);
        }
        Ok(())
    }

    /// Stop `client`'s stream of `event`; answers whether it had one.
    pub(super) fn unsubscribe_client(&self, client: &ClientId, event: &str) -> bool {
        self.clients().unsubscribe(client, event);
        self.router().borrow_mut().events.remove_client(event, client)
    }
}

/// An in-process module's callback, within its own window of callbacks under way.
fn local_callback(
    actor: &ModuleHandle,
    callback: Outbound<'_>,
    in_flight: &Rc<Cell<u32>>,
    window: u32,
    fan_out: &mut FanOut,
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
    fan_out.local_callbacks.push((Rc::clone(actor), invoke, Rc::clone(in_flight)));
    Some(true)
}

/// An in-process stream: full drops the event, closed prunes the stream.
fn to_stream(
    stream: &mpsc::Sender<Event>,
    name: &str,
    value: &Value,
    lost: u64,
    fan_out: &mut FanOut,
) -> Option<bool> {
    match stream.try_send(Event { name: name.to_owned(), value: value.clone(), lost }) {
        Ok(()) => Some(true),
        Err(mpsc::error::TrySendError::Full(_)) => Some(false),
        Err(mpsc::error::TrySendError::Closed(_)) => {
            fan_out.closed_streams = true;
            None
        }
    }
}
