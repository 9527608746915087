//! The broker: routes calls to module actors and remote modules, fans events out to every
//! kind of subscriber, keeps each client alive, bounded and within its permissions.
//!
//! Parts: [`limits`] (what a client may send and hold), [`clients`] (per-client state and
//! outgoing queue), [`events`] (the one event path), [`directory`] (the
//! `ServiceDirectory` module), [`endpoints`] (which addresses may be bound, and how).

mod clients;
mod directory;
mod endpoints;
mod events;
mod limits;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::task::Context as TaskContext;
use std::time::{Duration, Instant};

use actix::{Actor, Recipient};
use bytes::Bytes;
use futures::FutureExt;
use naobroker_protocol::{
    excerpt, Envelope, MethodInfo, Role, Value, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use zeromq::{RouterSendHalf, SocketRecv, SocketSend, ZmqMessage};

use crate::actor::{Invoke, ModuleActor};
use crate::client::EventStream;
use crate::error::{CallError, CallResult};
use crate::identity::{Caller, ClientId};
use crate::module::{Module, ModuleContext};
use crate::proxy::Session;
use crate::Event;
use clients::ClientState;
pub(crate) use directory::ServiceDirectory;
pub use endpoints::CurveListeners;
use events::{Registry, Target};
pub use limits::Limits;

/// Broker settings (the `[broker]` table of `broker.toml`).
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// ZeroMQ endpoints to bind: `tcp://127.0.0.1:9559`, `ipc:///tmp/naobroker.sock`.
    pub listen: Vec<String>,
    /// Silence after which a client is dropped with its modules and subscriptions.
    pub client_timeout: Duration,
    pub limits: Limits,
    /// Listeners that admit only CURVE-authenticated clients (any address).
    pub curve: Option<CurveListeners>,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            listen: vec!["tcp://127.0.0.1:9559".into()],
            client_timeout: Duration::from_millis(HEARTBEAT_TIMEOUT_MS),
            limits: Limits::default(),
            curve: None,
        }
    }
}

enum Location {
    Local(Recipient<Invoke>),
    Remote(Bytes),
}

struct ModuleEntry {
    location: Location,
    methods: Vec<MethodInfo>,
}

enum Origin {
    Client { peer: Bytes, id: u64 },
    Local(oneshot::Sender<CallResult>),
}

/// A call forwarded to a remote module. It waits as long as the module's client lives.
struct PendingCall {
    target: Bytes,
    module: String,
    method: String,
    origin: Origin,
}

#[derive(Default)]
struct Counters {
    calls: Cell<u64>,
    call_errors: Cell<u64>,
    bad_frames: Cell<u64>,
    refused: Cell<u64>,
    events_sent: Cell<u64>,
    events_dropped: Cell<u64>,
    sends_deferred: Cell<u64>,
    clients_disconnected: Cell<u64>,
}

fn bump(counter: &Cell<u64>) {
    counter.set(counter.get() + 1);
}

#[derive(Default)]
struct State {
    modules: HashMap<String, ModuleEntry>,
    clients: HashMap<Bytes, ClientState>,
    /// Session tag → the peer of that session's main connection.
    sessions: HashMap<Vec<u8>, Bytes>,
    events: Registry,
    pending: HashMap<u64, PendingCall>,
    next_id: u64,
}

type ModuleRemoved = Box<dyn Fn(&str)>;

/// Messages the broker handles in a row before it lets the other tasks of its thread run.
const RECEIVED_BETWEEN_YIELDS: u32 = 32;

struct Inner {
    config: BrokerConfig,
    state: RefCell<State>,
    /// One ROUTER per security mechanism; a peer's key starts with its socket's index.
    senders: Vec<RouterSendHalf>,
    counters: Counters,
    module_removed: RefCell<Vec<ModuleRemoved>>,
}

/// The broker: routes calls to module actors and remote modules, fans out events.
///
/// It lives on one actix arbiter: a call is read, handled by an in-process module and
/// answered without waking another thread.
#[derive(Clone)]
pub struct Broker {
    inner: Rc<Inner>,
}

