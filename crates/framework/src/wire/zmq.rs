//! naobroker's own wire: one MessagePack envelope per ZeroMQ frame on ROUTER sockets
//! (`docs/protocol.md`), an adapter on the broker core.
//!
//! Parts: [`endpoints`] (which addresses may be bound, and how), [`connection`] (one peer:
//! encoding the broker's messages, writing them). This file reads each socket and turns
//! every envelope into a [`Request`].

mod connection;
mod endpoints;

use std::rc::Rc;

use bytes::Bytes;
use naobroker_protocol::{
    CallFrame, Decoded, Envelope, Role, Value, OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use zeromq::util::PeerIdentity;
use zeromq::{CurvePublicKey, RouterRecvHalf, RouterSendHalf, SocketRecv, ZmqMessage};

use crate::broker::{ConnectionRole, Request, WeakPort, Wire, WirePort, MEMORY_MODULE};
use crate::callback;
use crate::error::{CallError, ListenError};
use crate::identity::ClientId;
use connection::RouterConnection;
pub use endpoints::CurveListeners;

/// Messages the broker handles in a row before it lets the other tasks of its thread run.
const RECEIVED_BETWEEN_YIELDS: u32 = 32;

/// The ROUTER sockets of one broker, for their counters.
struct ZmqWire {
    senders: Vec<RouterSendHalf>,
}

impl Wire for ZmqWire {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let oversized = self.senders.iter().map(RouterSendHalf::oversized_message_drops).sum::<u64>();
        let stalled = self.senders.iter().map(RouterSendHalf::stalled_message_drops).sum::<u64>();
        vec![("oversized_frames", oversized), ("stalled_frames", stalled)]
    }
}

/// Bind `listen` (and the CURVE listeners, if any) and serve their clients on `broker`.
/// Must run inside an actix system.
pub(crate) async fn listen(
    broker: &WirePort,
    listen: &[String],
    curve: Option<&CurveListeners>,
) -> Result<(), ListenError> {
    let sockets = endpoints::bind(listen, curve, broker).await?;
    let (senders, receivers): (Vec<_>, Vec<_>) = sockets.into_iter().map(|socket| socket.split()).unzip();
    // The plain socket comes first; the CURVE one, if any, second.
    let readers: Rc<[CurvePublicKey]> =
        curve.map_or_else(Vec::new, |curve| curve.stats_readers.clone()).into();
    for (index, receiver) in receivers.into_iter().enumerate() {
        let stats_readers = if index == 0 { Rc::from([]) } else { Rc::clone(&readers) };
        let socket = Socket { index: index as u8, sender: senders[index].clone(), stats_readers };
        actix_rt::spawn(read(broker.downgrade(), socket, receiver));
    }
    broker.attach_wire(Rc::new(ZmqWire { senders }));
    tracing::info!(endpoints = ?listen, "broker listening");
    Ok(())
}

/// One ROUTER socket: its index starts the name of each of its peers.
struct Socket {
    index: u8,
    sender: RouterSendHalf,
    /// The CURVE keys whose peers read every client's entries in the stats.
    stats_readers: Rc<[CurvePublicKey]>,
}

async fn read(broker: WeakPort, socket: Socket, mut receiver: RouterRecvHalf) {
    let mut handled = 0u32;
    while let Ok(message) = receiver.recv().await {
        match broker.upgrade() {
            Some(broker) => on_message(&broker, &socket, message),
            None => break,
        }
        // A socket that always has a message ready never makes recv() wait: without a
        // yield, a flooding peer would starve every task on this thread (the calls it
        // spawned, replies, accepts, heartbeats).
        handled = handled.wrapping_add(1);
        if handled.is_multiple_of(RECEIVED_BETWEEN_YIELDS) {
            tokio::task::yield_now().await;
        }
    }
}

/// The broker's name for a peer: its socket's index, then its ZeroMQ routing id.
fn client_id(socket: u8, identity: &Bytes) -> ClientId {
    ClientId::prefixed(socket, identity.clone())
}

