//! The qi listener: the accept loop, the open connections, and the wire as the broker sees it
//! (its counters, and each module coming or going announced to the clients that listen).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::time::Duration;

use naobroker_framework::wire::WirePort;
use naobroker_framework::wire::{ConnectionRole, Request, Wire};
use naobroker_framework::ClientId;
use naobroker_protocol::PROTOCOL_VERSION;
use naobroker_qi::{Address, MessageType, OBJECT_MAIN, SERVICE_DIRECTORY};
use tokio::net::{TcpListener, TcpStream};

use crate::connection::QiConnection;
use crate::methods::{SERVICE_ADDED, SERVICE_REMOVED};
use crate::reader;
use crate::shared::{bump, Shared};

/// The first byte of every qi client's [`ClientId`]: the ZeroMQ wire starts its own with its
/// socket's index (0 or 1).
const CLIENT_ID_PREFIX: u8 = b'Q';

/// TCP keepalive on each connection: qi clients send nothing while idle, so a peer whose
/// machine vanished is found by the kernel's probes (idle time, then probes a second apart).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(2);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);
const KEEPALIVE_PROBES: u32 = 3;

/// After a failed accept (out of file descriptors), wait before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

pub(crate) struct Listener {
    shared: Rc<Shared>,
    connections: RefCell<HashMap<ClientId, Weak<QiConnection>>>,
    next_connection: Cell<u64>,
}

impl Listener {
    pub(crate) fn new(broker: &WirePort) -> Rc<Listener> {
        Rc::new(Listener {
            shared: Rc::new(Shared::new(broker)),
            connections: RefCell::default(),
            next_connection: Cell::new(1),
        })
    }

    /// A new client: named for the broker, which learns of it at once.
    fn open(&self, broker: &WirePort, stream: TcpStream, peer: SocketAddr) -> Rc<QiConnection> {
        let number = self.next_connection.get();
        self.next_connection.set(number + 1);
        let mut name = vec![CLIENT_ID_PREFIX];
        name.extend_from_slice(&number.to_le_bytes());
        let client = ClientId::new(name.into());
        let shared = Rc::clone(&self.shared);
        let connection = Rc::new(QiConnection::new(client.clone(), number, stream, shared));
        self.connections.borrow_mut().insert(client.clone(), Rc::downgrade(&connection));
        bump(&self.shared.counters.connections);
        broker.arrived(&client, || connection.clone());
        // The qi wire writes its own errors (libqi's carry no kind): the version is the newest.
        let version = PROTOCOL_VERSION;
        let name = format!("qi {peer}");
        let hello = Request::Hello { version, client: name, session: Vec::new(), role: ConnectionRole::Main };
        broker.request(client, hello);
        tracing::debug!(%peer, "qi client connected");
        connection
    }

    fn open_connections(&self) -> Vec<Rc<QiConnection>> {
        self.connections.borrow().values().filter_map(Weak::upgrade).collect()
    }
}

impl Wire for Listener {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.shared.counters;
        vec![
            ("qi_connections", c.connections.get()),
            ("qi_bad_headers", c.bad_headers.get()),
            ("qi_oversized_frames", c.oversized_frames.get()),
            ("qi_stalled_frames", c.stalled_frames.get()),
        ]
    }

    /// A module came or went: a service for qi clients, announced to those that listen.
    fn module_changed(&self, module: &str, present: bool) {
        let changed = {
            let mut services = self.shared.services.borrow_mut();
            if present {
                services.add(module).map(|id| (id, SERVICE_ADDED))
            } else {
                services.remove(module).map(|id| (id, SERVICE_REMOVED))
            }
        };
        let (Some((id, signal)), Some(broker)) = (changed, self.shared.broker.upgrade()) else { return };
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

/// Accept clients on `socket` for as long as the broker lives; each is read until it ends.
pub(crate) async fn accept(listener: Rc<Listener>, socket: TcpListener) {
    loop {
        let accepted = socket.accept().await;
        let Some(broker) = listener.shared.broker.upgrade() else { return };
        match accepted {
            Ok((stream, peer)) => {
                keep_alive(&stream);
                let connection = listener.open(&broker, stream, peer);
                let listener = Rc::clone(&listener);
                actix_rt::spawn(async move {
                    let client = connection.client.clone();
                    reader::read(connection).await;
                    listener.connections.borrow_mut().remove(&client);
                });
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