impl Broker {
    /// Bind the endpoints and start serving. Must run inside an actix system.
    pub async fn start(config: BrokerConfig) -> Result<Broker, String> {
        let sockets = endpoints::bind(&config).await?;
        let (senders, receivers): (Vec<_>, Vec<_>) = sockets.into_iter().map(|socket| socket.split()).unzip();
        let broker = Broker {
            inner: Rc::new(Inner {
                config,
                state: RefCell::default(),
                senders,
                counters: Counters::default(),
                module_removed: RefCell::default(),
            }),
        };
        for (index, mut receiver) in receivers.into_iter().enumerate() {
            let weak = Rc::downgrade(&broker.inner);
            actix_rt::spawn(async move {
                let mut handled = 0u32;
                while let Ok(message) = receiver.recv().await {
                    match weak.upgrade() {
                        Some(inner) => Broker { inner }.on_message(index as u8, message),
                        None => break,
                    }
                    // A socket that always has a message ready never makes recv() wait: without
                    // a yield, a flooding peer would starve every task on this thread (the calls
                    // it spawned, replies, accepts, heartbeats).
                    handled = handled.wrapping_add(1);
                    if handled.is_multiple_of(RECEIVED_BETWEEN_YIELDS) {
                        tokio::task::yield_now().await;
                    }
                }
            });
        }
        let weak = Rc::downgrade(&broker.inner);
        actix_rt::spawn(async move {
            let mut ticker = tokio::time::interval(Duration::from_millis(100));
            let mut ticks = 0u64;
            loop {
                ticker.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                ticks += 1;
                Broker { inner }.on_tick(ticks.is_multiple_of(HEARTBEAT_INTERVAL_MS / 100));
            }
        });
        tracing::info!(endpoints = ?broker.inner.config.listen, "broker listening");
        Ok(broker)
    }

    /// Start a broker with its `ServiceDirectory` module.
    pub async fn start_with_directory(config: BrokerConfig) -> Result<Broker, String> {
        let broker = Broker::start(config).await?;
        broker.add_module(ServiceDirectory { broker: broker.clone() })?;
        Ok(broker)
    }

    /// Host a module in the broker process, as an actor on this arbiter.
    pub fn add_module<M: Module>(&self, module: M) -> Result<(), String> {
        let name = module.name();
        if self.module_exists(&name) {
            return Err(format!("a module named {name} is already registered"));
        }
        let context = ModuleContext::new(Session::Broker(self.clone()), &name);
        let actor = ModuleActor::new(module, context, None);
        let methods = actor.method_infos();
        let address = actor.start();
        self.inner
            .state
            .borrow_mut()
            .modules
            .insert(name, ModuleEntry { location: Location::Local(address.recipient()), methods });
        Ok(())
    }

    pub fn module_exists(&self, name: &str) -> bool {
        self.inner.state.borrow().modules.contains_key(name)
    }

