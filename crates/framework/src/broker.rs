//! The broker: routes calls to module actors and remote modules, fans events out to every
//! kind of subscriber, keeps each client alive, bounded and within its permissions.
//!
//! Parts: [`limits`] (what a client may send and hold), [`clients`] and [`sessions`]
//! (per-client state, liveness, removal), [`permissions`], [`outbox`] (each client's bounded queue),
//! [`events`] and [`fanout`] (the one event path), [`directory`] (the `ServiceDirectory`
//! module), [`endpoints`] (which addresses may be bound, and how). This file routes calls.

mod clients;
mod directory;
mod endpoints;
mod events;
mod fanout;
mod limits;
mod outbox;
mod permissions;
mod sessions;

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
    /// Keys and events without a module prefix that a module reserved (NAOqi's standard
    /// names, `robotHasFallen`, `FrontTactilTouched`): key → module.
    reserved_keys: HashMap<String, String>,
    pending: HashMap<u64, PendingCall>,
    next_id: u64,
}

/// Messages the broker handles in a row before it lets the other tasks of its thread run.
const RECEIVED_BETWEEN_YIELDS: u32 = 32;

struct Inner {
    config: BrokerConfig,
    state: RefCell<State>,
    /// One ROUTER per security mechanism; a peer's key starts with its socket's index.
    senders: Vec<RouterSendHalf>,
    counters: Counters,
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
            state.events.remove_module(module);
            let Location::Remote(peer) = entry.location else { return };
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
    }
}
