//! Writing to clients: replies and refusals, each client's bounded queue and its one writer task.

use naobroker_protocol::cut;

use super::*;

impl Broker {
    pub(super) fn send(&self, peer: &Bytes, envelope: &Envelope) {
        self.send_bytes(peer, Bytes::from(envelope.encode()));
    }

    /// Send without ever waiting on a slow peer: handed to the socket at once when it has
    /// room and nothing is queued before it, else queued behind the client's one writer
    /// task. A client whose queue passes its bound is disconnected.
    pub(super) fn send_bytes(&self, peer: &Bytes, payload: Bytes) {
        let limits = &self.inner.config.limits;
        let over_bound = {
            let mut state = self.inner.state.borrow_mut();
            match state.clients.get_mut(peer) {
                Some(client) if client.outbox.writing => {
                    let outbox = &mut client.outbox;
                    outbox.bytes += payload.len();
                    outbox.queue.push_back(payload);
                    outbox.queue.len() > limits.max_queued_messages || outbox.bytes > limits.max_queued_bytes
                }
                _ => {
                    drop(state);
                    return self.write_now(peer, payload);
                }
            }
        };
        if over_bound {
            self.disconnect(peer, "its outgoing queue passed max_queued_messages or max_queued_bytes");
        }
    }

    fn write_now(&self, peer: &Bytes, payload: Bytes) {
        let (mut sender, message) = endpoints::addressed(&self.inner.senders, peer, payload);
        let mut sending = async move { sender.send(message).await }.boxed_local();
        let mut context = TaskContext::from_waker(futures::task::noop_waker_ref());
        if sending.poll_unpin(&mut context).is_ready() {
            return;
        }
        bump(&self.inner.counters.sends_deferred);
        if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(peer) {
            client.outbox.writing = true;
        }
        let (weak, peer) = (Rc::downgrade(&self.inner), peer.clone());
        actix_rt::spawn(async move {
            let _ = sending.await;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let next = {
                    let mut state = inner.state.borrow_mut();
                    let Some(client) = state.clients.get_mut(&peer) else { return };
                    match client.outbox.queue.pop_front() {
                        Some(payload) => {
                            client.outbox.bytes -= payload.len();
                            payload
                        }
                        None => {
                            client.outbox.writing = false;
                            client.outbox.queue.shrink_to_fit();
                            return;
                        }
                    }
                };
                let (mut sender, message) = endpoints::addressed(&inner.senders, &peer, next);
                drop(inner);
                let _ = sender.send(message).await;
            }
        });
    }

    pub(super) fn reply(&self, peer: &Bytes, id: u64, result: CallResult) {
        if let Some(client) = self.inner.state.borrow_mut().clients.get_mut(peer) {
            client.calls_in_flight = client.calls_in_flight.saturating_sub(1);
        }
        let envelope = match result {
            Ok(value) => Envelope::Reply { id, value },
            Err(error) => Envelope::Error { id, message: cut(&error.message, MAX_ERROR_BYTES) },
        };
        self.send(peer, &envelope);
    }

    /// Answer a request that was refused before it was counted as in flight.
    pub(super) fn refuse(&self, peer: &Bytes, id: u64, error: CallError) {
        bump(&self.inner.counters.refused);
        tracing::debug!(client = %ClientId(peer.clone()), %error, "request refused");
        self.send(peer, &Envelope::Error { id, message: error.message });
    }
}

/// Longest error message sent to a caller, in bytes: a module (in the broker or remote) may
/// quote its whole input in an error, and a reply must not echo a megabyte back.
const MAX_ERROR_BYTES: usize = 256;