    pub fn module_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.inner.state.borrow().modules.keys().cloned().collect();
        names.sort();
        names
    }

    pub fn module_methods(&self, name: &str) -> Option<Vec<MethodInfo>> {
        self.inner.state.borrow().modules.get(name).map(|entry| entry.methods.clone())
    }

    /// The limits every client is held to.
    pub fn limits(&self) -> &Limits {
        &self.inner.config.limits
    }

    /// Run `listener` with the module's name whenever a module goes away.
    pub fn on_module_removed(&self, listener: impl Fn(&str) + 'static) {
        self.inner.module_removed.borrow_mut().push(Box::new(listener));
    }

    /// Who owns module `name`: the broker for in-process modules, else its client.
    fn owner_of(&self, name: &str) -> Option<Caller> {
        self.inner.state.borrow().modules.get(name).map(|entry| match &entry.location {
            Location::Local(_) => Caller::Broker,
            Location::Remote(peer) => Caller::Client(ClientId(peer.clone())),
        })
    }

    /// Whether `caller` may act for module `module`: unregister it, call its `exit`,
    /// subscribe or unsubscribe its callbacks. The broker's own code may act for any.
    pub fn may_act_for(&self, caller: &Caller, module: &str) -> Result<(), CallError> {
        match (caller, self.owner_of(module)) {
            (_, None) => Err(CallError::new(format!("no module named {}", excerpt(module)))),
            (Caller::Broker, Some(_)) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::new(format!(
                "module {module} belongs to another client: only its own client may do this"
            ))),
        }
    }

    /// Refuse a write or raise of `key` by `caller` when the key's first path segment is
    /// another client's (or the broker's) module: `ALMotion/…` is ALMotion's, `Echo/…` Echo's.
    pub fn check_key_owner(&self, caller: &Caller, key: &str) -> Result<(), CallError> {
        let Some((prefix, _)) = key.split_once('/') else { return Ok(()) };
        match (caller, self.owner_of(prefix)) {
            (Caller::Broker, _) | (_, None) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::new(format!(
                "{} belongs to module {prefix}: only the client that registered {prefix} may write or raise it",
                excerpt(key)
            ))),
        }
    }

    /// Call `module.method(args)` from the broker's own code.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        self.call_as(Caller::Broker, module, method, args, post).await
    }

    async fn call_as(
        &self,
        caller: Caller,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
    ) -> CallResult {
        bump(&self.inner.counters.calls);
        let location = {
            let state = self.inner.state.borrow();
            match state.modules.get(module) {
                None => None,
                Some(ModuleEntry { location: Location::Local(recipient), .. }) => Some(Ok(recipient.clone())),
                Some(ModuleEntry { location: Location::Remote(peer), .. }) => Some(Err(peer.clone())),
            }
        };
        let result = match location {
            None => Err(CallError::new(format!("no module named {}", excerpt(module)))),
            Some(Ok(recipient)) => recipient
                .send(Invoke { method: method.to_owned(), args, post, caller, lost: 0 })
                .await
                .unwrap_or_else(|_| Err(CallError::new(format!("module {module} has stopped")))),
            Some(Err(peer)) => {
                let (reply, answer) = oneshot::channel();
                self.forward(&peer, module, method, args, post, Origin::Local(reply));
                answer.await.unwrap_or_else(|_| Err(CallError::new(format!("module {module} went away"))))
            }
        };
        if result.is_err() {
            bump(&self.inner.counters.call_errors);
        }
        result
    }

    /// Whether anyone (client, callback or in-process stream) listens to `name`.
    pub fn has_subscribers(&self, name: &str) -> bool {
        self.inner.state.borrow().events.has_subscribers(name)
    }

    /// An in-process stream of the events named `name`, held to the event window.
    pub fn subscribe_local(&self, name: &str) -> EventStream {
        let (sender, receiver) = mpsc::channel(self.inner.config.limits.event_window as usize);
        self.inner.state.borrow_mut().events.add_stream(name, sender);
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
        let limits = &self.inner.config.limits;
        limits.check_name("event", event)?;
        self.may_act_for(caller, module)?;
        let mut state = self.inner.state.borrow_mut();
        let State { modules, clients, events, .. } = &mut *state;
        let entry = modules.get(module).expect("checked by may_act_for");
        if !entry.methods.iter().any(|m| m.name == method) {
            return Err(CallError::new(format!("module {module} has no method named {}", excerpt(method))));
        }
        let owner = match &entry.location {
            Location::Remote(peer) => clients.get_mut(peer),
            Location::Local(_) => None,
        };
        if let Some(owner) = &owner {
            if owner.subscriptions() >= limits.max_subscriptions {
                return Err(CallError::new(format!(
                    "{module}'s client already holds max_subscriptions ({})",
                    limits.max_subscriptions
                )));
            }
        }
        let new = events.add_callback(event, module, method, message);
        if let (true, Some(owner)) = (new, owner) {
            owner.callbacks += 1;
        }
        Ok(new)
    }

    /// NAOqi's `unsubscribeToEvent(event, module)`.
    pub fn unsubscribe_callback(&self, caller: &Caller, event: &str, module: &str) -> Result<(), CallError> {
        self.may_act_for(caller, module)?;
        let mut state = self.inner.state.borrow_mut();
        if !state.events.remove_callback(event, module) {
            return Err(CallError::new(format!("{module} is not subscribed to {}", excerpt(event))));
        }
        let owner = match state.modules.get(module).map(|entry| &entry.location) {
            Some(Location::Remote(peer)) => Some(peer.clone()),
            _ => None,
        };
        if let Some(client) = owner.and_then(|peer| state.clients.get_mut(&peer)) {
            client.callbacks = client.callbacks.saturating_sub(1);
        }
        Ok(())
    }

    /// Modules with a callback on `event`.
    pub fn callback_subscribers(&self, event: &str) -> Vec<String> {
        self.inner.state.borrow().events.callback_modules(event)
    }

    /// Deliver an event to every subscriber, each held to the event window.
    pub fn publish(&self, name: &str, value: &Value) {
        let window = self.inner.config.limits.event_window;
        let mut sends: Vec<(Bytes, Bytes)> = Vec::new();
        let mut local_callbacks = Vec::new();
        let (mut sent, mut dropped) = (0u64, 0u64);
        {
            let mut state = self.inner.state.borrow_mut();
            let State { events, clients, modules, .. } = &mut *state;
            let Some(subscribers) = events.subscribers_mut(name) else { return };
            let mut plain_event: Option<Bytes> = None;
            let mut closed_streams = false;
            for subscriber in subscribers.iter_mut() {
                let lost = subscriber.lost;
                let delivered = match &subscriber.target {
                    Target::Client(peer) => match clients.get_mut(peer) {
                        Some(client) if client.unacked < window => {
                            client.unacked += 1;
                            let payload = if lost == 0 {
                                plain_event.get_or_insert_with(|| event_bytes(name, value, 0)).clone()
                            } else {
                                event_bytes(name, value, lost)
                            };
                            sends.push((peer.clone(), payload));
                            Some(true)
                        }
                        Some(client) => {
                            client.events_dropped += 1;
                            Some(false)
                        }
                        None => None,
                    },
                    Target::Callback { module, method, message, in_flight } => {
                        match modules.get(module).map(|entry| &entry.location) {
                            Some(Location::Remote(peer)) => match clients.get_mut(peer) {
                                Some(client) if client.unacked < window => {
                                    client.unacked += 1;
                                    let callback = Envelope::Callback {
                                        module: module.clone(),
                                        method: method.clone(),
                                        event: name.to_owned(),
                                        value: value.clone(),
                                        message: message.clone(),
                                        lost,
                                    };
                                    sends.push((peer.clone(), Bytes::from(callback.encode())));
                                    Some(true)
                                }
                                Some(client) => {
                                    client.events_dropped += 1;
                                    Some(false)
                                }
                                None => None,
                            },
                            Some(Location::Local(recipient)) if in_flight.get() < window => {
                                in_flight.set(in_flight.get() + 1);
                                let args = vec![name.into(), value.clone(), message.clone()];
                                let invoke = Invoke {
                                    method: method.clone(),
                                    args,
                                    post: false,
                                    caller: Caller::Broker,
                                    lost,
                                };
                                local_callbacks.push((recipient.clone(), invoke, Rc::clone(in_flight)));
                                Some(true)
                            }
                            Some(Location::Local(_)) => Some(false),
                            None => None,
                        }
                    }
                    Target::Stream(stream) => {
                        match stream.try_send(Event { name: name.to_owned(), value: value.clone(), lost }) {
                            Ok(()) => Some(true),
                            Err(mpsc::error::TrySendError::Full(_)) => Some(false),
                            Err(mpsc::error::TrySendError::Closed(_)) => {
                                closed_streams = true;
                                None
                            }
                        }
                    }
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
            if closed_streams {
                events.prune(name);
            }
        }
        let counters = &self.inner.counters;
        counters.events_sent.set(counters.events_sent.get() + sent);
        counters.events_dropped.set(counters.events_dropped.get() + dropped);
        for (peer, payload) in sends {
            self.send_bytes(&peer, payload);
        }
        for (recipient, invoke, in_flight) in local_callbacks {
            let (module_method, failed) = (invoke.method.clone(), Rc::clone(&self.inner));
            actix_rt::spawn(async move {
                let result = recipient.send(invoke).await;
                in_flight.set(in_flight.get() - 1);
                if !matches!(result, Ok(Ok(_))) {
                    bump(&failed.counters.call_errors);
                    tracing::debug!(method = %module_method, "event callback failed");
                }
            });
        }
    }

    /// Broker counters, as shown by `naocli stats`.
    pub fn stats(&self) -> Value {
        let c = &self.inner.counters;
        let state = self.inner.state.borrow();
        let clients: Vec<Value> = state
            .clients
            .iter()
            .map(|(peer, client)| {
                Value::Map(vec![
                    ("id".into(), ClientId(peer.clone()).to_string().into()),
                    ("name".into(), client.name.as_str().into()),
                    ("liveness".into(), client.keeps_alive.is_some().into()),
                    (
                        "modules".into(),
                        Value::Array(client.modules.iter().map(|m| m.as_str().into()).collect()),
                    ),
                    ("subscriptions".into(), (client.subscriptions() as u64).into()),
                    ("events_dropped".into(), client.events_dropped.into()),
                    ("queued_messages".into(), (client.outbox.queue.len() as u64).into()),
                    ("queued_bytes".into(), (client.outbox.bytes as u64).into()),
                ])
            })
            .collect();
        let count = |counter: &Cell<u64>| Value::from(counter.get());
        Value::Map(vec![
            ("calls".into(), count(&c.calls)),
            ("call_errors".into(), count(&c.call_errors)),
            ("bad_frames".into(), count(&c.bad_frames)),
            ("refused".into(), count(&c.refused)),
            ("events_sent".into(), count(&c.events_sent)),
            ("events_dropped".into(), count(&c.events_dropped)),
            ("sends_deferred".into(), count(&c.sends_deferred)),
            ("clients_disconnected".into(), count(&c.clients_disconnected)),
            (
                "oversized_frames".into(),
                self.inner.senders.iter().map(RouterSendHalf::oversized_message_drops).sum::<u64>().into(),
            ),
            ("pending_remote_calls".into(), (state.pending.len() as u64).into()),
            ("modules".into(), (state.modules.len() as u64).into()),
            ("clients".into(), Value::Array(clients)),
        ])
    }

    fn forward(
        &self,
        peer: &Bytes,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
        origin: Origin,
    ) {
        let id = {
            let mut state = self.inner.state.borrow_mut();
            state.next_id += 1;
            let id = state.next_id;
            let call = PendingCall {
                target: peer.clone(),
                module: module.to_owned(),
                method: method.to_owned(),
                origin,
            };
            state.pending.insert(id, call);
            id
        };
        let (module, method) = (module.to_owned(), method.to_owned());
        let envelope = if post {
            Envelope::Post { id, module, method, args }
        } else {
            Envelope::Call { id, module, method, args }
        };
        self.send(peer, &envelope);
    }

    fn send(&self, peer: &Bytes, envelope: &Envelope) {
        self.send_bytes(peer, Bytes::from(envelope.encode()));
    }

    /// Send without ever waiting on a slow peer: handed to the socket at once when it has
    /// room and nothing is queued before it, else queued behind the client's one writer
    /// task. A client whose queue passes its bound is disconnected.
    fn send_bytes(&self, peer: &Bytes, payload: Bytes) {
        let limits = &self.inner.config.limits;
        let over_bound = {
            let mut state = self.inner.state.borrow_mut();
            match state.clients.get_mut(peer) {
                Some(client) if client.outbox.writing => {
                    let outbox = &mut client.outbox;
                    outbox.bytes += payload.len();
                    outbox.queue.push_back(payload);
                    outbox.queue.len() > limits.max_queued_messages || outbox.bytes > limits.max_queued_bytes
                }
                _ => {
                    drop(state);
                    return self.write_now(peer, payload);
                }
            }
        };
        if over_bound {
            self.disconnect(peer, "its outgoing queue passed max_queued_messages or max_queued_bytes");
        }
    }

    fn write_now(&self, peer: &Bytes, payload: Bytes) {
        let (mut sender, message) = endpoints::addressed(&self.inner.senders, peer, payload);
        let mut sending = async move { sender.send(message).await }.boxed_local();
        let mut context = TaskContext::from_waker(futures::task::noop_waker_ref());
        if sending.poll_unpin(&mut context).is_ready() {
            return;
        }
        bump(&self.inner.counters.sends_deferred);
        if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(peer) {
            client.outbox.writing = true;
        }
        let (weak, peer) = (Rc::downgrade(&self.inner), peer.clone());
        actix_rt::spawn(async move {
            let _ = sending.await;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let next = {
                    let mut state = inner.state.borrow_mut();
                    let Some(client) = state.clients.get_mut(&peer) else { return };
                    match client.outbox.queue.pop_front() {
                        Some(payload) => {
                            client.outbox.bytes -= payload.len();
                            payload
                        }
                        None => {
                            client.outbox.writing = false;
                            client.outbox.queue.shrink_to_fit();
                            return;
                        }
                    }
                };
                let (mut sender, message) = endpoints::addressed(&inner.senders, &peer, next);
                drop(inner);
                let _ = sender.send(message).await;
            }
        });
    }

    fn reply(&self, peer: &Bytes, id: u64, result: CallResult) {
        if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(peer) {
            client.calls_in_flight = client.calls_in_flight.saturating_sub(1);
        }
        let envelope = match result {
            Ok(value) => Envelope::Reply { id, value },
            Err(error) => Envelope::Error { id, message: shortened(error.message) },
        };
        self.send(peer, &envelope);
    }

    /// Answer a request that was refused before it was counted as in flight.
    fn refuse(&self, peer: &Bytes, id: u64, error: CallError) {
        bump(&self.inner.counters.refused);
        tracing::debug!(client = %ClientId(peer.clone()), %error, "request refused");
        self.send(peer, &Envelope::Error { id, message: error.message });
    }

    fn on_message(&self, socket: u8, message: ZmqMessage) {
        let mut frames = message.into_vec().into_iter();
        let Some(identity) = frames.next() else { return };
        let peer = endpoints::peer_key(socket, &identity);
        let Some(payload) = frames.next() else { return };
        let known = self.touch(&peer);
        if frames.next().is_some() {
            bump(&self.inner.counters.bad_frames);
            let message = "a message must be exactly one frame".to_owned();
            return self.send(&peer, &Envelope::Error { id: 0, message });
        }
        let envelope = match Envelope::decode_limited(&payload, &self.inner.config.limits.decode_limits()) {
            Ok(envelope) => envelope,
            Err(error) => {
                bump(&self.inner.counters.bad_frames);
                tracing::debug!(client = %ClientId(peer.clone()), %error, "bad frame");
                let id = Envelope::salvage_id(&payload);
                return self.send(&peer, &Envelope::Error { id, message: error.to_string() });
            }
        };
        if !known && !matches!(envelope, Envelope::Hello { .. }) {
            // A client we dropped (silence, or over its bounds) or never met: it learns it
            // must register again.
            self.welcome(&peer);
        }
        self.dispatch(peer, envelope);
    }

    /// Note that `peer` is alive (and, for a liveness connection, its session's main
    /// connection). Answers whether the peer was known before.
    fn touch(&self, peer: &Bytes) -> bool {
        let now = Instant::now();
        let mut state = self.inner.state.borrow_mut();
        let State { clients, sessions, .. } = &mut *state;
        let known = clients.contains_key(peer);
        let client = clients.entry(peer.clone()).or_insert_with(ClientState::new);
        client.last_seen = now;
        let main = client.keeps_alive.as_ref().and_then(|session| sessions.get(session));
        if let Some(main) = main.and_then(|main| clients.get_mut(main)) {
            main.last_seen = now;
        }
        known
    }

    fn welcome(&self, peer: &Bytes) {
        let heartbeat_ms = HEARTBEAT_INTERVAL_MS;
        self.send(peer, &Envelope::Welcome { version: PROTOCOL_VERSION, heartbeat_ms });
    }

    fn dispatch(&self, peer: Bytes, envelope: Envelope) {
        let limits = &self.inner.config.limits;
        match envelope {
            Envelope::Hello { version, client, session, role } => {
                if version != PROTOCOL_VERSION {
                    let message = format!(
                        "protocol version {version} is not supported (this broker speaks {PROTOCOL_VERSION})"
                    );
                    return self.refuse(&peer, 0, CallError::new(message));
                }
                if let Err(error) = limits.check_name("client", &client) {
                    return self.refuse(&peer, 0, error);
                }
                self.hello(&peer, client, session, role);
                self.welcome(&peer);
            }
            Envelope::Call { id, module, method, args } => {
                self.call_from(peer, id, module, method, args, false)
            }
            Envelope::Post { id, module, method, args } => {
                self.call_from(peer, id, module, method, args, true)
            }
            Envelope::Reply { id, value } => self.complete(&peer, id, Ok(value)),
            Envelope::Error { id, message } => self.complete(&peer, id, Err(CallError::new(message))),
            Envelope::Register { id, module, methods } => {
                let result = self.register_remote(&peer, &module, methods);
                match result {
                    Ok(()) => self.send(&peer, &Envelope::Reply { id, value: true.into() }),
                    Err(error) => self.refuse(&peer, id, error),
                }
            }
            Envelope::Unregister { id, module } => {
                let owned = self
                    .inner
                    .state
                    .borrow_mut()
                    .clients
                    .get_mut(&peer)
                    .is_some_and(|client| client.modules.remove(&module));
                if owned {
                    self.remove_module(&module);
                    self.send(&peer, &Envelope::Reply { id, value: true.into() });
                } else {
                    let message = format!("module {} is not registered by this client", excerpt(&module));
                    self.refuse(&peer, id, CallError::new(message));
                }
            }
            Envelope::Subscribe { id, event } => match self.subscribe_client(&peer, &event) {
                Ok(()) => self.send(&peer, &Envelope::Reply { id, value: true.into() }),
                Err(error) => self.refuse(&peer, id, error),
            },
            Envelope::Unsubscribe { id, event } => {
                let mut state = self.inner.state.borrow_mut();
                if let Some(client) = state.clients.get_mut(&peer) {
                    client.events.remove(&event);
                }
                let removed = state.events.remove_client(&event, &peer);
                drop(state);
                self.send(&peer, &Envelope::Reply { id, value: removed.into() });
            }
            Envelope::Heartbeat => {}
            Envelope::Ack { count } => {
                if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(&peer) {
                    client.unacked = client.unacked.saturating_sub(count);
                }
            }
            Envelope::Welcome { .. } | Envelope::Event { .. } | Envelope::Callback { .. } => {
                bump(&self.inner.counters.bad_frames);
                let message = "Welcome, Event and Callback are sent by the broker only".to_owned();
                self.send(&peer, &Envelope::Error { id: 0, message });
            }
        }
    }

    fn hello(&self, peer: &Bytes, name: String, session: Vec<u8>, role: Role) {
        let replaced = {
            let mut state = self.inner.state.borrow_mut();
            let Some(client) = state.clients.get_mut(peer) else { return };
            client.name = name;
            if session.is_empty() {
                return;
            }
            match role {
                Role::Liveness => {
                    client.keeps_alive = Some(session);
                    return;
                }
                Role::Main => client.session = session.clone(),
            }
            state.sessions.insert(session, peer.clone()).filter(|previous| previous != peer)
        };
        if let Some(previous) = replaced {
            // The same session connected again: its old connection is dead, and what it
            // had registered must be free for the new one at once.
            tracing::info!(client = %ClientId(previous.clone()), "replaced by a new connection of its session");
            self.remove_client(&previous);
        }
    }

    fn subscribe_client(&self, peer: &Bytes, event: &str) -> Result<(), CallError> {
        let limits = &self.inner.config.limits;
        limits.check_name("event", event)?;
        let mut state = self.inner.state.borrow_mut();
        let State { clients, events, .. } = &mut *state;
        let Some(client) = clients.get_mut(peer) else { return Ok(()) };
        if !client.events.contains(event) && client.subscriptions() >= limits.max_subscriptions {
            return Err(CallError::new(format!(
                "this client already holds max_subscriptions ({})",
                limits.max_subscriptions
            )));
        }
        client.events.insert(event.to_owned());
        events.add_client(event, peer);
        Ok(())
    }

    fn check_call(&self, peer: &Bytes, module: &str, method: &str) -> Result<Option<Bytes>, CallError> {
        let limits = &self.inner.config.limits;
        limits.check_name("module", module)?;
        limits.check_name("method", method)?;
        let state = self.inner.state.borrow();
        if let Some(client) = state.clients.get(peer) {
            if client.calls_in_flight >= limits.max_calls_in_flight {
                return Err(CallError::new(format!(
                    "{module}.{method}: this client already has max_calls_in_flight ({}) calls under way",
                    limits.max_calls_in_flight
                )));
            }
        }
        let target = match state.modules.get(module).map(|entry| &entry.location) {
            Some(Location::Remote(target)) => Some(target.clone()),
            _ => None,
        };
        drop(state);
        if method == "exit" && target.as_ref().is_some_and(|target| target != peer) {
            return Err(CallError::new(format!(
                "{module}.exit: only the client that registered {module} may make it exit"
            )));
        }
        Ok(target)
    }

    fn call_from(&self, peer: Bytes, id: u64, module: String, method: String, args: Vec<Value>, post: bool) {
        let target = match self.check_call(&peer, &module, &method) {
            Ok(target) => target,
            Err(error) => return self.refuse(&peer, id, error),
        };
        if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(&peer) {
            client.calls_in_flight += 1;
        }
        match target {
            Some(target) => {
                bump(&self.inner.counters.calls);
                self.forward(&target, &module, &method, args, post, Origin::Client { peer, id });
            }
            None => {
                let broker = self.clone();
                let caller = Caller::Client(ClientId(peer.clone()));
                actix_rt::spawn(async move {
                    let result = broker.call_as(caller, &module, &method, args, post).await;
                    broker.reply(&peer, id, result);
                });
            }
        }
    }

    fn complete(&self, peer: &Bytes, id: u64, result: CallResult) {
        let pending = {
            let mut state = self.inner.state.borrow_mut();
            match state.pending.get(&id) {
                Some(call) if call.target == *peer => state.pending.remove(&id),
                _ => None,
            }
        };
        match pending {
            Some(call) => self.deliver(call.origin, result),
            None => tracing::debug!(id, "reply to no pending call"),
        }
    }

    fn deliver(&self, origin: Origin, result: CallResult) {
        if result.is_err() {
            bump(&self.inner.counters.call_errors);
        }
        match origin {
            Origin::Client { peer, id } => {
                if self.inner.state.borrow().clients.contains_key(&peer) {
                    self.reply(&peer, id, result);
                }
            }
            Origin::Local(sender) => {
                let _ = sender.send(result);
            }
        }
    }

    fn register_remote(&self, peer: &Bytes, module: &str, methods: Vec<MethodInfo>) -> Result<(), CallError> {
        let limits = &self.inner.config.limits;
        limits.check_name("module", module)?;
        for method in &methods {
            limits.check_name("method", &method.name)?;
        }
        let mut state = self.inner.state.borrow_mut();
        match state.modules.get(module) {
            Some(ModuleEntry { location: Location::Remote(owner), .. }) if owner == peer => {}
            Some(_) => return Err(CallError::new(format!("a module named {module} is already registered"))),
            None => {}
        }
        if module.is_empty() || module.contains(['.', '/']) {
            return Err(CallError::new(format!(
                "invalid module name {module:?}: non-empty, without '.' or '/'"
            )));
        }
        let client = state.clients.get_mut(peer).ok_or_else(|| CallError::new("unknown client"))?;
        if !client.modules.contains(module) && client.modules.len() >= limits.max_modules {
            return Err(CallError::new(format!(
                "this client already registered max_modules ({}) modules",
                limits.max_modules
            )));
        }
        client.modules.insert(module.to_owned());
        let client = ClientId(peer.clone());
        state
            .modules
            .insert(module.to_owned(), ModuleEntry { location: Location::Remote(peer.clone()), methods });
        tracing::info!(module, %client, "remote module registered");
        Ok(())
    }

    fn remove_module(&self, module: &str) {
        let failed: Vec<PendingCall> = {
            let mut state = self.inner.state.borrow_mut();
            let Some(entry) = state.modules.remove(module) else { return };
            let callbacks = state.events.remove_module(module);
            let Location::Remote(peer) = entry.location else { return };
            if let Some(client) = state.clients.get_mut(&peer) {
                client.callbacks = client.callbacks.saturating_sub(callbacks);
            }
            let ids: Vec<u64> = state
                .pending
                .iter()
                .filter(|(_, call)| call.target == peer && call.module == module)
                .map(|(id, _)| *id)
                .collect();
            ids.into_iter().filter_map(|id| state.pending.remove(&id)).collect()
        };
        tracing::info!(module, "module unregistered");
        for call in failed {
            let message = format!("{module}.{}: module {module} disconnected", call.method);
            self.deliver(call.origin, Err(CallError::new(message)));
        }
        for listener in self.inner.module_removed.borrow().iter() {
            listener(module);
        }
    }

    /// Drop a client that broke a bound: its state, modules and connection.
    fn disconnect(&self, peer: &Bytes, reason: &str) {
        bump(&self.inner.counters.clients_disconnected);
        tracing::warn!(client = %ClientId(peer.clone()), reason, "client disconnected");
        self.remove_client(peer);
        endpoints::drop_peer(&self.inner.senders, peer);
    }

    fn remove_client(&self, peer: &Bytes) {
        let Some(client) = self.inner.state.borrow_mut().clients.remove(peer) else { return };
        tracing::info!(client = %client.name, id = %ClientId(peer.clone()), modules = ?client.modules, "client gone");
        {
            let mut state = self.inner.state.borrow_mut();
            for event in &client.events {
                state.events.remove_client(event, peer);
            }
            if state.sessions.get(&client.session) == Some(peer) {
                state.sessions.remove(&client.session);
            }
            state
                .pending
                .retain(|_, call| !matches!(&call.origin, Origin::Client { peer: p, .. } if p == peer));
        }
        for module in &client.modules {
            self.remove_module(module);
        }
    }

    fn on_tick(&self, heartbeat: bool) {
        let now = Instant::now();
        let (silent, peers) = {
            let state = self.inner.state.borrow();
            let timeout = self.inner.config.client_timeout;
            let silent: Vec<Bytes> = state
                .clients
                .iter()
                .filter(|(_, client)| now.duration_since(client.last_seen) > timeout)
                .map(|(peer, _)| peer.clone())
                .collect();
            let peers: Vec<Bytes> =
                if heartbeat { state.clients.keys().cloned().collect() } else { Vec::new() };
            (silent, peers)
        };
        for peer in &silent {
            self.remove_client(peer);
        }
        for peer in peers {
            self.send(&peer, &Envelope::Heartbeat);
        }
    }
}

/// Longest error message sent to a caller, in bytes.
const MAX_ERROR_BYTES: usize = 256;

/// An error message cut to [`MAX_ERROR_BYTES`]: a module (in the broker or remote) may quote
/// its whole input in an error, and a reply must not echo a megabyte back to the caller.
fn shortened(message: String) -> String {
    if message.len() <= MAX_ERROR_BYTES {
        return message;
    }
    let cut = (0..=MAX_ERROR_BYTES).rev().find(|&index| message.is_char_boundary(index)).unwrap_or(0);
    format!("{}… ({} bytes)", &message[..cut], message.len())
}

fn event_bytes(name: &str, value: &Value, lost: u64) -> Bytes {
    Bytes::from(Envelope::Event { name: name.to_owned(), value: value.clone(), lost }.encode())
}
