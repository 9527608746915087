//! The events the broker's thread hands the adapter's thread: a queue bounded by count and by
//! the bytes of the values in it, whose overflow is dropped and counted (the broker's thread
//! never waits on the network).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use naobroker_framework::{encoded_size, Value};

use crate::bounds::{EVENT_QUEUE, EVENT_QUEUE_BYTES};
use crate::module::Counters;

/// An event raised: the index of its name in `[zenoh] events`, and its value.
pub(crate) struct Raised {
    pub(crate) index: usize,
    pub(crate) value: Value,
    /// The value's size, counted in the queue's bytes until it is taken.
    bytes: usize,
}

/// The broker's side of the queue.
#[derive(Clone)]
pub(crate) struct EventQueue {
    sender: mpsc::SyncSender<Raised>,
    queued_bytes: Arc<AtomicUsize>,
    counters: Arc<Counters>,
}

/// The adapter's side of the queue.
pub(crate) struct QueuedEvents {
    receiver: mpsc::Receiver<Raised>,
    queued_bytes: Arc<AtomicUsize>,
}

/// A queue of at most [`EVENT_QUEUE`] events and [`EVENT_QUEUE_BYTES`] of their values.
pub(crate) fn event_queue(counters: Arc<Counters>) -> (EventQueue, QueuedEvents) {
    let (sender, receiver) = mpsc::sync_channel(EVENT_QUEUE);
    let queued_bytes = Arc::new(AtomicUsize::new(0));
    (
        EventQueue { sender, queued_bytes: Arc::clone(&queued_bytes), counters },
        QueuedEvents { receiver, queued_bytes },
    )
}

impl EventQueue {
    /// Queue the event, or drop and count it when the queue is full by count or by bytes.
    pub(crate) fn push(&self, index: usize, value: Value) {
        let bytes = encoded_size(&value);
        let before = self.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
        let queued = before.saturating_add(bytes) <= EVENT_QUEUE_BYTES
            && self.sender.try_send(Raised { index, value, bytes }).is_ok();
        if !queued {
            self.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            Counters::bump(&self.counters.events_dropped);
        }
    }
}

impl QueuedEvents {
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Result<Raised, mpsc::RecvTimeoutError> {
        self.receiver.recv_timeout(timeout).inspect(|raised| self.taken(raised))
    }

    pub(crate) fn try_recv(&self) -> Option<Raised> {
        self.receiver.try_recv().ok().inspect(|raised| self.taken(raised))
    }

    fn taken(&self, raised: &Raised) {
        self.queued_bytes.fetch_sub(raised.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_bounded_by_the_bytes_of_its_values() {
        let counters = Arc::new(Counters::default());
        let (queue, queued) = event_queue(Arc::clone(&counters));
        // Four values of a quarter of the bytes each fill it, far below its count.
        let quarter = Value::from("x".repeat(EVENT_QUEUE_BYTES / 4 - 16));
        for _ in 0..5 {
            queue.push(0, quarter.clone());
        }
        assert_eq!(counters.events_dropped.load(Ordering::Relaxed), 1);
        // Taking one makes room for one.
        assert!(queued.try_recv().is_some());
        queue.push(0, quarter.clone());
        queue.push(0, quarter);
        assert_eq!(counters.events_dropped.load(Ordering::Relaxed), 2);
        let mut taken = 0;
        while queued.try_recv().is_some() {
            taken += 1;
        }
        assert_eq!((taken, queued.queued_bytes.load(Ordering::Relaxed)), (4, 0));
    }

    #[test]
    fn the_queue_is_bounded_by_count() {
        let counters = Arc::new(Counters::default());
        let (queue, _queued) = event_queue(Arc::clone(&counters));
        for _ in 0..EVENT_QUEUE + 3 {
            queue.push(0, Value::from(1));
        }
        assert_eq!(counters.events_dropped.load(Ordering::Relaxed), 3);
    }
}
