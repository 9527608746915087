//! One peer of a ROUTER socket as the broker writes to it: the broker's messages as
//! envelopes, handed to the socket without waiting.

use std::cell::Cell;
use std::rc::Rc;

use bytes::Bytes;
use futures::FutureExt;
use naobroker_protocol::{Envelope, ErrorKind, HEARTBEAT_INTERVAL_MS, OLDEST_PROTOCOL_VERSION};
use zeromq::util::PeerIdentity;
use zeromq::{CurvePublicKey, RouterSendHalf, RouterTrySend, SocketSend, ZmqMessage};

use crate::broker::{Connection, Outbound, ReplyEncoder, Write};
use crate::frame;

/// Every peer encodes a message alike: an event is encoded once for all of them.
const WIRE_NAME: &str = "naobroker-zmq";

pub(super) struct RouterConnection {
    sender: RouterSendHalf,
    /// The peer's routing id, checked once when it arrived.
    peer: PeerIdentity,
    stats_readers: Rc<[CurvePublicKey]>,
    /// The protocol version the peer said in its `Hello`, learnt as the broker welcomes it:
    /// the oldest until then, so a peer that never said one is sent only what it can read.
    version: Cell<u32>,
}

impl RouterConnection {
    pub(super) fn new(
        sender: RouterSendHalf,
        peer: PeerIdentity,
        stats_readers: Rc<[CurvePublicKey]>,
    ) -> Self {
        RouterConnection { sender, peer, stats_readers, version: Cell::new(OLDEST_PROTOCOL_VERSION) }
    }

    /// The bytes that carry `message` to this peer. A call, a reply, an event and a callback
    /// are written from their borrowed parts (an event's value is not copied per message);
    /// the rest, small, through their envelope.
    fn encode_into(&self, buf: &mut Vec<u8>, message: Outbound<'_>) {
        match message {
            Outbound::Welcome { version } => {
                if let Some(version) = version {
                    self.version.set(version);
                }
                let version = self.version.get();
                Envelope::Welcome { version, heartbeat_ms: HEARTBEAT_INTERVAL_MS }.encode_into(buf)
            }
            Outbound::Heartbeat => Envelope::Heartbeat.encode_into(buf),
            Outbound::Reply { id, value } => Envelope::encode_reply_into(buf, id, &value),
            Outbound::Error { id, kind, message } => {
                // A version 1 peer reads only the kind-less form: the kind would stall its call.
                let kind =
                    if self.version.get() > OLDEST_PROTOCOL_VERSION { kind } else { ErrorKind::Failed };
                Envelope::Error { id, message, kind }.encode_into(buf)
            }
            Outbound::Call { id, module, method, args, post } => {
                Envelope::encode_call_into(buf, id, module, method, &args, post)
            }
            Outbound::Event { name, value, lost } => Envelope::encode_event_into(buf, name, value, lost),
            Outbound::Callback { module, method, event, value, message, lost } => {
                Envelope::encode_callback_into(buf, module, method, event, value, message, lost)
            }
        }
    }
}

impl Connection for RouterConnection {
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes> {
        Some(frame::encoded(|buf| self.encode_into(buf, message)))
    }

    fn reply_encoder(&self, id: u64) -> Option<ReplyEncoder> {
        Some(Box::new(move |value| {
            let mut buf = Vec::with_capacity(64);
            Envelope::encode_reply_into(&mut buf, id, &value);
            Some(Bytes::from(buf))
        }))
    }

    fn shared_encoding(&self) -> Option<&'static str> {
        Some(WIRE_NAME)
    }

    /// Queued for the peer at once when its socket has room (no future, no task); else the
    /// future that waits for room. A peer gone meanwhile drops the message, as a send to it
    /// would.
    fn write(&self, payload: Bytes) -> Write {
        let message = match self.sender.try_send_to(&self.peer, ZmqMessage::from(payload)) {
            RouterTrySend::Queued | RouterTrySend::NoPeer => return Write::Done,
            RouterTrySend::Full(mut message) => {
                message.push_front(Bytes::from(self.peer.clone()));
                message
            }
        };
        let mut sender = self.sender.clone();
        Write::Waiting(
            async move {
                let _ = sender.send(message).await;
            }
            .boxed_local(),
        )
    }

    fn close(&self) {
        self.sender.disconnect_peer(&self.peer);
    }

    /// Its peer proved one of the CURVE keys the configuration names as stats readers.
    fn reads_all_stats(&self) -> bool {
        !self.stats_readers.is_empty()
            && self.sender.peer_public_key(&self.peer).is_some_and(|key| self.stats_readers.contains(&key))
    }

    fn transport_open(&self) -> bool {
        self.sender.peer_connected(&self.peer)
    }
}
