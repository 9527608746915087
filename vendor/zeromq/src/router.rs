use crate::backend::{GenericSocketBackend, TrySend};
use crate::codec::*;
use crate::curve::CurvePublicKey;
use crate::endpoint::Endpoint;
use crate::error::{ZmqError, ZmqResult};
use crate::fair_queue::FairQueue;
use crate::message::*;
use crate::transport::AcceptStopHandle;
use crate::util::PeerIdentity;
use crate::{MultiPeerBackend, SocketEvent, SocketOptions, SocketRecv, SocketSend, SocketType};
use crate::{Socket, SocketBackend};

use async_trait::async_trait;
use futures::channel::mpsc;
use futures::StreamExt;

use std::collections::HashMap;
use std::convert::TryInto;
use std::sync::Arc;

pub struct RouterSocket {
    backend: Arc<GenericSocketBackend>,
    binds: HashMap<Endpoint, AcceptStopHandle>,
    fair_queue: FairQueue<ZmqFramedRead, PeerIdentity>,
}

impl Drop for RouterSocket {
    fn drop(&mut self) {
        self.backend.shutdown();
    }
}

#[async_trait]
impl Socket for RouterSocket {
    fn with_options(options: SocketOptions) -> Self {
        let mut fair_queue = FairQueue::new(true);
        let backend = Arc::new(GenericSocketBackend::with_options(
            Some(fair_queue.inner()),
            SocketType::ROUTER,
            options,
        ));

        let backend_weak = Arc::downgrade(&backend);
        fair_queue.set_on_disconnect(move |peer_id: PeerIdentity| {
            if let Some(backend) = backend_weak.upgrade() {
                backend.peer_disconnected(&peer_id);
            }
        });

        Self {
            backend,
            binds: HashMap::new(),
            fair_queue,
        }
    }

    fn backend(&self) -> Arc<dyn MultiPeerBackend> {
        self.backend.clone()
    }

    fn binds(&mut self) -> &mut HashMap<Endpoint, AcceptStopHandle> {
        &mut self.binds
    }

    fn monitor(&mut self) -> mpsc::Receiver<SocketEvent> {
        let (sender, receiver) = mpsc::channel(1024);
        self.backend.socket_monitor.lock().replace(sender);
        receiver
    }
}

#[async_trait]
impl SocketRecv for RouterSocket {
    async fn recv(&mut self) -> ZmqResult<ZmqMessage> {
        loop {
            match self.fair_queue.next().await {
                Some((peer_id, Ok(Message::Message(mut message)))) => {
                    message.push_front(peer_id.into());
                    return Ok(message);
                }
                Some((_peer_id, Ok(_msg))) => {
                    // todo: Log or handle other message types if needed
                    // We could take an approach of using `tracing` and have that be an optional feature
                    // tracing::warn!("Received unimplemented message type: {:?}", msg);
                }
                Some((peer_id, Err(_e))) => {
                    // A peer that broke the protocol (or announced a message over
                    // `max_message_size`) loses its connection in both directions.
                    self.backend.close_peer(&peer_id);
                    // We could take an approach of using `tracing` and have that be an optional feature
                    // tracing::error!("Error receiving message from peer {}: {:?}", peer_id, e);
                }
                None => {
                    // The fair queue is empty, which shouldn't happen in normal operation
                    return Err(ZmqError::NoMessage);
                }
            };
        }
    }
}

#[async_trait]
impl SocketSend for RouterSocket {
    async fn send(&mut self, mut message: ZmqMessage) -> ZmqResult<()> {
        if message.len() <= 1 {
            return Err(ZmqError::Socket(
                "ROUTER send requires at least 2 frames: identity frame + message",
            ));
        }
        let peer_id: PeerIdentity = message.pop_front().unwrap().try_into()?;
        self.backend
            .send_to_peer(&peer_id, Message::Message(message))
            .await
    }
}

impl RouterSocket {
    /// Closes the connection of the peer whose identity is `peer_id`, reader and writer
    /// both, and drops the messages still queued for it; other peers are unaffected.
    /// The monitor reports [`SocketEvent::Disconnected`]. Returns whether such a peer
    /// was connected.
    pub fn disconnect_peer(&self, peer_id: &PeerIdentity) -> bool {
        self.backend.close_peer(peer_id)
    }

    /// How many connections were closed because their peer announced a message over
    /// [`SocketOptions::max_message_size`].
    pub fn oversized_message_drops(&self) -> u64 {
        self.backend.socket_options().oversized_message_drops()
    }

    /// Splits the socket into separate send and recv halves, allowing concurrent
    /// sending and receiving from independent async tasks.
    ///
    /// The underlying socket stays alive until both halves are dropped.
    pub fn split(mut self) -> (RouterSendHalf, RouterRecvHalf) {
        let backend = std::mem::replace(
            &mut self.backend,
            Arc::new(GenericSocketBackend::with_options(
                None,
                SocketType::ROUTER,
                SocketOptions::default(),
            )),
        );
        let fair_queue = std::mem::replace(&mut self.fair_queue, FairQueue::new(true));
        let binds = std::mem::take(&mut self.binds);

        let inner = Arc::new(RouterSocketInner {
            backend,
            _binds: binds,
        });

        (
            RouterSendHalf {
                inner: inner.clone(),
            },
            RouterRecvHalf { inner, fair_queue },
        )
    }
}

