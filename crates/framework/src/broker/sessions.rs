//! Client life: hello and sessions, liveness, heartbeats, silence, and removal.

use super::*;

impl Broker {
    /// Note that `peer` is alive (and, for a liveness connection, its session's main
    /// connection). Answers whether the peer was known before.
    pub(super) fn touch(&self, peer: &Bytes) -> bool {
        let now = Instant::now();
        let mut state = self.inner.state.borrow_mut();
        let State { clients, sessions, .. } = &mut *state;
        let known = clients.contains_key(peer);
        let client = clients.entry(peer.clone()).or_insert_with(ClientState::new);
        client.last_seen = now;
        let main = client.keeps_alive.as_ref().and_then(|session| sessions.get(session));
        if let Some(main) = main.and_then(|main| clients.get_mut(main)) {
            main.last_seen = now;
        }
        known
    }

    pub(super) fn hello(&self, peer: &Bytes, name: String, session: Vec<u8>, role: Role) {
        let replaced = {
            let mut state = self.inner.state.borrow_mut();
            let Some(client) = state.clients.get_mut(peer) else { return };
            client.name = name;
            if session.is_empty() {
                return;
            }
            match role {
                Role::Liveness => {
                    client.keeps_alive = Some(session);
                    return;
                }
                Role::Main => client.session = session.clone(),
            }
            state.sessions.insert(session, peer.clone()).filter(|previous| previous != peer)
        };
        if let Some(previous) = replaced {
            // The same session connected again: its old connection is dead, and what it
            // had registered must be free for the new one at once.
            tracing::info!(client = %ClientId(previous.clone()), "replaced by a new connection of its session");
            self.remove_client(&previous);
        }
    }

    /// Drop a client that broke a bound: its state, modules and connection.
    pub(super) fn disconnect(&self, peer: &Bytes, reason: &str) {
        bump(&self.inner.counters.clients_disconnected);
        tracing::warn!(client = %ClientId(peer.clone()), reason, "client disconnected");
        self.remove_client(peer);
        endpoints::drop_peer(&self.inner.senders, peer);
    }

    pub(super) fn remove_client(&self, peer: &Bytes) {
        let Some(client) = self.inner.state.borrow_mut().clients.remove(peer) else { return };
        tracing::info!(client = %client.name, id = %ClientId(peer.clone()), modules = ?client.modules, "client gone");
        {
            let mut state = self.inner.state.borrow_mut();
            for event in &client.events {
                state.events.remove_client(event, peer);
            }
            if state.sessions.get(&client.session) == Some(peer) {
                state.sessions.remove(&client.session);
            }
            state
                .pending
                .retain(|_, call| !matches!(&call.origin, Origin::Client { peer: p, .. } if p == peer));
        }
        for module in &client.modules {
            self.remove_module(module);
        }
    }

    pub(super) fn on_tick(&self, heartbeat: bool) {
        let now = Instant::now();
        let (silent, peers) = {
            let state = self.inner.state.borrow();
            let timeout = self.inner.config.client_timeout;
            let silent: Vec<Bytes> = state
                .clients
                .iter()
                .filter(|(_, client)| now.duration_since(client.last_seen) > timeout)
                .map(|(peer, _)| peer.clone())
                .collect();
            let peers: Vec<Bytes> =
                if heartbeat { state.clients.keys().cloned().collect() } else { Vec::new() };
            (silent, peers)
        };
        for peer in &silent {
            self.remove_client(peer);
        }
        for peer in peers {
            self.send(&peer, &Envelope::Heartbeat);
        }
    }
}
