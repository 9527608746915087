//! The client side's own state: every connected client (its connection, modules,
//! subscriptions, liveness, event window and the bounded queue of messages waiting to be
//! written to it), the sessions that tie liveness connections to main ones, and the clients
//! that said goodbye lately.

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;

use super::adapter::Connection;
use super::events::Registry;
use crate::hashing::KeyedMap;
use crate::identity::ClientId;

/// Messages for one client that its socket did not take at once, in order.
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) queue: VecDeque<Bytes>,
    pub(crate) bytes: usize,
    /// A task is writing to this client: new messages go behind it.
    pub(crate) writing: bool,
    /// Replies to this client being encoded on a blocking thread (at most
    /// `outbox::ASIDE_PER_CLIENT`), not yet counted in `bytes`.
    pub(crate) encoding_aside: usize,
}

pub(crate) struct ClientState {
    /// Where its wire writes to it.
    pub(crate) connection: Rc<dyn Connection>,
    pub(crate) name: String,
    pub(crate) last_seen: Instant,
    pub(crate) modules: HashSet<String>,
    /// Events this client receives as a stream.
    pub(crate) events: HashSet<String>,
    /// The session tag of a main connection (Hello), so its liveness connection finds it.
    pub(crate) session: Vec<u8>,
    /// Set on a liveness connection: the session whose main connection it keeps alive.
    pub(crate) keeps_alive: Option<Vec<u8>>,
    /// Events and callbacks sent and not yet acknowledged.
    pub(crate) unacked: u32,
    pub(crate) events_dropped: u64,
    pub(crate) calls_in_flight: usize,
    pub(crate) outbox: Outbox,
}

impl ClientState {
    pub(crate) fn new(connection: Rc<dyn Connection>) -> Self {
        ClientState {
            connection,
            name: String::new(),
            last_seen: Instant::now(),
            modules: HashSet::new(),
            events: HashSet::new(),
            session: Vec::new(),
            keeps_alive: None,
            unacked: 0,
            events_dropped: 0,
            calls_in_flight: 0,
            outbox: Outbox::default(),
        }
    }

    /// Its event streams and the NAOqi callbacks of its modules, counted against
    /// `max_subscriptions`.
    pub(crate) fn subscriptions(&self, registry: &Registry) -> usize {
        self.events.len() + registry.callbacks_of(&self.modules)
    }
}

#[derive(Default)]
pub(super) struct Clients {
    pub(super) connected: KeyedMap<ClientId, ClientState>,
    /// Session tag → the client of that session's main connection.
    pub(super) sessions: HashMap<Vec<u8>, ClientId>,
    /// Connections and sessions that said goodbye, for their late messages.
    pub(super) departed: Departed,
}

/// How many goodbyes the broker remembers: enough for the late messages of the clients that
/// left in the last moments, bounded whatever the clients do.
const DEPARTED_KEPT: usize = 256;

/// The connections and sessions that said goodbye lately. A message can still follow a
/// goodbye (a heartbeat already on its way, a liveness connection that connected a moment
/// late): it must not open the client again, to be dropped for its silence 2 s later.
#[derive(Default)]
pub(crate) struct Departed {
    clients: VecDeque<ClientId>,
    sessions: VecDeque<Vec<u8>>,
}

impl Departed {
    pub(crate) fn remember(&mut self, client: ClientId, session: Vec<u8>) {
        remember(&mut self.clients, client);
        if !session.is_empty() {
            remember(&mut self.sessions, session);
        }
    }

    pub(crate) fn client(&self, client: &ClientId) -> bool {
        self.clients.contains(client)
    }

    pub(crate) fn session(&self, session: &[u8]) -> bool {
        self.sessions.iter().any(|departed| departed == session)
    }
}

fn remember<T>(kept: &mut VecDeque<T>, item: T) {
    if kept.len() == DEPARTED_KEPT {
        kept.pop_front();
    }
    kept.push_back(item);
}
