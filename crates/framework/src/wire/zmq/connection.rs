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

/// Every peer encodes a message alike: an event is encoded once for all of them.
const WIRE_NAME: &str = "naobroker-zmq";

pub(super) struct RouterConnection {
    sender: RouterSendHalf,
    identity: Bytes,
    stats_readers: Rc<[CurvePublicKey]>,
    /// The protocol version the peer said in its `Hello`, learnt as the broker welcomes it:
    /// the oldest until then, so a peer that never said one is sent only what it can read.
    version: Cell<u32>,
}

impl RouterConnection {
    pub(super) fn new(sender: RouterSendHalf, identity: Bytes, stats_readers: Rc<[CurvePublicKey]>) -> Self {
        RouterConnection { sender, identity, stats_readers, version: Cell::new(OLDEST_PROTOCOL_VERSION) }
    }

    /// The envelope that carries `message` to this peer.
    fn envelope_of(&self, message: Outbound<'_>) -> Envelope {
        match message {
            Outbound::Welcome { version } => {
                if let Some(version) = version {
                    self.version.set(version);
                }
                Envelope::Welcome { version: self.version.get(), heartbeat_ms: HEARTBEAT_INTERVAL_MS }
            }
            Outbound::Heartbeat => Envelope::Heartbeat,
            Outbound::Reply { id, value } => Envelope::Reply { id, value },
            Outbound::Error { id, kind, message } => {
                // A version 1 peer reads only the kind-less form: the kind would stall its call.
                let kind =
                    if self.version.get() > OLDEST_PROTOCOL_VERSION { kind } else { ErrorKind::Failed };
                Envelope::Error { id, message, kind }
            }
            Outbound::Call { id, module, method, args, post: false } => {
                Envelope::Call { id, module: module.to_owned(), method: method.to_owned(), args }
            }
            Outbound::Call { id, module, method, args, post: true } => {
                Envelope::Post { id, module: module.to_owned(), method: method.to_owned(), args }
            }
            Outbound::Event { name, value, lost } => {
                Envelope::Event { name: name.to_owned(), value: value.clone(), lost }
            }
            Outbound::Callback { module, method, event, value, message, lost } => Envelope::Callback {
                module: module.to_owned(),
                method: method.to_owned(),
                event: event.to_owned(),
                value: value.clone(),
                message: message.clone(),
                lost,
            },
        }
    }
}

impl Connection for RouterConnection {
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes> {
        Some(Bytes::from(self.envelope_of(message).encode()))
    }

    fn reply_encoder(&self, id: u64) -> Option<ReplyEncoder> {
        Some(Box::new(move |value| Some(Bytes::from(Envelope::Reply { id, value }.encode()))))
    }

    fn shared_encoding(&self) -> Option<&'static str> {
        Some(WIRE_NAME)
    }

    /// Queued for the peer at once when its socket has room (no future, no task); else the
    /// future that waits for room. A peer gone meanwhile drops the message, as a send to it
    /// would.
    fn write(&self, payload: Bytes) -> Write {
        let Ok(peer) = PeerIdentity::try_from(self.identity.clone()) else { return Write::Done };
        let message = match self.sender.try_send_to(&peer, ZmqMessage::from(payload)) {
            RouterTrySend::Queued | RouterTrySend::NoPeer => return Write::Done,
            RouterTrySend::Full(mut message) => {
                message.push_front(self.identity.clone());
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
        if let Ok(identity) = PeerIdentity::try_from(self.identity.clone()) {
            self.sender.disconnect_peer(&identity);
        }
    }

    /// Its peer proved one of the CURVE keys the configuration names as stats readers.
    fn reads_all_stats(&self) -> bool {
        let Ok(identity) = PeerIdentity::try_from(self.identity.clone()) else { return false };
        !self.stats_readers.is_empty()
            && self.sender.peer_public_key(&identity).is_some_and(|key| self.stats_readers.contains(&key))
    }

    fn transport_open(&self) -> bool {
        PeerIdentity::try_from(self.identity.clone())
            .is_ok_and(|identity| self.sender.peer_connected(&identity))
    }
}
