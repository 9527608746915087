//! The client side: every connected client (its connection, modules, subscriptions,
//! liveness, event window and the bounded queue of messages waiting to be written to it),
//! the sessions that tie liveness connections to main ones, the clients that said goodbye
//! lately, and the limits and counters of all that.
//!
//! [`ClientSide`] owns this state in its own cell; its behaviour is here (calls in flight,
//! each client's modules and streams counted against its limits), in `sessions.rs` (client
//! life), `outbox.rs` (writing to clients), `fanout.rs` (event windows) and `stats.rs` (each
//! client's entry). It never borrows the router's cell: what it needs of the router (how
//! many callbacks a client's modules hold) is passed in, and what the router must do when
//! a client goes, it learns through the [`Departures`] hook the broker gives it.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use zeromq::UnfinishedBudget;

use super::adapter::Connection;
use super::limits::Limits;
use crate::error::CallError;
use crate::hashing::KeyedMap;
use crate::identity::ClientId;

/// What the router does when the client side forgets a client (its goodbye, its silence, a
/// bound it broke, a closed connection): forget its subscriptions, its modules and the
/// calls it waits for. The broker gives it when it joins the two halves.
pub(super) type Departures = Box<dyn Fn(&ClientId, &ClientState)>;

/// The client side's counters, as `ServiceDirectory.stats` shows them.
#[derive(Default)]
pub(super) struct ClientCounters {
    pub(super) bad_frames: Cell<u64>,
    pub(super) refused: Cell<u64>,
    pub(super) sends_deferred: Cell<u64>,
    pub(super) replies_encoded_aside: Cell<u64>,
    pub(super) clients_disconnected: Cell<u64>,
}

/// The client side of the broker: its state, its limits, its counters.
pub(crate) struct ClientSide {
    pub(super) limits: Limits,
    /// `max_unfinished_bytes`, shared by every connection of every wire.
    pub(super) unfinished: Arc<UnfinishedBudget>,
    /// Silence after which a client that heartbeats is dropped.
    pub(super) client_timeout: Duration,
    pub(super) state: RefCell<Clients>,
    pub(super) counters: ClientCounters,
    departures: Departures,
}

impl ClientSide {
    pub(super) fn new(limits: Limits, client_timeout: Duration, departures: Departures) -> ClientSide {
        ClientSide {
            unfinished: UnfinishedBudget::new(limits.max_unfinished_bytes),
            limits,
            client_timeout,
            state: RefCell::default(),
            counters: ClientCounters::default(),
            departures,
        }
    }

    /// Tell the router that `client` is gone, its state already out of this side's cell.
    pub(super) fn departed_client(&self, client: &ClientId, gone: &ClientState) {
        (self.departures)(client, gone);
    }

    /// Whether `client` is connected (not forgotten).
    pub(super) fn knows(&self, client: &ClientId) -> bool {
        self.state.borrow().connected.contains_key(client)
    }

    /// Count a call of `client` as in flight, within `max_calls_in_flight`: the connection it
    /// came from, `None` for a client the broker does not know (then nothing is counted).
    #[inline]
    pub(super) fn begin_call(
        &self,
        client: &ClientId,
        module: &str,
        method: &str,
    ) -> Result<Option<Rc<dyn Connection>>, CallError> {
        let limit = self.limits.max_calls_in_flight;
        let mut clients = self.state.borrow_mut();
        let Some(caller) = clients.connected.get_mut(client) else { return Ok(None) };
        if caller.calls_in_flight >= limit {
            return Err(CallError::refused(format!(
                "{module}.{method}: this client already has max_calls_in_flight ({limit}) calls under way"
            )));
        }
        caller.calls_in_flight += 1;
        Ok(Some(Rc::clone(&caller.connection)))
    }

    /// A call [`Self::begin_call`] counted was refused after all: no longer in flight.
    pub(super) fn end_call(&self, client: &ClientId) {
        if let Some(caller) = self.state.borrow_mut().connected.get_mut(client) {
            caller.calls_in_flight = caller.calls_in_flight.saturating_sub(1);
        }
    }

    /// Count `module` among `client`'s, within `max_modules`: whether it is new to it.
    pub(super) fn add_module(&self, client: &ClientId, module: &str) -> Result<bool, CallError> {
        let max_modules = self.limits.max_modules;
        let mut clients = self.state.borrow_mut();
        let owner = clients.connected.get_mut(client).ok_or_else(|| CallError::refused("unknown client"))?;
        if !owner.modules.contains(module) && owner.modules.len() >= max_modules {
            tracing::warn!(module, %client, max_modules, "registration refused");
            return Err(CallError::refused(format!(
                "this client already registered max_modules ({max_modules}) modules"
            )));
        }
        Ok(owner.modules.insert(module.to_owned()))
    }

    /// `client` no longer serves `module`: whether it did.
    pub(super) fn remove_module(&self, client: &ClientId, module: &str) -> bool {
        let mut clients = self.state.borrow_mut();
        clients.connected.get_mut(client).is_some_and(|owner| owner.modules.remove(module))
    }

    /// `client`'s stream of `event`, within `max_subscriptions` (its modules' callbacks
    /// counted by `callbacks_of`): whether the router must add it (false for a client the
    /// broker does not know).
    pub(super) fn subscribe(
        &self,
        client: &ClientId,
        event: &str,
        callbacks_of: impl FnOnce(&HashSet<String>) -> usize,
    ) -> Result<bool, CallError> {
        let max_subscriptions = self.limits.max_subscriptions;
        let mut clients = self.state.borrow_mut();
        let Some(known) = clients.connected.get_mut(client) else { return Ok(false) };
        if !known.events.contains(event) && known.subscriptions(callbacks_of) >= max_subscriptions {
            return Err(CallError::refused(format!(
                "this client already holds max_subscriptions ({max_subscriptions})"
            )));
        }
        known.events.insert(event.to_owned());
        Ok(true)
    }

    /// `client` no longer streams `event`.
    pub(super) fn unsubscribe(&self, client: &ClientId, event: &str) {
        if let Some(known) = self.state.borrow_mut().connected.get_mut(client) {
            known.events.remove(event);
        }
    }

    /// The subscriptions `client` holds (its modules' callbacks counted by `callbacks_of`);
    /// `None` for a client the broker does not know.
    pub(super) fn subscriptions_of(
        &self,
        client: &ClientId,
        callbacks_of: impl FnOnce(&HashSet<String>) -> usize,
    ) -> Option<usize> {
        self.state.borrow().connected.get(client).map(|known| known.subscriptions(callbacks_of))
    }

    /// `client`'s name and id (`naocli (client-0a1b…)`), or its id alone when it is gone.
    pub(super) fn describe(&self, client: &ClientId) -> String {
        match self.state.borrow().connected.get(client) {
            Some(known) => format!("{} ({client})", known.name),
            None => client.to_string(),
        }
    }

    /// The name `client` gave in its hello, or its id when it is gone.
    pub(super) fn name_of(&self, client: &ClientId) -> String {
        let clients = self.state.borrow();
        clients.connected.get(client).map_or_else(|| client.to_string(), |known| known.name.clone())
    }
}

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

    /// Its event streams and the NAOqi callbacks of its modules (as the router counts them
    /// with `callbacks_of`), counted against `max_subscriptions`.
    pub(crate) fn subscriptions(&self, callbacks_of: impl FnOnce(&HashSet<String>) -> usize) -> usize {
        self.events.len() + callbacks_of(&self.modules)
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
