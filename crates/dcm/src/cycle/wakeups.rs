//! The actor side's end of the cycle thread's wake-up datagrams.

use std::os::unix::net::UnixDatagram;

/// The actor side's end of a real-time thread's wake-up datagrams: the thread sends a
/// byte after each cycle without ever blocking; this end waits for at least one and
/// swallows the rest, since the reports themselves travel in a queue.
pub struct Wakeups {
    socket: tokio::net::UnixDatagram,
}

impl Wakeups {
    /// Must be called inside a tokio runtime.
    pub fn new(socket: UnixDatagram) -> std::io::Result<Wakeups> {
        Ok(Wakeups { socket: tokio::net::UnixDatagram::from_std(socket)? })
    }

    /// Wait for the next wake-up; false once the sending thread is gone.
    pub async fn next(&self) -> bool {
        let mut buffer = [0u8; 64];
        if self.socket.recv(&mut buffer).await.is_err() {
            return false;
        }
        while self.socket.try_recv(&mut buffer).is_ok() {}
        true
    }
}
