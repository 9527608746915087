use crate::backend::{CachedSend, GenericSocketBackend};
use crate::codec::{Message, ZmqFramedRead};
use crate::fair_queue::FairQueue;
use crate::transport::AcceptStopHandle;
use crate::util::PeerIdentity;
use crate::{
    CaptureSocket, Endpoint, MultiPeerBackend, Socket, SocketBackend, SocketEvent, SocketOptions,
    SocketRecv, SocketSend, SocketType, ZmqError, ZmqMessage, ZmqResult,
};

use async_trait::async_trait;
use futures::channel::mpsc;
use futures::StreamExt;

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::sync::Arc;

pub struct DealerSocket {
    backend: Arc<GenericSocketBackend>,
    fair_queue: FairQueue<ZmqFramedRead, PeerIdentity>,
    binds: HashMap<Endpoint, AcceptStopHandle>,
}

impl Drop for DealerSocket {
    fn drop(&mut self) {
        self.backend.shutdown();
    }
}

#[async_trait]
impl Socket for DealerSocket {
    fn with_options(options: SocketOptions) -> Self {
        let mut fair_queue = FairQueue::new(true);
        let backend = Arc::new(GenericSocketBackend::with_options(
            Some(fair_queue.inner()),
            SocketType::DEALER,
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
            fair_queue,
            binds: HashMap::new(),
        }
    }

    fn backend(&self) -> Arc<dyn MultiPeerBackend> {
        self.backend.clone()
    }

    fn binds(&mut self) -> &mut HashMap<Endpoint, AcceptStopHandle, RandomState> {
        &mut self.binds
    }

    fn monitor(&mut self) -> mpsc::Receiver<SocketEvent> {
        let (sender, receiver) = mpsc::channel(1024);
        self.backend.socket_monitor.lock().replace(sender);
        receiver
    }
}

#[async_trait]
impl SocketRecv for DealerSocket {
    async fn recv(&mut self) -> ZmqResult<ZmqMessage> {
        loop {
            match self.fair_queue.next().await {
                Some((_peer_id, Ok(Message::Message(message)))) => {
                    return Ok(message);
                }
                Some((_peer_id, Ok(_))) => {
                    // Ignore non-message frames
                }
                Some((_peer_id, Err(e))) => {
                    // Handle potential errors from the fair queue
                    return Err(e.into());
                }
                None => {
                    // The fair queue is empty, which shouldn't happen in normal operation
                    // We could either wait for more messages or return an error
                    return Err(ZmqError::NoMessage);
                }
            };
        }
    }
}

#[async_trait]
impl SocketSend for DealerSocket {
    async fn send(&mut self, message: ZmqMessage) -> ZmqResult<()> {
        self.backend
            .send_round_robin(Message::Message(message))
            .await?;
        Ok(())
    }
}

impl CaptureSocket for DealerSocket {}

impl DealerSocket {
    /// Splits the socket into separate send and recv halves, allowing concurrent
    /// sending and receiving from independent async tasks.
    ///
    /// The underlying socket stays alive until both halves are dropped.
    pub fn split(mut self) -> (DealerSendHalf, DealerRecvHalf) {
        // Swap the real fields out before self drops. The dummy backend's
        // shutdown() is a no-op on an empty peer map.
        let backend = std::mem::replace(
            &mut self.backend,
            Arc::new(GenericSocketBackend::with_options(
                None,
                SocketType::DEALER,
                SocketOptions::default(),
            )),
        );
        let fair_queue = std::mem::replace(&mut self.fair_queue, FairQueue::new(true));
        let binds = std::mem::take(&mut self.binds);

        let inner = Arc::new(DealerSocketInner {
            backend,
            _binds: binds,
        });

        (
            DealerSendHalf {
                inner: inner.clone(),
            },
            DealerRecvHalf {
                _inner: inner,
                fair_queue,
            },
        )
    }
}

struct DealerSocketInner {
    backend: Arc<GenericSocketBackend>,
    _binds: HashMap<Endpoint, AcceptStopHandle>,
}

impl Drop for DealerSocketInner {
    fn drop(&mut self) {
        self.backend.shutdown();
    }
}

/// The send half of a [`DealerSocket`] produced by [`DealerSocket::split`].
pub struct DealerSendHalf {
    inner: Arc<DealerSocketInner>,
}

/// The recv half of a [`DealerSocket`] produced by [`DealerSocket::split`].
pub struct DealerRecvHalf {
    _inner: Arc<DealerSocketInner>,
    fair_queue: FairQueue<ZmqFramedRead, PeerIdentity>,
}

/// What [`DealerSendHalf::try_send`] did with a message.
pub enum DealerTrySend {
    /// In the peer's queue.
    Sent,
    /// The peer's queue had no room, another send was waiting for room, or the socket has
    /// no single peer: the message, to send with [`SocketSend::send`] (which waits its turn,
    /// or picks a peer among several).
    NotNow(ZmqMessage),
    /// The peer is gone; the message with it.
    Disconnected,
}

impl DealerSendHalf {
    /// Queues `message` for the socket's one peer if its queue has room now and no other
    /// send waits for room (so that this one cannot overtake it); never waits, and makes no
    /// future (naobroker: a call's request written without a task or a boxed future).
    pub fn try_send(&self, message: ZmqMessage) -> DealerTrySend {
        let backend = &self.inner.backend;
        match backend.try_send_cached_single_peer(Message::Message(message), None) {
            CachedSend::Sent => DealerTrySend::Sent,
            CachedSend::Full { message: Message::Message(message), .. }
            | CachedSend::Miss(Message::Message(message)) => DealerTrySend::NotNow(message),
            // Only a `Message::Message` was handed over, so only one comes back: this arm
            // exists for the other variants the type can hold, and is never taken.
            CachedSend::Full { .. } | CachedSend::Miss(_) => DealerTrySend::Disconnected,
            CachedSend::Disconnected { peer_id, .. } => {
                backend.peer_disconnected(&peer_id);
                DealerTrySend::Disconnected
            }
        }
    }
}

#[async_trait]
impl SocketSend for DealerSendHalf {
    async fn send(&mut self, message: ZmqMessage) -> ZmqResult<()> {
        self.inner
            .backend
            .send_round_robin(Message::Message(message))
            .await?;
        Ok(())
    }
}

impl CaptureSocket for DealerSendHalf {}

#[async_trait]
impl SocketRecv for DealerRecvHalf {
    async fn recv(&mut self) -> ZmqResult<ZmqMessage> {
        loop {
            match self.fair_queue.next().await {
                Some((_peer_id, Ok(Message::Message(message)))) => {
                    return Ok(message);
                }
                Some((_peer_id, Ok(_))) => {}
                Some((_peer_id, Err(e))) => {
                    return Err(e.into());
                }
                None => {
                    return Err(ZmqError::NoMessage);
                }
            };
        }
    }
}
