//! The broker core: the router of calls between modules and clients, with no wire in it.
//!
//! It knows modules (in-process actors and remote ones), client connections and their
//! sessions, calls under way, liveness, events and permissions. The protocols clients speak
//! are adapters on it ([`crate::wire`], the ZeroMQ one for instance): an adapter tells the
//! core what arrived on a connection as a typed [`Request`] and gives it a [`Connection`] to
//! write to.
//!
//! It is two types, each with its own state in its own cell and its own behaviour: the
//! router ([`router`]: modules and their methods, permissions, events' subscribers, reserved
//! keys, calls forwarded and waiting, per-module counters) and the client side ([`clients`]:
//! connections, sessions, liveness, calls in flight, each client's queue and event window).
//! Neither borrows the other's cell; [`Broker`] holds both and joins them where an
//! operation needs both ([`calls`]: admit, route, answer; [`fanout`]: the router walks the
//! subscribers, the client side holds each client to its window; [`modules`]: what the
//! router forgets when the client side forgets a client). Other parts: [`adapter`] (what an
//! adapter sees), [`port`] (the client side's port), [`limits`], [`sessions`] (client life,
//! liveness, removal), [`outbox`] (writing to clients), [`permissions`], [`events`] (the
//! subscriber registry), [`blackboard`] (the typed writes in-process code makes to
//! ALMemory), [`stats`] (the counters).

mod adapter;
mod blackboard;
mod calls;
mod clients;
mod events;
mod fanout;
mod limits;
mod logtap;
mod modules;
mod outbox;
mod permissions;
mod port;
mod router;
mod sessions;
mod stats;
mod trace;

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use naobroker_protocol::HEARTBEAT_INTERVAL_MS;

use crate::identity::ClientId;

pub use adapter::{Connection, ConnectionRole, Outbound, ReplyEncoder, Request, Wire, Write};
pub use blackboard::{Blackboard, MEMORY_MODULE};
use clients::{ClientSide, ClientState};
pub use limits::{encoded_size, Limits};
pub use port::{WeakPort, WirePort};
use router::Router;

/// The counters of what the broker does between its two halves: calls and events.
#[derive(Default)]
struct Counters {
    calls: Cell<u64>,
    call_errors: Cell<u64>,
    events_sent: Cell<u64>,
    events_dropped: Cell<u64>,
}

fn bump(counter: &Cell<u64>) {
    counter.set(counter.get() + 1);
}

struct Inner {
    /// Modules, methods, permissions, events' subscribers, calls under way.
    router: RefCell<Router>,
    /// Connections, sessions, liveness, queues, event windows, and their limits.
    clients: Rc<ClientSide>,
    counters: Counters,
}

/// The broker: routes calls to module actors and remote modules, fans out events.
///
/// It lives on one actix arbiter: a call is read, handled by an in-process module and
/// answered without waking another thread.
#[derive(Clone)]
pub struct Broker {
    inner: Rc<Inner>,
}

/// A broker that may be gone: what its own tasks hold, so that they end with it.
#[derive(Clone)]
pub(crate) struct WeakBroker {
    inner: Weak<Inner>,
}

impl WeakBroker {
    pub(crate) fn upgrade(&self) -> Option<Broker> {
        self.inner.upgrade().map(|inner| Broker { inner })
    }
}

/// How often the broker looks for silent clients (and, every [`HEARTBEAT_INTERVAL_MS`],
/// heartbeats the others).
const TICK_MS: u64 = 100;

impl Broker {
    /// A broker with no wire yet: modules added to it talk to each other; a wire
    /// ([`crate::wire`]) lets clients in. Must run inside an actix system.
    pub fn new(limits: Limits, client_timeout: Duration) -> Broker {
        let inner = Rc::new_cyclic(|inner: &Weak<Inner>| {
            let broker = WeakBroker { inner: inner.clone() };
            let departures = Box::new(move |client: &ClientId, gone: &ClientState| {
                if let Some(broker) = broker.upgrade() {
                    broker.client_left(client, gone);
                }
            });
            Inner {
                router: RefCell::default(),
                clients: Rc::new(ClientSide::new(limits, client_timeout, departures)),
                counters: Counters::default(),
            }
        });
        // Liveness is the client side's alone: its ticks hold nothing else.
        let weak = Rc::downgrade(&inner.clients);
        actix_rt::spawn(async move {
            let mut ticker = tokio::time::interval(Duration::from_millis(TICK_MS));
            let mut ticks = 0u64;
            loop {
                ticker.tick().await;
                let Some(clients) = weak.upgrade() else { break };
                ticks += 1;
                clients.on_tick(ticks.is_multiple_of(HEARTBEAT_INTERVAL_MS / TICK_MS));
            }
        });
        Broker { inner }
    }

    pub(crate) fn downgrade(&self) -> WeakBroker {
        WeakBroker { inner: Rc::downgrade(&self.inner) }
    }

    /// The client side: connections, sessions, liveness, queues and event windows.
    fn clients(&self) -> &Rc<ClientSide> {
        &self.inner.clients
    }

    /// The router: modules, methods, permissions, events' subscribers, calls under way.
    fn router(&self) -> &RefCell<Router> {
        &self.inner.router
    }

    /// The limits every client is held to.
    pub fn limits(&self) -> &Limits {
        &self.inner.clients.limits
    }

    /// A wire now listening: its counters join [`Self::stats`].
    pub(super) fn attach_wire(&self, wire: Rc<dyn Wire>) {
        self.router().borrow_mut().wires.push(wire);
    }
}
