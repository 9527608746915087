//! The client side's port: all a wire adapter reaches of the broker.
//!
//! An adapter holds a [`WirePort`], not the [`Broker`]: the client side itself (it tells it
//! what arrived on a connection and that a connection closed, writes its own answers behind
//! the client's queue, reads the limits) and a narrow handle to the router for what clients
//! ask (requests, and the module directory its protocol shows). Routing, permissions and the
//! modules themselves stay behind the handle.

use std::rc::{Rc, Weak};
use std::sync::Arc;

use bytes::Bytes;
use naobroker_protocol::MethodInfo;
use zeromq::UnfinishedBudget;

use super::adapter::{Connection, Request, Wire};
use super::clients::ClientSide;
use super::limits::Limits;
use super::{Broker, WeakBroker};
use crate::error::CallError;
use crate::identity::ClientId;

/// What a wire adapter sees of a broker.
#[derive(Clone)]
pub struct WirePort {
    clients: Rc<ClientSide>,
    requests: Requests,
}

/// The router as a wire reaches it: what clients ask, and the module directory.
#[derive(Clone)]
struct Requests {
    broker: Broker,
}

/// A port whose broker may be gone: what a wire's tasks hold, so that they end with it.
#[derive(Clone)]
pub struct WeakPort {
    clients: Weak<ClientSide>,
    broker: WeakBroker,
}

impl WeakPort {
    pub fn upgrade(&self) -> Option<WirePort> {
        let clients = self.clients.upgrade()?;
        let broker = self.broker.upgrade()?;
        Some(WirePort { clients, requests: Requests { broker } })
    }
}

impl Broker {
    /// The port a wire adapter serves its clients through.
    pub fn port(&self) -> WirePort {
        WirePort { clients: Rc::clone(self.clients()), requests: Requests { broker: self.clone() } }
    }
}

impl WirePort {
    pub fn downgrade(&self) -> WeakPort {
        WeakPort { clients: Rc::downgrade(&self.clients), broker: self.requests.broker.downgrade() }
    }

    /// The limits every client is held to.
    pub fn limits(&self) -> &Limits {
        &self.clients.limits
    }

    /// What every connection of every wire holds for messages it has not received whole.
    pub fn unfinished_budget(&self) -> &Arc<UnfinishedBudget> {
        &self.clients.unfinished
    }

    /// A wire now listening: its counters join the broker's stats.
    pub fn attach_wire(&self, wire: Rc<dyn Wire>) {
        self.requests.broker.attach_wire(wire)
    }

    /// Something arrived on `client`'s connection; a client the broker does not know is
    /// opened with the connection `open` makes. Answers whether it was known.
    pub fn arrived(&self, client: &ClientId, open: impl FnOnce() -> Rc<dyn Connection>) -> bool {
        self.clients.arrived(client, open)
    }

    /// Handle what `client` asked.
    pub fn request(&self, client: ClientId, request: Request<'_>) {
        self.requests.broker.request(client, request)
    }

    /// `client`'s connection closed: forget the client with its modules and subscriptions.
    pub fn closed(&self, client: &ClientId) {
        self.clients.remove(client);
    }

    /// Whether `client` said goodbye lately: what it still sends is late, to be ignored.
    pub fn departed(&self, client: &ClientId) -> bool {
        self.clients.departed(client)
    }

    /// Tell `client` it is admitted (a wire whose clients must learn the broker forgot them).
    pub fn welcome(&self, client: &ClientId) {
        self.clients.welcome(client)
    }

    /// Write `payload`, already in `client`'s encoding, behind what is queued for it: a wire's
    /// own answers that the broker does not make (a handshake, a directory its protocol
    /// has), held to the same bounded queue.
    pub fn write_to(&self, client: &ClientId, payload: Bytes) {
        self.clients.send_bytes(client, payload)
    }

    /// Refuse a message the wire could not read (`id` when it could read one).
    pub fn bad_message(&self, client: &ClientId, id: u64, message: String) {
        self.clients.bad_message(client, id, message)
    }

    /// Answer a request refused before it was counted as in flight.
    pub fn refuse(&self, client: &ClientId, id: u64, error: CallError) {
        self.clients.refuse(client, id, error)
    }

    /// Names of every registered module, for a protocol that lists its services.
    pub fn module_names(&self) -> Vec<String> {
        self.requests.broker.module_names()
    }

    /// The methods of module `name`, for a protocol that describes its services.
    pub fn module_methods(&self, name: &str) -> Option<Vec<MethodInfo>> {
        self.requests.broker.module_methods(name)
    }
}
