//! A connection to a broker: calls, event streams, served modules, NAOqi callbacks, and
//! everything restored by itself after a reconnect.

mod keys;
mod liveness;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;
use std::time::Duration;

use actix::Recipient;
use bytes::Bytes;
use futures::FutureExt;
use naobroker_protocol::{
    Envelope, MethodInfo, Value, DEFAULT_MAX_FRAME_BYTES, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS,
};
use tokio::sync::{mpsc, oneshot};
use zeromq::{DealerRecvHalf, Socket, SocketRecv, SocketSend, ZmqMessage};

use crate::actor::Invoke;
use crate::error::{CallError, CallResult};
use crate::identity::Caller;
use crate::Event;
pub use keys::ClientKeys;
use liveness::Liveness;

/// Events one subscription delivers, in order.
pub struct EventStream {
    receiver: mpsc::Receiver<Event>,
}

impl EventStream {
    pub(crate) fn new(receiver: mpsc::Receiver<Event>) -> Self {
        EventStream { receiver }
    }

    /// The next event; `None` once the session is gone.
    pub async fn next(&mut self) -> Option<Event> {
        self.receiver.recv().await
    }
}

/// The send half of the current connection.
enum Writer {
    Disconnected,
    Idle(zeromq::DealerSendHalf),
    /// A send is waiting for room; later messages queue behind it, in order.
    Busy(std::collections::VecDeque<Bytes>),
}

/// Events read from the socket before the client tells the broker it has room again.
const ACK_EVERY: u32 = 256;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long [`ClientSession::shutdown`] waits for the broker to free the session's modules.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(2);

struct ServedModule {
    recipient: Recipient<Invoke>,
    methods: Vec<MethodInfo>,
}

/// One local stream of a subscription, with the events it missed because it was full.
struct StreamSlot {
    sender: mpsc::Sender<Event>,
    lost: u64,
}

/// ALMemory calls that set up NAOqi callbacks, repeated after a reconnect: keyed by
/// (event, module), the method and its arguments.
type CallbackSubscriptions = HashMap<(String, String), (String, Vec<Value>)>;

struct Inner {
    url: String,
    client_name: String,
    keys: Option<ClientKeys>,
    /// This session's tag, the same over reconnects and on its liveness connection.
    session_tag: Vec<u8>,
    call_timeout: Cell<Option<Duration>>,
    /// Counts the connections opened: a call served on one is never answered on the next,
    /// whose broker may have given its id to another call.
    connection: Cell<u64>,
    writer: RefCell<Writer>,
    pending: RefCell<HashMap<u64, oneshot::Sender<CallResult>>>,
    next_id: Cell<u64>,
    subscriptions: RefCell<HashMap<String, Vec<StreamSlot>>>,
    callbacks: RefCell<CallbackSubscriptions>,
    served: RefCell<HashMap<String, ServedModule>>,
    events_unacked: Cell<u32>,
    closed: tokio::sync::watch::Sender<bool>,
    liveness: RefCell<Option<Liveness>>,
}

/// 16 bytes no other session will pick (the standard library's per-process random keys,
/// mixed with the time).
fn new_session_tag() -> Vec<u8> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut tag = Vec::with_capacity(16);
    for half in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(half);
        hasher.write_u128(nanos.as_nanos());
        hasher.write_u32(std::process::id());
        tag.extend_from_slice(&hasher.finish().to_le_bytes());
    }
    tag
}

/// One connection to a broker: calls, event subscriptions and served remote modules.
///
/// It reconnects by itself when the broker goes away and comes back, registering its
/// modules and subscriptions again. Runs on the current actix/tokio local runtime.
#[derive(Clone)]
pub struct ClientSession {
    inner: Rc<Inner>,
}

