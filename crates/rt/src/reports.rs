//! Reports from a real-time thread to the actor side: a queue preallocated at start, and a
//! datagram that wakes the reader without ever blocking the writer.

use std::os::unix::net::UnixDatagram;

/// The real-time thread's end.
pub struct Reporter<T> {
    queue: rtrb::Producer<T>,
    wake: UnixDatagram,
}

/// The reader's end: drain `queue` when `wake` becomes readable (see [`crate::Wakeups`]).
pub struct ReportReader<T> {
    pub queue: rtrb::Consumer<T>,
    pub wake: UnixDatagram,
}

/// A report queue holding `capacity` reports.
pub fn report_queue<T>(capacity: usize) -> std::io::Result<(Reporter<T>, ReportReader<T>)> {
    let (producer, consumer) = rtrb::RingBuffer::new(capacity);
    let (sender, receiver) = UnixDatagram::pair()?;
    sender.set_nonblocking(true)?;
    receiver.set_nonblocking(true)?;
    Ok((Reporter { queue: producer, wake: sender }, ReportReader { queue: consumer, wake: receiver }))
}

impl<T> Reporter<T> {
    /// Reports the queue has room for now.
    pub fn room(&self) -> usize {
        self.queue.slots()
    }

    /// Queue a report; a full queue gives it back.
    pub fn push(&mut self, report: T) -> Result<(), T> {
        self.queue.push(report).map_err(|rtrb::PushError::Full(report)| report)
    }

    /// Wake the reader. Never blocks: a full socket means a wake-up is pending anyway.
    pub fn wake(&self) {
        let _ = self.wake.send(&[0]);
    }
}