fn on_message(broker: &WirePort, socket: &Socket, message: ZmqMessage) {
    let mut frames = message.into_vec().into_iter();
    let Some(identity) = frames.next() else { return };
    let client = client_id(socket.index, &identity);
    let Some(payload) = frames.next() else { return };
    if broker.departed(&client) {
        return;
    }
    // The socket read this identity from a peer, so it is one (at most 255 bytes): checked
    // here, once, not at every write.
    let Ok(peer) = PeerIdentity::try_from(identity) else { return };
    let known = broker.arrived(&client, || {
        Rc::new(RouterConnection::new(socket.sender.clone(), peer, Rc::clone(&socket.stats_readers)))
    });
    if frames.next().is_some() {
        return broker.bad_message(&client, 0, "a message must be exactly one frame".to_owned());
    }
    let decoded = match Envelope::decode_frame(&payload, &broker.limits().decode_limits()) {
        Ok(decoded) => decoded,
        Err(error) => return broker.bad_message(&client, Envelope::salvage_id(&payload), error.to_string()),
    };
    if !known && !matches!(decoded, Decoded::Envelope(Envelope::Hello { .. })) {
        // A client the broker dropped (silence, or over its bounds) or never met: it learns
        // it must register again.
        broker.welcome(&client);
    }
    match decoded {
        // A call's names stay in the frame: the router resolves them there.
        Decoded::Call(CallFrame { id, module, method, args, post }) => {
            broker.request(client, Request::Call { id, module, method, args, post })
        }
        Decoded::Envelope(envelope) => on_envelope(broker, client, envelope),
    }
}

/// A callback subscription's message as the ALMemory call it stands for.
fn memory_call<'a>(id: u64, (method, args): (&'static str, Vec<Value>)) -> Request<'a> {
    Request::Call { id, module: MEMORY_MODULE, method, args, post: false }
}

/// Hand what an envelope asks to the broker; nothing when there is nothing to do (a
/// heartbeat, or a message refused here).
fn on_envelope(broker: &WirePort, client: ClientId, envelope: Envelope) {
    let request = match envelope {
        Envelope::Hello { version, client: name, session, role } => {
            if !(OLDEST_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&version) {
                let message = format!(
                    "protocol version {version} is not supported (this broker speaks \
                     {OLDEST_PROTOCOL_VERSION} to {PROTOCOL_VERSION})"
                );
                tracing::info!(%client, version, "hello refused: protocol version");
                return broker.refuse(&client, 0, CallError::refused(message));
            }
            let role = match role {
                Role::Main => ConnectionRole::Main,
                Role::Liveness => ConnectionRole::Liveness,
            };
            Request::Hello { version, client: name, session, role }
        }
        // Calls come as `Decoded::Call` unless the general decoder read them.
        Envelope::Call { id, ref module, ref method, args } => {
            Request::Call { id, module, method, args, post: false }
        }
        Envelope::Post { id, ref module, ref method, args } => {
            Request::Call { id, module, method, args, post: true }
        }
        Envelope::Reply { id, value } => Request::Answer { id, result: Ok(value) },
        Envelope::Error { id, message, kind } => {
            Request::Answer { id, result: Err(CallError::of(kind, message)) }
        }
        Envelope::Register { id, module, methods } => Request::Register { id, module, methods },
        Envelope::Unregister { id, module } => Request::Unregister { id, module },
        Envelope::Subscribe { id, event } => Request::Subscribe { id, event },
        Envelope::Unsubscribe { id, event } => Request::Unsubscribe { id, event },
        Envelope::Ack { count } => Request::Ack { count },
        Envelope::Heartbeat => return,
        Envelope::Goodbye { id } => Request::Goodbye { id },
        Envelope::SubscribeCallback { id, subscription } => {
            memory_call(id, callback::subscribe_call(subscription))
        }
        Envelope::UnsubscribeCallback { id, event, module } => {
            memory_call(id, callback::unsubscribe_call(event, module))
        }
        Envelope::Welcome { .. } | Envelope::Event { .. } | Envelope::Callback { .. } => {
            let message = "Welcome, Event and Callback are sent by the broker only".to_owned();
            return broker.bad_message(&client, 0, message);
        }
    };
    broker.request(client, request);
}