impl ClientSession {
    /// Connect to `url` (`tcp://127.0.0.1:9559`, `ipc:///path`). Fails when no broker
    /// answers within two seconds. CURVE keys come from the environment when set
    /// ([`ClientKeys::from_env`]).
    pub async fn connect(url: &str, client_name: &str) -> Result<ClientSession, CallError> {
        Self::connect_with(url, client_name, ClientKeys::from_env()?).await
    }

    /// Connect with CURVE keys (for a broker's `[broker.curve]` listener), or none.
    pub async fn connect_with(
        url: &str,
        client_name: &str,
        keys: Option<ClientKeys>,
    ) -> Result<ClientSession, CallError> {
        let session = ClientSession {
            inner: Rc::new(Inner {
                url: url.to_owned(),
                client_name: client_name.to_owned(),
                keys,
                session_tag: new_session_tag(),
                call_timeout: Cell::new(None),
                connection: Cell::new(0),
                writer: RefCell::new(Writer::Disconnected),
                pending: RefCell::default(),
                next_id: Cell::new(0),
                subscriptions: RefCell::default(),
                callbacks: RefCell::default(),
                served: RefCell::default(),
                events_unacked: Cell::new(0),
                closed: tokio::sync::watch::channel(false).0,
                liveness: RefCell::new(None),
            }),
        };
        let receiver = session
            .open()
            .await
            .map_err(|error| CallError::new(format!("cannot reach a broker at {url}: {error}")))?;
        let liveness =
            Liveness::start(url, client_name, session.inner.session_tag.clone(), session.inner.keys.clone())
                .map_err(|error| CallError::new(format!("cannot start the liveness thread: {error}")))?;
        *session.inner.liveness.borrow_mut() = Some(liveness);
        let weak = Rc::downgrade(&session.inner);
        let mut closed = session.inner.closed.subscribe();
        actix_rt::spawn(async move {
            let mut receiver = receiver;
            loop {
                if *closed.borrow_and_update() {
                    break;
                }
                let Some(inner) = weak.upgrade() else { break };
                ClientSession { inner }.read_until_lost(receiver).await;
                receiver = loop {
                    let Some(inner) = weak.upgrade() else { return };
                    let session = ClientSession { inner };
                    if *session.inner.closed.borrow() {
                        return;
                    }
                    match session.open().await {
                        Ok(receiver) => {
                            tracing::info!(url = %session.inner.url, "reconnected to the broker");
                            session.restore();
                            break receiver;
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                    }
                };
            }
        });
        let weak = Rc::downgrade(&session.inner);
        let mut closed = session.inner.closed.subscribe();
        actix_rt::spawn(async move {
            let mut ticker = tokio::time::interval(Duration::from_millis(HEARTBEAT_INTERVAL_MS));
            loop {
                tokio::select! {
                    _ = ticker.tick() => {}
                    _ = closed.changed() => break,
                }
                let Some(inner) = weak.upgrade() else { break };
                ClientSession { inner }.send(&Envelope::Heartbeat);
            }
        });
        Ok(session)
    }

    /// A limit for every call made through this session. Without one (the default) a
    /// call waits as long as the broker and the callee are alive.
    pub fn set_call_timeout(&self, timeout: Option<Duration>) {
        self.inner.call_timeout.set(timeout);
    }

    /// Open a socket, say hello and wait for the broker's welcome.
    async fn open(&self) -> Result<DealerRecvHalf, String> {
        let mut socket = zeromq::DealerSocket::with_options(keys::socket_options(self.inner.keys.as_ref()));
        tokio::time::timeout(CONNECT_TIMEOUT, socket.connect(&self.inner.url))
            .await
            .map_err(|_| "connection timed out".to_owned())?
            .map_err(|error| error.to_string())?;
        let (mut send_half, mut recv_half) = socket.split();
        let hello = Envelope::Hello {
            version: naobroker_protocol::PROTOCOL_VERSION,
            client: self.inner.client_name.clone(),
            session: self.inner.session_tag.clone(),
            role: naobroker_protocol::Role::Main,
        };
        send_half.send(ZmqMessage::from(hello.encode())).await.map_err(|e| e.to_string())?;
        let welcome = tokio::time::timeout(CONNECT_TIMEOUT, recv_half.recv())
            .await
            .map_err(|_| "no welcome from the broker".to_owned())?
            .map_err(|error| error.to_string())?;
        match decode(welcome)? {
            Envelope::Welcome { .. } => {}
            Envelope::Error { message, .. } => return Err(message),
            other => return Err(format!("expected Welcome, got {other:?}")),
        }
        *self.inner.writer.borrow_mut() = Writer::Idle(send_half);
        self.inner.connection.set(self.inner.connection.get() + 1);
        Ok(recv_half)
    }

    /// Register again what this session had registered, after a reconnect or when the
    /// broker says it no longer knows us.
    fn restore(&self) {
        let modules: Vec<(String, Vec<MethodInfo>)> = self
            .inner
            .served
            .borrow()
            .iter()
            .map(|(name, served)| (name.clone(), served.methods.clone()))
            .collect();
        for (module, methods) in modules {
            let request = self.request(|id| Envelope::Register { id, module: module.clone(), methods }, None);
            actix_rt::spawn(async move {
                if let Err(error) = request.await {
                    tracing::error!(%module, %error, "could not register again");
                }
            });
        }
        let events: Vec<String> = self.inner.subscriptions.borrow().keys().cloned().collect();
        for event in events {
            let request = self.request(|id| Envelope::Subscribe { id, event }, None);
            actix_rt::spawn(async move {
                let _ = request.await;
            });
        }
        // After the modules: a callback names one of them.
        let callbacks: Vec<(String, Vec<Value>)> = self.inner.callbacks.borrow().values().cloned().collect();
        for (method, args) in callbacks {
            let request = self.request(
                |id| Envelope::Call { id, module: "ALMemory".into(), method: method.clone(), args },
                None,
            );
            actix_rt::spawn(async move {
                if let Err(error) = request.await {
                    tracing::error!(%method, %error, "could not subscribe a callback again");
                }
            });
        }
    }

    /// Remember a successful ALMemory call that creates or removes a NAOqi callback, so that
    /// a reconnect repeats the ones still wanted.
    fn note_callback_subscription(&self, method: &str, args: &[Value]) {
        let text = |index: usize| args.get(index).and_then(Value::as_str).unwrap_or_default().to_owned();
        let key = (text(0), text(1));
        let mut callbacks = self.inner.callbacks.borrow_mut();
        match method {
            "subscribeToEvent" | "subscribeToMicroEvent" => {
                callbacks.insert(key, (method.to_owned(), args.to_vec()));
            }
            "unsubscribeToEvent" | "unsubscribeToMicroEvent" => {
                callbacks.remove(&key);
            }
            _ => {}
        }
    }

    /// Stop serving module `name`: the broker frees its name at once, its NAOqi callbacks go
    /// with it, and calls under way to it fail.
    pub async fn unregister(&self, name: &str) -> Result<(), CallError> {
        self.inner.served.borrow_mut().remove(name);
        self.inner.callbacks.borrow_mut().retain(|(_, module), _| module != name);
        let module = name.to_owned();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::Unregister { id, module }, timeout).await.map(drop)
    }

