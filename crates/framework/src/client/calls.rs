//! Writing to the broker: requests and their replies, calls, subscriptions, in order without waiting.

use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use naobroker_protocol::{Envelope, ErrorKind, Value};
use tokio::sync::{mpsc, oneshot};
use zeromq::{DealerTrySend, SocketSend, ZmqMessage};

use super::{ClientSession, StreamSlot, Writer};
use crate::error::{CallError, CallResult};
use crate::event::EventStream;
use crate::frame;

/// What a request was, for its errors: `module.method` for a call.
struct What<'a>(Option<(&'a str, &'a str)>);

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some((module, method)) => write!(f, "{module}.{method}"),
            None => f.write_str("request"),
        }
    }
}

impl ClientSession {
    pub(super) fn resolve(&self, id: u64, result: CallResult) {
        if let Some(sender) = self.inner.pending.borrow_mut().remove(&id) {
            let _ = sender.send(result);
        }
    }

    /// Hand a message to the socket on the caller's task: no hop to a writer task
    /// while the socket takes messages at once, a queue behind it when it does not.
    pub(super) fn send(&self, envelope: &Envelope) -> bool {
        self.send_bytes(frame::encoded(|buf| envelope.encode_into(buf)))
    }

    /// [`Self::send`] of a message already encoded.
    fn send_bytes(&self, payload: Bytes) -> bool {
        let mut writer = self.inner.writer.borrow_mut();
        let mut half = match std::mem::replace(&mut *writer, Writer::Disconnected) {
            Writer::Disconnected => return false,
            Writer::Busy(mut backlog) => {
                backlog.push_back(payload);
                *writer = Writer::Busy(backlog);
                return true;
            }
            Writer::Idle(half) => half,
        };
        // Queued at once when the socket has room: no future, no task.
        let message = match half.try_send(ZmqMessage::from(payload)) {
            DealerTrySend::Sent => {
                *writer = Writer::Idle(half);
                return true;
            }
            DealerTrySend::Disconnected => return false,
            DealerTrySend::NotNow(message) => message,
        };
        let mut sending = async move {
            let sent = half.send(message).await.is_ok();
            (half, sent)
        }
        .boxed_local();
        let mut context = std::task::Context::from_waker(futures::task::noop_waker_ref());
        if let std::task::Poll::Ready((half, sent)) = sending.poll_unpin(&mut context) {
            if sent {
                *writer = Writer::Idle(half);
            }
            return sent;
        }
        *writer = Writer::Busy(Default::default());
        drop(writer);
        let weak = Rc::downgrade(&self.inner);
        actix_rt::spawn(async move {
            let (mut half, mut sent) = sending.await;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let next = match &mut *inner.writer.borrow_mut() {
                    Writer::Busy(backlog) if sent => backlog.pop_front(),
                    _ => None,
                };
                match next {
                    Some(payload) => sent = half.send(ZmqMessage::from(payload)).await.is_ok(),
                    None => {
                        let mut writer = inner.writer.borrow_mut();
                        // Reconnected meanwhile (Idle), or failed: this socket is done.
                        if !sent {
                            *writer = Writer::Disconnected;
                        } else if matches!(*writer, Writer::Busy(_)) {
                            *writer = Writer::Idle(half);
                        }
                        return;
                    }
                }
            }
        });
        true
    }

    /// Send a request and wait for its reply, or until `timeout` if there is one.
    pub(super) fn request(
        &self,
        build: impl FnOnce(u64) -> Envelope,
        timeout: Option<Duration>,
    ) -> impl std::future::Future<Output = CallResult> + 'static {
        let id = self.next_request_id();
        let envelope = build(id);
        let answer = self.start(id, frame::encoded(|buf| envelope.encode_into(buf)));
        async move { answer.wait(timeout, What(None)).await }
    }

    fn next_request_id(&self) -> u64 {
        let id = self.inner.next_id.get() + 1;
        self.inner.next_id.set(id);
        id
    }

    /// Send request `id`, encoded as `payload`; its answer comes to what this returns.
    fn start(&self, id: u64, payload: Bytes) -> Answer {
        let (sender, receiver) = oneshot::channel();
        self.inner.pending.borrow_mut().insert(id, sender);
        let sent = self.send_bytes(payload);
        Answer { session: Rc::downgrade(&self.inner), id, sent, receiver }
    }

    /// Call `module.method(args)` (or post it as a task), with the session's call limit.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        self.call_within(module, method, args, post, self.inner.call_timeout.get()).await
    }

    /// Call with a limit of its own: `None` waits as long as the broker and callee live.
    pub async fn call_within(
        &self,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
        timeout: Option<Duration>,
    ) -> CallResult {
        // Encoded from the borrowed names, which an error names too: a call that succeeds
        // copies and formats nothing.
        let id = self.next_request_id();
        let payload = frame::encoded(|buf| Envelope::encode_call_into(buf, id, module, method, &args, post));
        drop(args);
        self.start(id, payload).wait(timeout, What(Some((module, method)))).await
    }

    /// Receive every event named `event`.
    pub async fn subscribe(&self, event: &str) -> Result<EventStream, CallError> {
        let (sender, receiver) = mpsc::channel(1024);
        let first = {
            let mut subscriptions = self.inner.subscriptions.borrow_mut();
            let streams = subscriptions.entry(event.to_owned()).or_default();
            streams.push(StreamSlot { sender, lost: 0 });
            streams.len() == 1
        };
        if first {
            let name = event.to_owned();
            let timeout = self.inner.call_timeout.get();
            if let Err(error) = self.request(|id| Envelope::Subscribe { id, event: name }, timeout).await {
                self.inner.subscriptions.borrow_mut().remove(event);
                return Err(error);
            }
        }
        Ok(EventStream::new(receiver))
    }
}

/// A request sent (or not, when the session had no connection), until its answer.
struct Answer {
    session: std::rc::Weak<super::Inner>,
    id: u64,
    sent: bool,
    receiver: oneshot::Receiver<CallResult>,
}

impl Answer {
    /// The answer, or an error naming `what` when there is none (within `timeout`).
    async fn wait(self, timeout: Option<Duration>, what: What<'_>) -> CallResult {
        let Answer { session, id, sent, receiver } = self;
        let forget = || {
            if let Some(inner) = session.upgrade() {
                inner.pending.borrow_mut().remove(&id);
            }
        };
        if !sent {
            forget();
            return Err(CallError::of(
                ErrorKind::ConnectionLost,
                format!("{what}: not connected to the broker"),
            ));
        }
        let lost =
            |_| CallError::of(ErrorKind::ConnectionLost, format!("{what}: connection to the broker lost"));
        let Some(timeout) = timeout else { return receiver.await.map_err(lost)? };
        match tokio::time::timeout(timeout, receiver).await {
            Ok(answer) => answer.map_err(lost)?,
            Err(_) => {
                forget();
                let message = format!("{what} timed out after {} ms", timeout.as_millis());
                Err(CallError::of(ErrorKind::TimedOut, message))
            }
        }
    }
}
