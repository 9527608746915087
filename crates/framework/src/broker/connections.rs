//! What the broker knows of one connected client: its connection, modules, subscriptions,
//! liveness, and the bounded queue of messages waiting to be written to it.

use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;

use super::adapter::Connection;
use super::events::Registry;

/// Messages for one client that its socket did not take at once, in order.
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) queue: VecDeque<Bytes>,
    pub(crate) bytes: usize,
    /// A task is writing to this client: new messages go behind it.
    pub(crate) writing: bool,
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