    /// Unregister every module this session serves, so that their names are free for anyone
    /// once this returns (after a `close` alone the broker holds them until it notices the
    /// silence), then close. Waits two seconds at most for the broker.
    pub async fn shutdown(&self) {
        let names: Vec<String> = self.inner.served.borrow().keys().cloned().collect();
        let goodbyes = futures::future::join_all(names.iter().map(|name| self.unregister(name)));
        match tokio::time::timeout(GOODBYE_TIMEOUT, goodbyes).await {
            Ok(results) => {
                for (name, result) in names.iter().zip(results) {
                    if let Err(error) = result {
                        tracing::warn!(module = %name, %error, "could not unregister on shutdown");
                    }
                }
            }
            Err(_) => {
                tracing::warn!(url = %self.inner.url, "the broker did not free this session's modules in time")
            }
        }
        self.close();
    }

    /// Close the connection: no more calls, heartbeats or served modules. The broker
    /// notices the silence and unregisters what this session had registered;
    /// [`shutdown`](Self::shutdown) frees them at once.
    pub fn close(&self) {
        self.inner.closed.send_replace(true);
        *self.inner.writer.borrow_mut() = Writer::Disconnected;
        self.inner.liveness.borrow_mut().take();
    }

    async fn read_until_lost(&self, mut receiver: DealerRecvHalf) {
        let silence = Duration::from_millis(HEARTBEAT_TIMEOUT_MS + HEARTBEAT_INTERVAL_MS);
        let mut closed = self.inner.closed.subscribe();
        loop {
            let next = tokio::select! {
                next = tokio::time::timeout(silence, receiver.recv()) => next,
                _ = closed.changed() => break,
            };
            match next {
                Ok(Ok(message)) => match decode(message) {
                    Ok(envelope) => self.on_envelope(envelope),
                    Err(error) => tracing::warn!(%error, "unreadable frame from the broker"),
                },
                Ok(Err(error)) => {
                    tracing::warn!(%error, "connection to the broker lost");
                    break;
                }
                Err(_) => {
                    tracing::warn!(url = %self.inner.url, "broker silent, reconnecting");
                    break;
                }
            }
        }
        *self.inner.writer.borrow_mut() = Writer::Disconnected;
        let pending: Vec<_> = self.inner.pending.borrow_mut().drain().collect();
        for (_, sender) in pending {
            let _ = sender.send(Err(CallError::new("connection to the broker lost")));
        }
    }