struct RouterSocketInner {
    backend: Arc<GenericSocketBackend>,
    _binds: HashMap<Endpoint, AcceptStopHandle>,
}

impl Drop for RouterSocketInner {
    fn drop(&mut self) {
        self.backend.shutdown();
    }
}

/// The send half of a [`RouterSocket`] produced by [`RouterSocket::split`].
///
/// This half can be cloned to send from multiple async tasks concurrently.
#[derive(Clone)]
pub struct RouterSendHalf {
    inner: Arc<RouterSocketInner>,
}

/// The recv half of a [`RouterSocket`] produced by [`RouterSocket::split`].
pub struct RouterRecvHalf {
    inner: Arc<RouterSocketInner>,
    fair_queue: FairQueue<ZmqFramedRead, PeerIdentity>,
}

impl RouterSendHalf {
    /// Closes one peer's connection: see [`RouterSocket::disconnect_peer`].
    pub fn disconnect_peer(&self, peer_id: &PeerIdentity) -> bool {
        self.inner.backend.close_peer(peer_id)
    }

    /// See [`RouterSocket::oversized_message_drops`].
    pub fn oversized_message_drops(&self) -> u64 {
        self.inner
            .backend
            .socket_options()
            .oversized_message_drops()
    }

    /// Whether a peer named `peer_id` is connected now: its connection has not ended (on
    /// TCP, keepalive probes find a peer whose machine vanished).
    pub fn peer_connected(&self, peer_id: &PeerIdentity) -> bool {
        self.inner.backend.peers.contains_sync(peer_id)
    }

    /// How many connections were closed by [`SocketOptions::stall_timeout`].
    pub fn stalled_message_drops(&self) -> u64 {
        self.inner.backend.socket_options().stalled_message_drops()
    }
}

/// What [`RouterSendHalf::try_send_to`] did with a message.
pub enum RouterTrySend {
    /// In the peer's queue.
    Queued,
    /// The peer's queue had no room, or another send to the peer was waiting for room: the
    /// message, to send with [`SocketSend::send`] (which waits its turn).
    Full(ZmqMessage),
    /// No peer of that identity is connected: the message is dropped.
    NoPeer,
}

impl RouterSendHalf {
    /// Queues `message` (without its identity frame) for `peer_id` now, or gives it back
    /// when that would mean waiting: [`SocketSend::send`] without its future, for a caller
    /// that writes from a synchronous context and sends most messages at once.
    pub fn try_send_to(&self, peer_id: &PeerIdentity, message: ZmqMessage) -> RouterTrySend {
        match self
            .inner
            .backend
            .try_send_to_peer(peer_id, Message::Message(message))
        {
            TrySend::Queued => RouterTrySend::Queued,
            TrySend::Full(Message::Message(message)) => RouterTrySend::Full(message),
            TrySend::Full(_) | TrySend::NoPeer => RouterTrySend::NoPeer,
        }
    }
}

#[async_trait]
impl SocketSend for RouterSendHalf {
    async fn send(&mut self, mut message: ZmqMessage) -> ZmqResult<()> {
        if message.len() <= 1 {
            return Err(ZmqError::Socket(
                "ROUTER send requires at least 2 frames: identity frame + message",
            ));
        }
        let peer_id: PeerIdentity = message.pop_front().unwrap().try_into()?;
        self.inner
            .backend
            .send_to_peer(&peer_id, Message::Message(message))
            .await
    }
}

#[async_trait]
impl SocketRecv for RouterRecvHalf {
    async fn recv(&mut self) -> ZmqResult<ZmqMessage> {
        loop {
            match self.fair_queue.next().await {
                Some((peer_id, Ok(Message::Message(mut message)))) => {
                    message.push_front(peer_id.into());
                    return Ok(message);
                }
                Some((_peer_id, Ok(_))) => {}
                Some((peer_id, Err(_e))) => {
                    self.inner.backend.close_peer(&peer_id);
                }
                None => {
                    return Err(ZmqError::NoMessage);
                }
            };
        }
    }
}

impl RouterSocket {
    /// The CURVE long-term public key the peer `peer_id` proved in its handshake, while it
    /// is connected; `None` for an unknown peer or when this socket is not a CURVE server
    /// ([`SocketOptions::curve_server`]).
    pub fn peer_public_key(&self, peer_id: &PeerIdentity) -> Option<CurvePublicKey> {
        self.backend.socket_options().curve_peer_key(peer_id)
    }
}

impl RouterSendHalf {
    /// See [`RouterSocket::peer_public_key`].
    pub fn peer_public_key(&self, peer_id: &PeerIdentity) -> Option<CurvePublicKey> {
        self.inner.backend.socket_options().curve_peer_key(peer_id)
    }
}

impl RouterRecvHalf {
    /// See [`RouterSocket::peer_public_key`].
    pub fn peer_public_key(&self, peer_id: &PeerIdentity) -> Option<CurvePublicKey> {
        self.inner.backend.socket_options().curve_peer_key(peer_id)
    }
}
