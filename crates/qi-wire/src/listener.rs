//! What every qi connection of one broker shares: the broker, the service table, the
//! machine's identity, the wire's counters and the open connections; and the accept loop.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::time::Duration;

use naobroker_framework::wire::{ConnectionRole, Request, WeakBroker, Wire};
use naobroker_framework::{Broker, ClientId};
use naobroker_qi::{Address, Limits, MessageType, OBJECT_MAIN, SERVICE_DIRECTORY};
use tokio::net::{TcpListener, TcpStream};

use crate::connection::QiConnection;
use crate::methods::ObjectTable;
use crate::reader;
use crate::services::Services;

/// The first byte of every qi client's [`ClientId`]: the ZeroMQ wire starts its own with its
/// socket's index (0 or 1).
const CLIENT_ID_PREFIX: u8 = b'Q';

/// `serviceAdded(I serviceId, s name)` and `serviceRemoved`: the ServiceDirectory's signals.
pub(crate) const SERVICE_ADDED: u32 = 106;
pub(crate) const SERVICE_REMOVED: u32 = 107;

/// TCP keepalive on each connection: qi clients send nothing while idle, so a peer whose
/// machine vanished is found by the kernel's probes (idle time, then probes a second apart).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(2);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);
const KEEPALIVE_PROBES: u32 = 3;

/// After a failed accept (out of file descriptors), wait before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Who this broker is to qi clients: libqi reuses the ServiceDirectory's socket for a service
/// whose machine id is the directory's.
pub(crate) struct Identity {
    pub(crate) machine_id: String,
    pub(crate) session_id: String,
    pub(crate) process_id: u32,
    /// The first 8 bytes of every object uid this broker hands out.
    pub(crate) uid_seed: [u8; 8],
}

fn random_u64() -> u64 {
    RandomState::new().build_hasher().finish()
}

/// A random version-4 UUID as text.
fn uuid() -> String {
    let (high, low) = (random_u64(), random_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0x0fff,
        0x8000 | (low >> 48) & 0x3fff,
        low & 0xffff_ffff_ffff
    )
}

impl Identity {
    fn new() -> Identity {
        Identity {
            machine_id: uuid(),
            session_id: uuid(),
            process_id: std::process::id(),
            uid_seed: random_u64().to_le_bytes(),
        }
    }
}

/// Counters of what the wire refused before the broker saw it, for `ServiceDirectory.stats`.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) connections: Cell<u64>,
    pub(crate) bad_headers: Cell<u64>,
    pub(crate) oversized_frames: Cell<u64>,
}

pub(crate) fn bump(counter: &Cell<u64>) {
    counter.set(counter.get() + 1);
}

pub(crate) struct Listener {
    pub(crate) broker: WeakBroker,
    pub(crate) services: RefCell<Services>,
    /// What every subscriber object offers.
    pub(crate) subscriber: Rc<ObjectTable>,
    pub(crate) identity: Identity,
    pub(crate) counters: Counters,
    /// The codec's bounds, from the broker's limits.
    pub(crate) limits: Limits,
    pub(crate) max_frame_bytes: u32,
    connections: RefCell<HashMap<ClientId, Weak<QiConnection>>>,
    next_connection: Cell<u64>,
}

impl Listener {
    pub(crate) fn new(broker: &Broker) -> Rc<Listener> {
        let limits = broker.limits();
        let mut services = Services::default();
        for module in broker.module_names() {
            services.add(&module);
        }
        Rc::new(Listener {
            broker: broker.downgrade(),
            services: RefCell::new(services),
            subscriber: Rc::new(ObjectTable::subscriber()),
            identity: Identity::new(),
            counters: Counters::default(),
            // A naobroker array is a `[m]` of dynamic values: two levels of qi per level of
            // nesting, and room for the arguments' tuple around it (the codec's own default).
            limits: Limits { max_depth: 2 * limits.max_value_depth + 4, ..Limits::default() },
            max_frame_bytes: u32::try_from(limits.max_frame_bytes).unwrap_or(u32::MAX),
            connections: RefCell::default(),
            next_connection: Cell::new(1),
        })
    }

    /// A new client: named for the broker, which learns of it at once.
    fn open(self: &Rc<Self>, broker: &Broker, stream: TcpStream, peer: SocketAddr) -> Rc<QiConnection> {
        let number = self.next_connection.get();
        self.next_connection.set(number + 1);
        let mut name = vec![CLIENT_ID_PREFIX];
        name.extend_from_slice(&number.to_le_bytes());
        let client = ClientId::new(name.into());
        let connection = Rc::new(QiConnection::new(client.clone(), number, stream, Rc::clone(self)));
        self.connections.borrow_mut().insert(client.clone(), Rc::downgrade(&connection));
        bump(&self.counters.connections);
        broker.arrived(&client, || connection.clone());
        let hello =
            Request::Hello { client: format!("qi {peer}"), session: Vec::new(), role: ConnectionRole::Main };
        broker.request(client, hello);
        tracing::debug!(%peer, "qi client connected");
        connection
    }

    pub(crate) fn forget(&self, client: &ClientId) {
        self.connections.borrow_mut().remove(client);
    }

    fn open_connections(&self) -> Vec<Rc<QiConnection>> {
        self.connections.borrow().values().filter_map(Weak::upgrade).collect()
    }
}

impl Wire for Listener {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("qi_connections", c.connections.get()),
            ("qi_bad_headers", c.bad_headers.get()),
            ("qi_oversized_frames", c.oversized_frames.get()),
        ]
    }

    /// A module came or went: a service for qi clients, announced to those that listen.
    fn module_changed(&self, module: &str, present: bool) {
        let changed = {
            let mut services = self.services.borrow_mut();
            if present {
                services.add(module).map(|id| (id, SERVICE_ADDED))
            } else {
                services.remove(module).map(|id| (id, SERVICE_REMOVED))
            }
        };
        let (Some((id, signal)), Some(broker)) = (changed, self.broker.upgrade()) else { return };
        let mut payload = id.to_le_bytes().to_vec();
        payload.extend_from_slice(&(module.len() as u32).to_le_bytes());
        payload.extend_from_slice(module.as_bytes());
        let address = Address::new(SERVICE_DIRECTORY, OBJECT_MAIN, signal);
        for connection in self.open_connections() {
            if connection.listens_to_directory(signal) {
                connection.send(&broker, MessageType::Event, address, payload.clone());
            }
        }
    }
}

/// Accept clients on `socket` for as long as the broker lives.
pub(crate) async fn accept(listener: Rc<Listener>, socket: TcpListener) {
    loop {
        let accepted = socket.accept().await;
        let Some(broker) = listener.broker.upgrade() else { return };
        match accepted {
            Ok((stream, peer)) => {
                keep_alive(&stream);
                let connection = listener.open(&broker, stream, peer);
                actix_rt::spawn(reader::read(connection));
            }
            Err(error) => {
                tracing::warn!(%error, "qi listener: accept failed");
                drop(broker);
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

fn keep_alive(stream: &TcpStream) {
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    let socket = socket2::SockRef::from(stream);
    if let Err(error) = socket.set_tcp_keepalive(&keepalive).and_then(|()| socket.set_tcp_nodelay(true)) {
        tracing::warn!(%error, "qi listener: cannot set keepalive or nodelay");
    }
}