    fn on_envelope(&self, envelope: Envelope) {
        match envelope {
            Envelope::Reply { id, value } => self.resolve(id, Ok(value)),
            Envelope::Error { id: 0, message } => tracing::warn!(%message, "broker error"),
            Envelope::Error { id, message } => self.resolve(id, Err(CallError::new(message))),
            Envelope::Event { name, value, lost } => {
                if lost > 0 {
                    tracing::warn!(event = %name, lost, "the broker dropped events: this client fell behind");
                }
                if let Some(streams) = self.inner.subscriptions.borrow_mut().get_mut(&name) {
                    streams.retain_mut(|stream| {
                        let event =
                            Event { name: name.clone(), value: value.clone(), lost: stream.lost + lost };
                        match stream.sender.try_send(event) {
                            Ok(()) => stream.lost = 0,
                            Err(mpsc::error::TrySendError::Full(_)) => stream.lost += lost + 1,
                            Err(mpsc::error::TrySendError::Closed(_)) => return false,
                        }
                        true
                    });
                }
                self.consumed();
            }
            Envelope::Callback { module, method, event, value, message, lost } => {
                self.run_callback(module, method, vec![event.into(), value, message], lost)
            }
            Envelope::Call { id, module, method, args } => self.serve(id, module, method, args, false),
            Envelope::Post { id, module, method, args } => self.serve(id, module, method, args, true),
            Envelope::Welcome { .. } => self.restore(),
            Envelope::Heartbeat => {}
            other => tracing::debug!(?other, "unexpected message from the broker"),
        }
    }

    /// One event or callback consumed: acknowledge them in batches.
    fn consumed(&self) {
        let unacked = self.inner.events_unacked.get() + 1;
        if unacked >= ACK_EVERY {
            self.send(&Envelope::Ack { count: unacked });
            self.inner.events_unacked.set(0);
        } else {
            self.inner.events_unacked.set(unacked);
        }
    }

