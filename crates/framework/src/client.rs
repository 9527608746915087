//! A connection to a broker: calls, event streams, served modules, NAOqi callbacks, and
//! everything restored by itself after a reconnect.

mod calls;
mod keys;
mod liveness;
mod reading;
mod serving;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::rc::{Rc, Weak};
use std::time::Duration;

use bytes::Bytes;
use naobroker_protocol::{CallbackSubscription, Envelope, HEARTBEAT_INTERVAL_MS};
use tokio::sync::{mpsc, oneshot, watch};
use zeromq::{DealerRecvHalf, Socket, SocketRecv, SocketSend, ZmqMessage};

use crate::error::{CallError, CallResult, ConnectError};
use crate::event::Event;
use crate::hashing::KeyedMap;
use crate::invoke::ModuleHandle;
pub use keys::ClientKeys;
use liveness::Liveness;
use reading::decode;

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
/// Between two attempts to reach a broker that went away.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);
/// How long [`ClientSession::shutdown`] waits for the broker to free the session's modules.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(2);

struct ServedModule {
    actor: ModuleHandle,
}

/// One local stream of a subscription, with the events it missed because it was full.
struct StreamSlot {
    sender: mpsc::Sender<Event>,
    lost: u64,
}

/// The NAOqi callbacks this session subscribed, subscribed again after a reconnect: keyed by
/// (event, module).
type CallbackSubscriptions = HashMap<(String, String), CallbackSubscription>;

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
    pending: RefCell<HashMap<u64, oneshot::Sender<CallResult>, BuildHasherDefault<CallIdHasher>>>,
    next_id: Cell<u64>,
    /// Looked up at every event: hashed by aHash (`hashing.rs`), not SipHash.
    subscriptions: RefCell<KeyedMap<String, Vec<StreamSlot>>>,
    callbacks: RefCell<CallbackSubscriptions>,
    served: RefCell<HashMap<String, ServedModule>>,
    events_unacked: Cell<u32>,
    closed: watch::Sender<bool>,
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

/// Hashes the ids of this session's own requests, which it numbers 1, 2, 3...: a multiply
/// (Fibonacci hashing) instead of SipHash, which took 0.9 k instructions of a call's 12.6 k
/// in a client keeping 128 calls under way. No peer chooses these keys, so there is nothing
/// to flood.
#[derive(Default)]
struct CallIdHasher(u64);

impl Hasher for CallIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = (self.0 ^ id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
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
    /// Connect to `url` (`tcp://127.0.0.1:9559`, `ipc:///path`, `ipc://@name`: Linux's
    /// abstract socket). Fails when no broker answers within two seconds. CURVE keys come
    /// from the environment when set ([`ClientKeys::from_env`]).
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
                closed: watch::channel(false).0,
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
        let (weak, closed) = (Rc::downgrade(&session.inner), &session.inner.closed);
        actix_rt::spawn(read_and_reconnect(weak.clone(), closed.subscribe(), receiver));
        actix_rt::spawn(heartbeat(weak, closed.subscribe()));
        Ok(session)
    }

    /// A limit for every call made through this session. Without one (the default) a
    /// call waits as long as the broker and the callee are alive.
    pub fn set_call_timeout(&self, timeout: Option<Duration>) {
        self.inner.call_timeout.set(timeout);
    }

    /// Who this session is, in the protocol version it speaks.
    fn hello(&self) -> Envelope {
        Envelope::Hello {
            version: naobroker_protocol::PROTOCOL_VERSION,
            client: self.inner.client_name.clone(),
            session: self.inner.session_tag.clone(),
            role: naobroker_protocol::Role::Main,
        }
    }

    /// Open a socket, say hello and wait for the broker's welcome.
    async fn open(&self) -> Result<DealerRecvHalf, ConnectError> {
        let mut socket = zeromq::DealerSocket::with_options(keys::socket_options(self.inner.keys.as_ref()));
        tokio::time::timeout(CONNECT_TIMEOUT, socket.connect(&self.inner.url))
            .await
            .map_err(|_| ConnectError::TimedOut)??;
        let (mut send_half, mut recv_half) = socket.split();
        send_half.send(ZmqMessage::from(self.hello().encode())).await?;
        let welcome = tokio::time::timeout(CONNECT_TIMEOUT, recv_half.recv())
            .await
            .map_err(|_| ConnectError::NoWelcome)??;
        match decode(welcome)? {
            Envelope::Welcome { .. } => {}
            Envelope::Error { message, .. } => return Err(ConnectError::Refused(message)),
            other => return Err(ConnectError::Unexpected(Box::new(other))),
        }
        *self.inner.writer.borrow_mut() = Writer::Idle(send_half);
        self.inner.connection.set(self.inner.connection.get() + 1);
        Ok(recv_half)
    }

    /// Say goodbye, then close: the broker answers and forgets this session there and then
    /// (its modules' names are free for anyone once this returns, its subscriptions gone)
    /// instead of waiting out its silence. Waits two seconds at most for the broker.
    pub async fn shutdown(&self) {
        self.inner.served.borrow_mut().clear();
        self.inner.callbacks.borrow_mut().clear();
        let goodbye = self.request(|id| Envelope::Goodbye { id }, Some(GOODBYE_TIMEOUT));
        if let Err(error) = goodbye.await {
            let url = &self.inner.url;
            tracing::warn!(%url, %error, "the broker did not hear this session's goodbye");
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
}

/// Read the broker's messages; when the connection is lost, open a new one and register
/// again what the session had, until the session is closed or gone.
async fn read_and_reconnect(
    weak: Weak<Inner>,
    mut closed: watch::Receiver<bool>,
    mut receiver: DealerRecvHalf,
) {
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
                Err(_) => tokio::time::sleep(RECONNECT_PAUSE).await,
            }
        };
    }
}

/// Heartbeat the broker every interval until the session is closed or gone.
async fn heartbeat(weak: Weak<Inner>, mut closed: watch::Receiver<bool>) {
    let mut ticker = tokio::time::interval(Duration::from_millis(HEARTBEAT_INTERVAL_MS));
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = closed.changed() => break,
        }
        let Some(inner) = weak.upgrade() else { break };
        ClientSession { inner }.send(&Envelope::Heartbeat);
    }
}
