//! What a wire adapter sees of the broker: the typed requests it hands in, the messages the
//! broker gives back to write, and the connection it writes them to.
//!
//! An adapter reads its protocol, names each client connection with a [`ClientId`] unique
//! among every wire, and tells the client side, through its port ([`super::WirePort`]),
//! three things: a message arrived on a connection (`arrived`, which opens the connection
//! the first time), what it asked (`request`), and that the connection closed (`closed`).
//! The broker answers through the connection's [`Connection`], which encodes an
//! [`Outbound`] message for the wire and writes it. Limits, liveness and the bounded queue
//! of each connection are the client side's; routing and permissions, the router's.

use bytes::Bytes;
use futures::future::LocalBoxFuture;
use naobroker_protocol::{ErrorKind, MethodInfo, Value};

use super::Broker;
use crate::error::CallResult;
use crate::identity::ClientId;

/// What a connection of a session is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionRole {
    /// Calls, registrations and subscriptions.
    Main,
    /// Only heartbeats, on behalf of the main connection of the same session.
    Liveness,
}

/// What a client asks, decoded from its wire. A call's names are borrowed (from the frame
/// they came in, on the ZeroMQ wire): the router resolves them at once and copies them only
/// for a call that outlives the request (one forwarded, or answered later).
#[derive(Debug)]
pub enum Request<'a> {
    /// Who the client is; `session` (empty when none) ties a liveness connection to its
    /// main one. The broker answers [`Outbound::Welcome`] with `version`, the wire's
    /// protocol version the client said it speaks (the wire checked it).
    Hello {
        version: u32,
        client: String,
        session: Vec<u8>,
        role: ConnectionRole,
    },
    /// Call `module.method(args)`, or start it as a task (`post`), answered under `id`.
    Call {
        id: u64,
        module: &'a str,
        method: &'a str,
        args: Vec<Value>,
        post: bool,
    },
    /// The answer to [`Outbound::Call`] `id`, which the broker sent to a module this
    /// connection serves.
    Answer {
        id: u64,
        result: CallResult,
    },
    /// Serve module `module` from this connection.
    Register {
        id: u64,
        module: String,
        methods: Vec<MethodInfo>,
    },
    Unregister {
        id: u64,
        module: String,
    },
    /// The client is leaving: answered, then its session and its liveness connections are
    /// forgotten at once, with what they had registered and subscribed.
    Goodbye {
        id: u64,
    },
    /// Receive every event named `event` as [`Outbound::Event`].
    Subscribe {
        id: u64,
        event: String,
    },
    Unsubscribe {
        id: u64,
        event: String,
    },
    /// `count` events and callbacks consumed: room for as many more. A wire without
    /// acknowledgements acknowledges each one it has written.
    Ack {
        count: u32,
    },
}

/// A message the broker gives a connection to write.
#[derive(Debug)]
pub enum Outbound<'a> {
    /// The connection is admitted (again): a client that had registered modules or
    /// subscriptions registers them anew. `version` answers a `Hello`'s; none when the
    /// broker welcomes a client that spoke without one (the wire keeps what it knew).
    Welcome {
        version: Option<u32>,
    },
    /// The broker is alive; sent to every connection each heartbeat interval.
    Heartbeat,
    Reply {
        id: u64,
        value: Value,
    },
    /// A call refused or failed; id 0 when the message it answers had none.
    Error {
        id: u64,
        kind: ErrorKind,
        message: String,
    },
    /// A call to a module this connection serves, answered by [`Request::Answer`].
    Call {
        id: u64,
        module: &'a str,
        method: &'a str,
        args: Vec<Value>,
        post: bool,
    },
    /// An event of a [`Request::Subscribe`], after `lost` dropped ones.
    Event {
        name: &'a str,
        value: &'a Value,
        lost: u64,
    },
    /// A NAOqi callback, `module.method(event, value, message)`, for a module this
    /// connection serves; counted as an event toward [`Request::Ack`].
    Callback {
        module: &'a str,
        method: &'a str,
        event: &'a str,
        value: &'a Value,
        message: &'a Value,
        lost: u64,
    },
}