    fn run_callback(&self, module: String, method: String, args: Vec<Value>, lost: u64) {
        let recipient = self.inner.served.borrow().get(&module).map(|m| m.recipient.clone());
        let session = self.clone();
        actix_rt::spawn(async move {
            let result = match recipient {
                None => Err(CallError::new(format!("no module named {module} in this process"))),
                Some(recipient) => recipient
                    .send(Invoke { method: method.clone(), args, post: false, caller: Caller::Broker, lost })
                    .await
                    .unwrap_or_else(|_| Err(CallError::new(format!("module {module} has stopped")))),
            };
            if let Err(error) = result {
                tracing::warn!(%module, %method, %error, "event callback failed");
            }
            session.consumed();
        });
    }

    fn serve(&self, id: u64, module: String, method: String, args: Vec<Value>, post: bool) {
        let recipient = self.inner.served.borrow().get(&module).map(|m| m.recipient.clone());
        let session = self.clone();
        let connection = self.inner.connection.get();
        let exit = !post && method == "exit";
        actix_rt::spawn(async move {
            let result = match recipient {
                None => Err(CallError::new(format!("no module named {module} in this process"))),
                Some(recipient) => recipient
                    .send(Invoke { method, args, post, caller: Caller::Broker, lost: 0 })
                    .await
                    .unwrap_or_else(|_| Err(CallError::new(format!("module {module} has stopped")))),
            };
            if session.inner.connection.get() != connection {
                tracing::debug!(%module, id, "reply dropped: the call came on a connection since replaced");
                return;
            }
            let exited = exit && result.is_ok();
            session.send(&match result {
                Ok(value) => Envelope::Reply { id, value },
                Err(error) => Envelope::Error { id, message: error.message },
            });
            if exited {
                // After the reply (unregistering fails the calls under way, exit's own too), so
                // that the name is free before the process goes.
                if let Err(error) = session.unregister(&module).await {
                    tracing::warn!(%module, %error, "could not unregister after exit");
                }
            }
        });
    }

    fn resolve(&self, id: u64, result: CallResult) {
        if let Some(sender) = self.inner.pending.borrow_mut().remove(&id) {
            let _ = sender.send(result);
        }
    }

