//! Reading the broker's messages: replies, events, callbacks and calls to served modules.

use std::time::Duration;

use naobroker_protocol::{
    Envelope, ErrorKind, ProtocolError, Value, DEFAULT_MAX_FRAME_BYTES, HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TIMEOUT_MS, PROTOCOL_VERSION,
};
use tokio::sync::mpsc;
use tokio::time::Instant;
use zeromq::{DealerRecvHalf, SocketRecv, ZmqMessage};

use super::{ClientSession, StreamSlot, Writer, ACK_EVERY};
use crate::error::CallError;
use crate::event::Event;

impl ClientSession {
    /// Read until the connection fails, the broker is silent for too long, or the session
    /// closes. The silence timer and the close watch live across messages: a message costs a
    /// clock read, not a timer armed and a watch registered anew (0.8 k instructions each).
    pub(super) async fn read_until_lost(&self, mut receiver: DealerRecvHalf) {
        let silence = Duration::from_millis(HEARTBEAT_TIMEOUT_MS + HEARTBEAT_INTERVAL_MS);
        let mut closed = self.inner.closed.subscribe();
        let closing = closed.changed();
        let mut heard = Instant::now();
        let quiet = tokio::time::sleep_until(heard + silence);
        tokio::pin!(closing, quiet);
        loop {
            let next = tokio::select! {
                biased;
                _ = &mut closing => break,
                next = receiver.recv() => next,
                _ = &mut quiet => {
                    if heard.elapsed() < silence {
                        quiet.as_mut().reset(heard + silence);
                        continue;
                    }
                    tracing::warn!(url = %self.inner.url, "broker silent, reconnecting");
                    break;
                }
            };
            match next {
                Ok(message) => {
                    heard = Instant::now();
                    match decode(message) {
                        Ok(envelope) => self.on_envelope(envelope),
                        Err(error) => tracing::warn!(%error, "unreadable frame from the broker"),
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "connection to the broker lost");
                    break;
                }
            }
        }
        *self.inner.writer.borrow_mut() = Writer::Disconnected;
        let pending: Vec<_> = self.inner.pending.borrow_mut().drain().collect();
        for (_, sender) in pending {
            let lost = CallError::of(ErrorKind::ConnectionLost, "connection to the broker lost");
            let _ = sender.send(Err(lost));
        }
    }

    pub(super) fn on_envelope(&self, envelope: Envelope) {
        match envelope {
            Envelope::Reply { id, value } => self.resolve(id, Ok(value)),
            Envelope::Error { id: 0, message, .. } => tracing::warn!(%message, "broker error"),
            Envelope::Error { id, message, kind } => self.resolve(id, Err(CallError::of(kind, message))),
            Envelope::Event { name, value, lost } => {
                if lost > 0 {
                    tracing::warn!(event = %name, lost, "the broker dropped events: this client fell behind");
                }
                if let Some(streams) = self.inner.subscriptions.borrow_mut().get_mut(&name) {
                    deliver(streams, name, value, lost);
                }
                self.consumed();
            }
            Envelope::Callback { module, method, event, value, message, lost } => {
                self.run_callback(module, method, vec![event.into(), value, message], lost)
            }
            Envelope::Call { id, module, method, args } => self.serve(id, module, method, args, false),
            Envelope::Post { id, module, method, args } => self.serve(id, module, method, args, true),
            // The broker forgot this session and welcomes a connection that never said hello
            // (in the oldest version): say again who it is (its name, its session, the
            // version whose errors carry a kind), then what it served. The welcome that
            // answers that hello, in this version, asks for nothing more.
            Envelope::Welcome { version, .. } if version < PROTOCOL_VERSION => {
                self.send(&self.hello());
                self.restore()
            }
            Envelope::Welcome { .. } => {}
            Envelope::Heartbeat => {}
            other => tracing::debug!(?other, "unexpected message from the broker"),
        }
    }

    /// One event or callback consumed: acknowledge them in batches.
    pub(super) fn consumed(&self) {
        let unacked = self.inner.events_unacked.get() + 1;
        if unacked >= ACK_EVERY {
            self.send(&Envelope::Ack { count: unacked });
            self.inner.events_unacked.set(0);
        } else {
            self.inner.events_unacked.set(unacked);
        }
    }
}

/// Hand an event to each local stream of its subscription, each with the events it missed
/// (`lost` the broker's count for the session, plus those it had no room for). The last
/// stream takes the decoded name and value themselves, the others a copy: a subscription is
/// nearly always one stream, whose events then cost no copy. A closed stream is forgotten.
fn deliver(streams: &mut Vec<StreamSlot>, name: String, value: Value, lost: u64) {
    let mut decoded = Some((name, value));
    let last = streams.len().saturating_sub(1);
    let mut index = 0;
    streams.retain_mut(|stream| {
        let (name, value) = match (index == last, &decoded) {
            (false, Some((name, value))) => (name.clone(), value.clone()),
            _ => decoded.take().expect("the last stream takes the event once"),
        };
        index += 1;
        match stream.sender.try_send(Event { name, value, lost: stream.lost + lost }) {
            Ok(()) => stream.lost = 0,
            Err(mpsc::error::TrySendError::Full(_)) => stream.lost += lost + 1,
            Err(mpsc::error::TrySendError::Closed(_)) => return false,
        }
        true
    });
}

pub(super) fn decode(message: ZmqMessage) -> Result<Envelope, ProtocolError> {
    let frame = message.into_vec().into_iter().next().unwrap_or_default();
    Envelope::decode(&frame, DEFAULT_MAX_FRAME_BYTES)
}
