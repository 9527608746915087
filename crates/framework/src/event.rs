//! Events as a subscriber receives them, and the stream that delivers one subscription.

use naobroker_protocol::Value;
use tokio::sync::mpsc;

/// An event as delivered to a subscriber: its name and value, and how many events of this
/// subscription were dropped before it because the subscriber fell behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: String,
    pub value: Value,
    pub lost: u64,
}

/// Events one subscription delivers, in order.
pub struct EventStream {
    receiver: mpsc::Receiver<Event>,
}

impl EventStream {
    pub(crate) fn new(receiver: mpsc::Receiver<Event>) -> Self {
        EventStream { receiver }
    }

    /// The next event; `None` once the session is gone.
    pub async fn next(&mut self) -> Option<Event> {
        self.receiver.recv().await
    }
}