    /// Hand a message to the socket on the caller's task: no hop to a writer task
    /// while the socket takes messages at once, a queue behind it when it does not.
    fn send(&self, envelope: &Envelope) -> bool {
        let payload = Bytes::from(envelope.encode());
        let mut writer = self.inner.writer.borrow_mut();
        let mut half = match std::mem::replace(&mut *writer, Writer::Disconnected) {
            Writer::Disconnected => return false,
            Writer::Busy(mut backlog) => {
                backlog.push_back(payload);
                *writer = Writer::Busy(backlog);
                return true;
            }
            Writer::Idle(half) => half,
        };
        let mut sending = async move {
            let sent = half.send(ZmqMessage::from(payload)).await.is_ok();
            (half, sent)
        }
        .boxed_local();
        let mut context = std::task::Context::from_waker(futures::task::noop_waker_ref());
        if let std::task::Poll::Ready((half, sent)) = sending.poll_unpin(&mut context) {
            if sent {
                *writer = Writer::Idle(half);
            }
            return sent;
        }
        *writer = Writer::Busy(Default::default());
        drop(writer);
        let weak = Rc::downgrade(&self.inner);
        actix_rt::spawn(async move {
            let (mut half, mut sent) = sending.await;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let next = match &mut *inner.writer.borrow_mut() {
                    Writer::Busy(backlog) if sent => backlog.pop_front(),
                    _ => None,
                };
                match next {
                    Some(payload) => sent = half.send(ZmqMessage::from(payload)).await.is_ok(),
                    None => {
                        let mut writer = inner.writer.borrow_mut();
                        // Reconnected meanwhile (Idle), or failed: this socket is done.
                        if !sent {
                            *writer = Writer::Disconnected;
                        } else if matches!(*writer, Writer::Busy(_)) {
                            *writer = Writer::Idle(half);
                        }
                        return;
                    }
                }
            }
        });
        true
    }

    /// Send a request and wait for its reply, or until `timeout` if there is one.
    fn request(
        &self,
        build: impl FnOnce(u64) -> Envelope,
        timeout: Option<Duration>,
    ) -> impl std::future::Future<Output = CallResult> + 'static {
        let id = self.inner.next_id.get() + 1;
        self.inner.next_id.set(id);
        let envelope = build(id);
        let (sender, receiver) = oneshot::channel();
        self.inner.pending.borrow_mut().insert(id, sender);
        let sent = self.send(&envelope);
        let weak = Rc::downgrade(&self.inner);
        let what = match &envelope {
            Envelope::Call { module, method, .. } | Envelope::Post { module, method, .. } => {
                format!("{module}.{method}")
            }
            _ => "request".to_owned(),
        };
        async move {
            if !sent {
                if let Some(inner) = weak.upgrade() {
                    inner.pending.borrow_mut().remove(&id);
                }
                return Err(CallError::new(format!("{what}: not connected to the broker")));
            }
            let lost = |_| CallError::new(format!("{what}: connection to the broker lost"));
            let Some(timeout) = timeout else { return receiver.await.map_err(lost)? };
            match tokio::time::timeout(timeout, receiver).await {
                Ok(answer) => answer.map_err(lost)?,
                Err(_) => {
                    if let Some(inner) = weak.upgrade() {
                        inner.pending.borrow_mut().remove(&id);
                    }
                    Err(CallError::new(format!("{what} timed out after {} ms", timeout.as_millis())))
                }
            }
        }
    }

    /// Call `module.method(args)` (or post it as a task), with the session's call limit.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        self.call_within(module, method, args, post, self.inner.call_timeout.get()).await
    }

    /// Call with a limit of its own: `None` waits as long as the broker and callee live.
    pub async fn call_within(
        &self,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
        timeout: Option<Duration>,
    ) -> CallResult {
        let callback_setup =
            (module == "ALMemory" && !post && method.contains("ubscribeTo")).then(|| args.clone());
        let (module, method_name) = (module.to_owned(), method.to_owned());
        let result = self
            .request(
                |id| {
                    if post {
                        Envelope::Post { id, module, method: method_name, args }
                    } else {
                        Envelope::Call { id, module, method: method_name, args }
                    }
                },
                timeout,
            )
            .await;
        if let (Some(args), Ok(_)) = (callback_setup, &result) {
            self.note_callback_subscription(method, &args);
        }
        result
    }

    /// Receive every event named `event`.
    pub async fn subscribe(&self, event: &str) -> Result<EventStream, CallError> {
        let (sender, receiver) = mpsc::channel(1024);
        let first = {
            let mut subscriptions = self.inner.subscriptions.borrow_mut();
            let streams = subscriptions.entry(event.to_owned()).or_default();
            streams.push(StreamSlot { sender, lost: 0 });
            streams.len() == 1
        };
        if first {
            let name = event.to_owned();
            let timeout = self.inner.call_timeout.get();
            if let Err(error) = self.request(|id| Envelope::Subscribe { id, event: name }, timeout).await {
                self.inner.subscriptions.borrow_mut().remove(event);
                return Err(error);
            }
        }
        Ok(EventStream::new(receiver))
    }

    /// Serve `recipient` as module `name` to everyone connected to the broker.
    pub(crate) async fn register(
        &self,
        name: &str,
        recipient: Recipient<Invoke>,
        methods: Vec<MethodInfo>,
    ) -> Result<(), CallError> {
        let module = name.to_owned();
        let announced = methods.clone();
        let timeout = self.inner.call_timeout.get();
        self.request(|id| Envelope::Register { id, module, methods: announced }, timeout).await?;
        self.inner.served.borrow_mut().insert(name.to_owned(), ServedModule { recipient, methods });
        Ok(())
    }
}

fn decode(message: ZmqMessage) -> Result<Envelope, String> {
    let frame = message.into_vec().into_iter().next().unwrap_or_default();
    Envelope::decode(&frame, DEFAULT_MAX_FRAME_BYTES).map_err(|error| error.to_string())
}
