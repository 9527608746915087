//! Client life, on the client side: opening, hello and sessions, liveness, heartbeats,
//! silence, and removal.

use std::collections::HashSet;
use std::rc::Rc;
use std::time::Instant;

use super::adapter::{Connection, ConnectionRole, Outbound};
use super::bump;
use super::clients::{ClientSide, ClientState, Clients};
use crate::identity::ClientId;

impl ClientSide {
    /// Something arrived on `client`'s connection: it is alive (and, for a liveness
    /// connection, its session's main connection). A client the broker does not know (never
    /// met, or dropped for its silence or a bound) is opened with the connection `open`
    /// makes. Answers whether it was known.
    pub(super) fn arrived(&self, client: &ClientId, open: impl FnOnce() -> Rc<dyn Connection>) -> bool {
        let now = Instant::now();
        let mut clients = self.state.borrow_mut();
        let Clients { connected: clients, sessions, .. } = &mut *clients;
        // One lookup for a client the broker knows, every message but its first.
        let main = match clients.get_mut(client) {
            Some(entry) => {
                entry.last_seen = now;
                entry.keeps_alive.as_ref().and_then(|session| sessions.get(session)).cloned()
            }
            None => {
                tracing::debug!(%client, "client connected");
                clients.insert(client.clone(), ClientState::new(open()));
                return false;
            }
        };
        if let Some(main) = main.and_then(|main| clients.get_mut(&main)) {
            main.last_seen = now;
        }
        true
    }

    pub(super) fn hello(
        self: &Rc<Self>,
        client: &ClientId,
        name: String,
        session: Vec<u8>,
        role: ConnectionRole,
    ) {
        let replaced = {
            let mut clients = self.state.borrow_mut();
            let session_left = role == ConnectionRole::Liveness && clients.departed.session(&session);
            let Some(known) = clients.connected.get_mut(client) else { return };
            tracing::debug!(%client, name = %name, ?role, session = session.len(), "client hello");
            known.name = name;
            if session.is_empty() {
                return;
            }
            match role {
                ConnectionRole::Liveness if session_left => {
                    drop(clients);
                    // Connected a moment after its session said goodbye.
                    tracing::debug!(%client, "liveness connection of a session that left");
                    return self.goodbye(client);
                }
                ConnectionRole::Liveness => {
                    known.keeps_alive = Some(session);
                    return;
                }
                ConnectionRole::Main => known.session = session.clone(),
            }
            clients.sessions.insert(session, client.clone()).filter(|previous| previous != client)
        };
        if let Some(previous) = replaced {
            // The same session connected again: its old connection is dead, and what it
            // had registered must be free for the new one at once.
            tracing::info!(client = %previous, "replaced by a new connection of its session");
            self.remove(&previous);
        }
    }

    /// `client` is leaving on purpose: forget it and its session's liveness connections,
    /// with what they had registered and subscribed, without waiting out their silence.
    pub(super) fn goodbye(self: &Rc<Self>, client: &ClientId) {
        let leaving: Vec<ClientId> = {
            let mut clients = self.state.borrow_mut();
            let Some(known) = clients.connected.get(client) else { return };
            let session = known.session.clone();
            let liveness: Vec<ClientId> = clients
                .connected
                .iter()
                .filter(|(_, other)| !session.is_empty() && other.keeps_alive.as_ref() == Some(&session))
                .map(|(id, _)| id.clone())
                .collect();
            clients.departed.remember(client.clone(), session);
            for connection in &liveness {
                clients.departed.remember(connection.clone(), Vec::new());
            }
            std::iter::once(client.clone()).chain(liveness).collect()
        };
        tracing::debug!(%client, connections = leaving.len(), "client said goodbye");
        for client in &leaving {
            self.remove(client);
        }
    }

    /// Whether `client` said goodbye lately: what it still sends is late, to be ignored.
    pub(super) fn departed(&self, client: &ClientId) -> bool {
        self.state.borrow().departed.client(client)
    }

    /// Events and callbacks `client` consumed: room in its event window again.
    pub(super) fn acknowledged(&self, client: &ClientId, count: u32) {
        if let Some(known) = self.state.borrow_mut().connected.get_mut(client) {
            known.unacked = known.unacked.saturating_sub(count);
        }
    }

    /// Drop a client that broke a bound: its state, modules and connection.
    pub(super) fn disconnect(&self, client: &ClientId, reason: &str) {
        bump(&self.counters.clients_disconnected);
        tracing::warn!(%client, reason, "client disconnected");
        if let Some(connection) = self.remove(client) {
            connection.close();
        }
    }

    /// Forget a client, then tell the router, which forgets its subscriptions, modules and
    /// the calls it waits for; answers its connection when it was known.
    pub(super) fn remove(&self, client: &ClientId) -> Option<Rc<dyn Connection>> {
        let gone = {
            let mut clients = self.state.borrow_mut();
            let gone = clients.connected.remove(client)?;
            if clients.sessions.get(&gone.session) == Some(client) {
                clients.sessions.remove(&gone.session);
            }
            gone
        };
        // Routine (a goodbye, a closed connection) at debug: a drop has said why at info or warn.
        tracing::debug!(
            client = %gone.name,
            id = %client,
            modules = ?gone.modules,
            events_dropped = gone.events_dropped,
            "client gone"
        );
        self.departed_client(client, &gone);
        Some(gone.connection)
    }

    /// Drop the clients silent for longer than the client timeout, unless their session's
    /// liveness connection is still open; heartbeat the others when `heartbeat`.
    pub(super) fn on_tick(self: &Rc<Self>, heartbeat: bool) {
        let now = Instant::now();
        let (silent, clients) = {
            let clients = self.state.borrow();
            let connected = &clients.connected;
            let timeout = self.client_timeout;
            let silent_past_timeout = |known: &&ClientState| {
                known.connection.dropped_when_silent() && now.duration_since(known.last_seen) > timeout
            };
            // Only sessions with a silent connection need their liveness transport asked.
            let open_sessions: HashSet<&Vec<u8>> = match connected.values().any(|c| silent_past_timeout(&c)) {
                true => connected
                    .values()
                    .filter_map(|known| {
                        known.keeps_alive.as_ref().filter(|_| known.connection.transport_open())
                    })
                    .collect(),
                false => HashSet::new(),
            };
            let kept_open = |known: &ClientState| {
                let session = known.keeps_alive.as_ref().unwrap_or(&known.session);
                !session.is_empty() && open_sessions.contains(session)
            };
            let silent: Vec<ClientId> = connected
                .iter()
                .filter(|(_, known)| silent_past_timeout(known) && !kept_open(known))
                .map(|(client, _)| client.clone())
                .collect();
            let clients: Vec<ClientId> =
                if heartbeat { connected.keys().cloned().collect() } else { Vec::new() };
            (silent, clients)
        };
        for client in &silent {
            let timeout_ms = self.client_timeout.as_millis() as u64;
            tracing::info!(%client, timeout_ms, "client dropped: silent past the client timeout");
            self.remove(client);
        }
        for client in clients {
            self.send(&client, Outbound::Heartbeat);
        }
    }
}
