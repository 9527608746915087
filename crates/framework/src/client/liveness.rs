//! The liveness connection: a second connection of the session, on a thread of its own
//! that never runs user code, sending heartbeats for the main one. A module method that
//! blocks its thread for a minute does not make the broker think its process died.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_protocol::{Envelope, Role, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, PROTOCOL_VERSION};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

use super::keys::{socket_options, ClientKeys};

/// Stops the liveness thread when dropped.
pub(crate) struct Liveness {
    stop: Arc<AtomicBool>,
}

impl Liveness {
    /// Start heartbeats for the session `session` of `client` at `url`.
    pub(crate) fn start(
        url: &str,
        client: &str,
        session: Vec<u8>,
        keys: Option<ClientKeys>,
    ) -> std::io::Result<Liveness> {
        let stop = Arc::new(AtomicBool::new(false));
        let hello = Envelope::Hello {
            version: PROTOCOL_VERSION,
            client: client.to_owned(),
            session,
            role: Role::Liveness,
        };
        let (url, stopped) = (url.to_owned(), Arc::clone(&stop));
        std::thread::Builder::new().name("naobroker-liveness".into()).spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
            match runtime {
                Ok(runtime) => runtime.block_on(keep_alive(&url, &hello, keys.as_ref(), &stopped)),
                Err(error) => tracing::error!(%error, "no runtime for the liveness connection"),
            }
        })?;
        Ok(Liveness { stop })
    }
}

impl Drop for Liveness {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

async fn keep_alive(url: &str, hello: &Envelope, keys: Option<&ClientKeys>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let mut socket = zeromq::DealerSocket::with_options(socket_options(keys));
        let connected = tokio::time::timeout(Duration::from_secs(2), socket.connect(url)).await;
        if matches!(connected, Ok(Ok(()))) && socket.send(ZmqMessage::from(hello.encode())).await.is_ok() {
            beat(&mut socket, stop).await;
        }
        if !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Heartbeat until the broker falls silent (it heartbeats every client) or we are stopped.
async fn beat(socket: &mut zeromq::DealerSocket, stop: &AtomicBool) {
    let interval = Duration::from_millis(HEARTBEAT_INTERVAL_MS);
    let silence = Duration::from_millis(HEARTBEAT_TIMEOUT_MS + HEARTBEAT_INTERVAL_MS);
    let heartbeat = Envelope::Heartbeat.encode();
    let mut ticker = tokio::time::interval(interval);
    let mut last_heard = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                if stop.load(Ordering::Relaxed) || last_heard.elapsed() > silence {
                    return;
                }
                if socket.send(ZmqMessage::from(heartbeat.clone())).await.is_err() {
                    return;
                }
            }
            received = socket.recv() => match received {
                Ok(_) => last_heard = tokio::time::Instant::now(),
                Err(_) => return,
            },
        }
    }
}
