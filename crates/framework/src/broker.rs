//! The broker core: the router of calls between modules and clients, with no wire in it.
//!
//! It knows modules (in-process actors and remote ones), client connections and their
//! sessions, calls under way, liveness, events and permissions. The protocols clients speak
//! are adapters on it ([`crate::wire`], the ZeroMQ one for instance): an adapter tells the
//! core what arrived on a connection as a typed [`Request`] and gives it a [`Connection`] to
//! write to.
//!
//! Its state is two types, each in its own cell: the router's ([`router`]: modules and their
//! methods, events' subscribers, reserved keys, calls forwarded and waiting) and the client
//! side's ([`clients`]: connections, sessions, liveness, each client's queue and event
//! window). Parts: [`adapter`] (what an adapter sees), [`limits`] (what a client may send
//! and hold), [`sessions`] (client life, liveness, removal), [`modules`] (the module
//! table), [`calls`] (routing), [`permissions`], [`outbox`] (each client's bounded queue),
//! [`events`] and [`fanout`] (the one event path), [`blackboard`] (the typed writes
//! in-process code makes to ALMemory), [`stats`] (the counters).

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
use zeromq::UnfinishedBudget;

pub use adapter::{Connection, ConnectionRole, Outbound, ReplyEncoder, Request, Wire, Write};
pub use blackboard::{Blackboard, MEMORY_MODULE};
use clients::Clients;
pub use limits::{encoded_size, Limits};
pub use port::{WeakPort, WirePort};
use router::Router;

#[derive(Default)]
struct Counters {
    calls: Cell<u64>,
    call_errors: Cell<u64>,
    bad_frames: Cell<u64>,
    refused: Cell<u64>,
    events_sent: Cell<u64>,
    events_dropped: Cell<u64>,
    sends_deferred: Cell<u64>,
    replies_encoded_aside: Cell<u64>,
    clients_disconnected: Cell<u64>,
}

fn bump(counter: &Cell<u64>) {
    counter.set(counter.get() + 1);
}

struct Inner {
    limits: Limits,
    /// `max_unfinished_bytes`, shared by every connection of every wire.
    unfinished: std::sync::Arc<UnfinishedBudget>,
    /// Silence after which a client that heartbeats is dropped.
    client_timeout: Duration,
    /// Modules, methods, permissions, events' subscribers, calls under way.
    router: RefCell<Router>,
    /// Connections, sessions, liveness, queues, event windows.
    clients: RefCell<Clients>,
    counters: Counters,
    call_counts: stats::CallCounts,
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
        let broker = Broker {
            inner: Rc::new(Inner {
                unfinished: UnfinishedBudget::new(limits.max_unfinished_bytes),
                limits,
                client_timeout,
                router: RefCell::default(),
                clients: RefCell::default(),
                counters: Counters::default(),
                call_counts: stats::CallCounts::default(),
            }),
        };
        let weak = broker.downgrade();
        actix_rt::spawn(async move {
            let mut ticker = tokio::time::interval(Duration::from_millis(TICK_MS));
            let mut ticks = 0u64;
            loop {
                ticker.tick().await;
                let Some(broker) = weak.upgrade() else { break };
                ticks += 1;
                broker.on_tick(ticks.is_multiple_of(HEARTBEAT_INTERVAL_MS / TICK_MS));
            }
        });
        broker
    }

    pub(crate) fn downgrade(&self) -> WeakBroker {
        WeakBroker { inner: Rc::downgrade(&self.inner) }
    }

    /// The limits every client is held to.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// What every connection of every wire holds for messages it has not received whole.
    pub(super) fn unfinished_budget(&self) -> &std::sync::Arc<UnfinishedBudget> {
        &self.inner.unfinished
    }

    /// A wire now listening: its counters join [`Self::stats`].
    pub(super) fn attach_wire(&self, wire: Rc<dyn Wire>) {
        self.inner.router.borrow_mut().wires.push(wire);
    }
}