/// How a write went: done at once, or waiting for the transport to take it.
pub enum Write {
    Done,
    /// The transport had no room: this future finishes the write, and the broker queues
    /// whatever follows behind it.
    Waiting(LocalBoxFuture<'static, ()>),
}

/// Encodes one reply's value on a thread of its own: what a connection hands the broker for
/// a reply too large to encode on the broker's thread. `None` when there is nothing to send.
pub type ReplyEncoder = Box<dyn FnOnce(Value) -> Option<Bytes> + Send>;

/// One client connection, as its wire writes to it.
pub trait Connection {
    /// `message` in this connection's encoding; `None` when its wire has no such message.
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes>;

    /// The encoder of the reply to call `id`, to run away from the broker's thread, as
    /// [`Connection::encode`] would encode `Outbound::Reply { id, .. }`; `None` when this
    /// wire encodes replies only here (the reply is then encoded like any message).
    fn reply_encoder(&self, _id: u64) -> Option<ReplyEncoder> {
        None
    }

    /// The wire's name when every connection of it encodes a message to the same bytes: an
    /// event is then encoded once for all of them. `None` when the bytes are its own.
    fn shared_encoding(&self) -> Option<&'static str>;

    /// Hand `payload` to the transport without waiting.
    fn write(&self, payload: Bytes) -> Write;

    /// Close the connection: the broker dropped the client for breaking a bound.
    fn close(&self);

    /// Whether the broker drops this client after `client_timeout` of silence: true for a
    /// wire whose clients heartbeat; false for one whose transport tells when its peer is
    /// gone (a TCP connection that closes) and whose clients send nothing while idle.
    fn dropped_when_silent(&self) -> bool {
        true
    }

    /// Whether the transport still holds this connection open (a process that ends, or
    /// whose machine vanishes, loses it). A session's open liveness connection keeps the
    /// session alive however long it is silent: its process may be held up (a Python
    /// method holding the GIL) without being dead. False when the wire cannot tell.
    fn transport_open(&self) -> bool {
        false
    }

    /// Whether this connection's client reads every client's entries in
    /// `ServiceDirectory.stats` (one the configuration names), not only its own.
    fn reads_all_stats(&self) -> bool {
        false
    }
}

/// A wire listening for clients, as the broker's `stats` shows it.
pub trait Wire {
    /// Its own counters, by name (frames it refused before the broker saw them).
    fn counters(&self) -> Vec<(&'static str, u64)>;

    /// Module `module` came (`present`) or went: for a wire whose protocol announces
    /// services to its clients.
    fn module_changed(&self, _module: &str, _present: bool) {}
}

impl Broker {
    /// Handle what `client` asked: the client side's own requests there, the rest routed.
    pub(super) fn request(&self, client: ClientId, request: Request<'_>) {
        let clients = self.clients();
        match request {
            Request::Hello { version, client: name, session, role } => {
                if let Err(error) = clients.limits.check_name("client", &name) {
                    return clients.refuse(&client, 0, error);
                }
                clients.hello(&client, name, session, role);
                clients.send(&client, Outbound::Welcome { version: Some(version) });
            }
            Request::Call { id, module, method, args, post } => {
                self.call_from(client, id, module, method, args, post)
            }
            Request::Answer { id, result } => self.complete(&client, id, result),
            Request::Register { id, module, methods } => {
                match self.register_remote(&client, &module, methods) {
                    Ok(()) => clients.send(&client, Outbound::Reply { id, value: true.into() }),
                    Err(error) => clients.refuse(&client, id, error),
                }
            }
            Request::Unregister { id, module } => match self.unregister_remote(&client, &module) {
                Ok(()) => clients.send(&client, Outbound::Reply { id, value: true.into() }),
                Err(error) => clients.refuse(&client, id, error),
            },
            Request::Subscribe { id, event } => match self.subscribe_client(&client, &event) {
                Ok(()) => clients.send(&client, Outbound::Reply { id, value: true.into() }),
                Err(error) => clients.refuse(&client, id, error),
            },
            Request::Unsubscribe { id, event } => {
                let removed = self.unsubscribe_client(&client, &event);
                clients.send(&client, Outbound::Reply { id, value: removed.into() });
            }
            Request::Ack { count } => clients.acknowledged(&client, count),
            Request::Goodbye { id } => {
                clients.send(&client, Outbound::Reply { id, value: true.into() });
                clients.goodbye(&client);
            }
        }
    }
}
