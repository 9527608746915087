use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::task::Context as TaskContext;
use std::time::{Duration, Instant};

use actix::{Actor, Recipient};
use bytes::Bytes;
use futures::FutureExt;
use naobroker_protocol::{
    Envelope, MethodInfo, Value, DEFAULT_MAX_FRAME_BYTES, EVENT_WINDOW, HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TIMEOUT_MS, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use zeromq::{RouterSendHalf, Socket, SocketRecv, SocketSend, ZmqMessage};

use crate::actor::{Invoke, ModuleActor};
use crate::client::EventStream;
use crate::error::{CallError, CallResult};
use crate::module::{Methods, Module, ModuleContext};
use crate::proxy::Session;
use crate::Event;

/// Broker settings (the `[broker]` table of `broker.toml`).
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// ZeroMQ endpoints to bind: `tcp://127.0.0.1:9559`, `ipc:///tmp/naobroker.sock`.
    pub listen: Vec<String>,
    pub max_frame_bytes: usize,
    /// How long a call to a remote module may take before the caller gets an error.
    pub call_timeout: Duration,
    /// Silence after which a client is dropped with its modules and subscriptions.
    pub client_timeout: Duration,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            listen: vec!["tcp://127.0.0.1:9559".into()],
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            call_timeout: Duration::from_secs(10),
            client_timeout: Duration::from_millis(HEARTBEAT_TIMEOUT_MS),
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

struct ClientState {
    name: String,
    last_seen: Instant,
    modules: HashSet<String>,
    events: HashSet<String>,
    events_in_flight: u32,
    events_dropped: u64,
}

impl ClientState {
    fn new() -> Self {
        ClientState {
            name: String::new(),
            last_seen: Instant::now(),
            modules: HashSet::new(),
            events: HashSet::new(),
            events_in_flight: 0,
            events_dropped: 0,
        }
    }
}

enum Origin {
    Client { peer: Bytes, id: u64 },
    Local(oneshot::Sender<CallResult>),
}

struct PendingCall {
    target: Bytes,
    module: String,
    method: String,
    deadline: Instant,
    origin: Origin,
}

#[derive(Default)]
struct Counters {
    calls: Cell<u64>,
    call_errors: Cell<u64>,
    bad_frames: Cell<u64>,
    events_sent: Cell<u64>,
    events_dropped: Cell<u64>,
    sends_deferred: Cell<u64>,
}

#[derive(Default)]
struct State {
    modules: HashMap<String, ModuleEntry>,
    clients: HashMap<Bytes, ClientState>,
    event_clients: HashMap<String, HashSet<Bytes>>,
    local_subscribers: HashMap<String, Vec<mpsc::Sender<Event>>>,
    pending: HashMap<u64, PendingCall>,
    next_id: u64,
}

type ModuleRemoved = Box<dyn Fn(&str)>;

struct Inner {
    config: BrokerConfig,
    state: RefCell<State>,
    sender: RouterSendHalf,
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
        let mut socket = zeromq::RouterSocket::new();
        for endpoint in &config.listen {
            if let Some(path) = endpoint.strip_prefix("ipc://") {
                // A crashed broker leaves its socket file behind, and bind would fail.
                let _ = std::fs::remove_file(path);
            }
            socket.bind(endpoint).await.map_err(|error| format!("cannot listen on {endpoint}: {error}"))?;
        }
        let (sender, mut receiver) = socket.split();
        let broker = Broker {
            inner: Rc::new(Inner {
                config,
                state: RefCell::default(),
                sender,
                counters: Counters::default(),
                module_removed: RefCell::default(),
            }),
        };
        let weak = Rc::downgrade(&broker.inner);
        actix_rt::spawn(async move {
            while let Ok(message) = receiver.recv().await {
                match weak.upgrade() {
                    Some(inner) => Broker { inner }.on_message(message),
                    None => break,
                }
            }
        });
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

    /// Run `listener` with the module's name whenever a module goes away.
    pub fn on_module_removed(&self, listener: impl Fn(&str) + 'static) {
        self.inner.module_removed.borrow_mut().push(Box::new(listener));
    }

    /// Call `module.method(args)`, in this process or in a remote module.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        self.inner.counters.calls.set(self.inner.counters.calls.get() + 1);
        let location = {
            let state = self.inner.state.borrow();
            match state.modules.get(module) {
                None => None,
                Some(ModuleEntry { location: Location::Local(recipient), .. }) => Some(Ok(recipient.clone())),
                Some(ModuleEntry { location: Location::Remote(peer), .. }) => Some(Err(peer.clone())),
            }
        };
        let result = match location {
            None => Err(CallError::new(format!("no module named {module}"))),
            Some(Ok(recipient)) => recipient
                .send(Invoke { method: method.to_owned(), args, post })
                .await
                .unwrap_or_else(|_| Err(CallError::new(format!("module {module} has stopped")))),
            Some(Err(peer)) => {
                let (reply, answer) = oneshot::channel();
                self.forward(&peer, module, method, args, post, Origin::Local(reply));
                answer.await.unwrap_or_else(|_| Err(CallError::new(format!("module {module} went away"))))
            }
        };
        if result.is_err() {
            self.inner.counters.call_errors.set(self.inner.counters.call_errors.get() + 1);
        }
        result
    }

    /// Deliver an event to every subscriber: remote clients and in-process streams.
    pub fn publish(&self, name: &str, value: &Value) {
        let mut state = self.inner.state.borrow_mut();
        let state = &mut *state;
        if let Some(peers) = state.event_clients.get(name) {
            let payload =
                Bytes::from(Envelope::Event { name: name.to_owned(), value: value.clone(), lost: 0 }.encode());
            for peer in peers {
                let Some(client) = state.clients.get_mut(peer) else { continue };
                if client.events_in_flight >= EVENT_WINDOW {
                    client.events_dropped += 1;
                    self.bump(&self.inner.counters.events_dropped);
                    continue;
                }
                client.events_in_flight += 1;
                self.bump(&self.inner.counters.events_sent);
                self.send_bytes(peer, payload.clone());
            }
        }
        if let Some(streams) = state.local_subscribers.get_mut(name) {
            streams.retain(|stream| {
                match stream.try_send(Event { name: name.to_owned(), value: value.clone() }) {
                    Ok(()) => true,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        self.bump(&self.inner.counters.events_dropped);
                        true
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => false,
                }
            });
        }
    }

    /// Whether anyone (remote client or in-process stream) listens to `name`.
    pub fn has_subscribers(&self, name: &str) -> bool {
        let state = self.inner.state.borrow();
        state.event_clients.get(name).is_some_and(|peers| !peers.is_empty())
            || state.local_subscribers.get(name).is_some_and(|streams| !streams.is_empty())
    }

    /// An in-process stream of the events named `name`.
    pub fn subscribe_local(&self, name: &str) -> EventStream {
        let (sender, receiver) = mpsc::channel(1024);
        self.inner.state.borrow_mut().local_subscribers.entry(name.to_owned()).or_default().push(sender);
        EventStream::new(receiver)
    }

    /// Broker counters, as shown by `naocli stats`.
    pub fn stats(&self) -> Value {
        let c = &self.inner.counters;
        let state = self.inner.state.borrow();
        let clients: Vec<Value> = state
            .clients
            .values()
            .map(|client| {
                Value::Map(vec![
                    ("name".into(), client.name.as_str().into()),
                    (
                        "modules".into(),
                        Value::Array(client.modules.iter().map(|m| m.as_str().into()).collect()),
                    ),
                    ("events_dropped".into(), client.events_dropped.into()),
                ])
            })
            .collect();
        Value::Map(vec![
            ("calls".into(), c.calls.get().into()),
            ("call_errors".into(), c.call_errors.get().into()),
            ("bad_frames".into(), c.bad_frames.get().into()),
            ("events_sent".into(), c.events_sent.get().into()),
            ("events_dropped".into(), c.events_dropped.get().into()),
            ("sends_deferred".into(), c.sends_deferred.get().into()),
            ("pending_remote_calls".into(), (state.pending.len() as u64).into()),
            ("modules".into(), (state.modules.len() as u64).into()),
            ("clients".into(), Value::Array(clients)),
        ])
    }

    fn bump(&self, counter: &Cell<u64>) {
        counter.set(counter.get() + 1);
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
            state.pending.insert(
                id,
                PendingCall {
                    target: peer.clone(),
                    module: module.to_owned(),
                    method: method.to_owned(),
                    deadline: Instant::now() + self.inner.config.call_timeout,
                    origin,
                },
            );
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

    /// Send without ever waiting on a slow peer: the message is handed to the socket
    /// at once when its queue has room, else parked in its own task.
    fn send_bytes(&self, peer: &Bytes, payload: Bytes) {
        let message = ZmqMessage::try_from(vec![peer.clone(), payload]).expect("two frames");
        let mut sender = self.inner.sender.clone();
        let mut sending = async move { sender.send(message).await }.boxed_local();
        let mut context = TaskContext::from_waker(futures::task::noop_waker_ref());
        if sending.poll_unpin(&mut context).is_pending() {
            self.bump(&self.inner.counters.sends_deferred);
            actix_rt::spawn(async move {
                let _ = sending.await;
            });
        }
    }

    fn reply(&self, peer: &Bytes, id: u64, result: CallResult) {
        let envelope = match result {
            Ok(value) => Envelope::Reply { id, value },
            Err(error) => Envelope::Error { id, message: error.message },
        };
        self.send(peer, &envelope);
    }

    fn on_message(&self, message: ZmqMessage) {
        let mut frames = message.into_vec().into_iter();
        let Some(peer) = frames.next() else { return };
        let Some(payload) = frames.next() else { return };
        let known = {
            let mut state = self.inner.state.borrow_mut();
            let known = state.clients.contains_key(&peer);
            state.clients.entry(peer.clone()).or_insert_with(ClientState::new).last_seen = Instant::now();
            known
        };
        if frames.next().is_some() {
            self.bump(&self.inner.counters.bad_frames);
            let message = "a message must be exactly one frame".to_owned();
            return self.send(&peer, &Envelope::Error { id: 0, message });
        }
        let envelope = match Envelope::decode(&payload, self.inner.config.max_frame_bytes) {
            Ok(envelope) => envelope,
            Err(error) => {
                self.bump(&self.inner.counters.bad_frames);
                tracing::debug!(%error, "bad frame");
                let id = Envelope::salvage_id(&payload);
                return self.send(&peer, &Envelope::Error { id, message: error.to_string() });
            }
        };
        if !known && !matches!(envelope, Envelope::Hello { .. }) {
            // A client we dropped (silence) or never met: it learns it must register again.
            self.welcome(&peer);
        }
        self.dispatch(peer, envelope);
    }

    fn welcome(&self, peer: &Bytes) {
        let heartbeat_ms = HEARTBEAT_INTERVAL_MS;
        self.send(peer, &Envelope::Welcome { version: PROTOCOL_VERSION, heartbeat_ms });
    }

    fn dispatch(&self, peer: Bytes, envelope: Envelope) {
        match envelope {
            Envelope::Hello { version, client, .. } => {
                if version != PROTOCOL_VERSION {
                    let message = format!(
                        "protocol version {version} is not supported (this broker speaks {PROTOCOL_VERSION})"
                    );
                    return self.send(&peer, &Envelope::Error { id: 0, message });
                }
                if let Some(state) = self.inner.state.borrow_mut().clients.get_mut(&peer) {
                    state.name = client;
                }
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
                self.reply(&peer, id, result.map(|_| true.into()).map_err(CallError::new));
            }
            Envelope::Unregister { id, module } => {
                let owned = self
                    .inner
                    .state
                    .borrow_mut()
                    .clients
                    .get_mut(&peer)
                    .is_some_and(|client| client.modules.remove(&module));
                let result = if owned {
                    self.remove_module(&module);
                    Ok(true.into())
                } else {
                    Err(CallError::new(format!("module {module} is not registered by this client")))
                };
                self.reply(&peer, id, result);
            }
            Envelope::Subscribe { id, event } => {
                let mut state = self.inner.state.borrow_mut();
                if let Some(client) = state.clients.get_mut(&peer) {
                    client.events.insert(event.clone());
                }
                state.event_clients.entry(event).or_default().insert(peer.clone());
                drop(state);
                self.reply(&peer, id, Ok(true.into()));
            }
            Envelope::Unsubscribe { id, event } => {
                let mut state = self.inner.state.borrow_mut();
                if let Some(client) = state.clients.get_mut(&peer) {
                    client.events.remove(&event);
                }
                let removed = state.event_clients.get_mut(&event).is_some_and(|p| p.remove(&peer));
                drop(state);
                self.reply(&peer, id, Ok(removed.into()));
            }
            Envelope::Heartbeat => {}
            Envelope::Ack { count } => {
                if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(&peer) {
                    client.events_in_flight = client.events_in_flight.saturating_sub(count);
                }
            }
            Envelope::Welcome { .. } | Envelope::Event { .. } | Envelope::Callback { .. } => {
                self.bump(&self.inner.counters.bad_frames);
                let message = "Welcome and Event are sent by the broker only".to_owned();
                self.send(&peer, &Envelope::Error { id: 0, message });
            }
        }
    }

    fn call_from(&self, peer: Bytes, id: u64, module: String, method: String, args: Vec<Value>, post: bool) {
        let remote = match self.inner.state.borrow().modules.get(&module) {
            Some(ModuleEntry { location: Location::Remote(target), .. }) => Some(target.clone()),
            _ => None,
        };
        match remote {
            Some(target) => {
                self.bump(&self.inner.counters.calls);
                self.forward(&target, &module, &method, args, post, Origin::Client { peer, id });
            }
            None => {
                let broker = self.clone();
                actix_rt::spawn(async move {
                    let result = broker.call(&module, &method, args, post).await;
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
            self.bump(&self.inner.counters.call_errors);
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

    fn register_remote(&self, peer: &Bytes, module: &str, methods: Vec<MethodInfo>) -> Result<(), String> {
        let mut state = self.inner.state.borrow_mut();
        match state.modules.get(module) {
            Some(ModuleEntry { location: Location::Remote(owner), .. }) if owner == peer => {}
            Some(_) => return Err(format!("a module named {module} is already registered")),
            None => {}
        }
        if module.is_empty() || module.contains('.') {
            return Err(format!("invalid module name {module:?}: non-empty, without '.'"));
        }
        state
            .modules
            .insert(module.to_owned(), ModuleEntry { location: Location::Remote(peer.clone()), methods });
        if let Some(client) = state.clients.get_mut(peer) {
            client.modules.insert(module.to_owned());
        }
        tracing::info!(module, "remote module registered");
        Ok(())
    }

    fn remove_module(&self, module: &str) {
        let failed: Vec<PendingCall> = {
            let mut state = self.inner.state.borrow_mut();
            let Some(entry) = state.modules.remove(module) else { return };
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
        for listener in self.inner.module_removed.borrow().iter() {
            listener(module);
        }
    }

    fn remove_client(&self, peer: &Bytes) {
        let Some(client) = self.inner.state.borrow_mut().clients.remove(peer) else { return };
        tracing::info!(client = %client.name, modules = ?client.modules, "client gone");
        {
            let mut state = self.inner.state.borrow_mut();
            for event in &client.events {
                if let Some(peers) = state.event_clients.get_mut(event) {
                    peers.remove(peer);
                }
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
        let (silent, expired, peers) = {
            let mut state = self.inner.state.borrow_mut();
            let timeout = self.inner.config.client_timeout;
            let silent: Vec<Bytes> = state
                .clients
                .iter()
                .filter(|(_, client)| now.duration_since(client.last_seen) > timeout)
                .map(|(peer, _)| peer.clone())
                .collect();
            let expired_ids: Vec<u64> =
                state.pending.iter().filter(|(_, c)| c.deadline <= now).map(|(id, _)| *id).collect();
            let expired: Vec<PendingCall> =
                expired_ids.iter().filter_map(|id| state.pending.remove(id)).collect();
            let peers: Vec<Bytes> =
                if heartbeat { state.clients.keys().cloned().collect() } else { Vec::new() };
            (silent, expired, peers)
        };
        for peer in &silent {
            self.remove_client(peer);
        }
        let limit = self.inner.config.call_timeout.as_millis();
        for call in expired {
            let message = format!("{}.{} timed out after {limit} ms", call.module, call.method);
            self.deliver(call.origin, Err(CallError::new(message)));
        }
        for peer in peers {
            self.send(&peer, &Envelope::Heartbeat);
        }
    }
}

/// The broker's own module: what is registered, and the broker's counters.
pub(crate) struct ServiceDirectory {
    pub(crate) broker: Broker,
}

impl Module for ServiceDirectory {
    fn name(&self) -> String {
        "ServiceDirectory".into()
    }

    fn description(&self) -> String {
        "Lists the modules the broker knows and shows its counters.".into()
    }

    fn methods(methods: &mut Methods<Self>) {
        methods
            .add("modules", "Names of every registered module.", |this, _, ()| Ok(this.broker.module_names()))
            .add(
                "methods",
                "Methods of one module: [[name, signature, help], ...].",
                |this, _, (module,): (String,)| {
                    let infos = this
                        .broker
                        .module_methods(&module)
                        .ok_or_else(|| CallError::new(format!("no module named {module}")))?;
                    Ok(infos.into_iter().map(|m| vec![m.name, m.signature, m.help]).collect::<Vec<_>>())
                },
            )
            .add("stats", "Broker counters: calls, errors, events sent and dropped.", |this, _, ()| {
                Ok(this.broker.stats())
            });
    }
}

impl Broker {
    /// Start a broker with its `ServiceDirectory` module.
    pub async fn start_with_directory(config: BrokerConfig) -> Result<Broker, String> {
        let broker = Broker::start(config).await?;
        broker.add_module(ServiceDirectory { broker: broker.clone() })?;
        Ok(broker)
    }
}
