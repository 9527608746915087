//! Binding the ZeroMQ wire's listeners: which addresses may be bound, and with what options.

use std::os::unix::fs::FileTypeExt;

use zeromq::{CurvePublicKey, CurveSecretKey, RouterSocket, Socket, SocketOptions};

use crate::broker::WirePort;
use crate::error::ListenError;

/// Listeners that admit only clients proving one of `clients`' keys (ZeroMQ's CURVE:
/// encrypted, authenticated, `docs/security.md`).
#[derive(Clone)]
pub struct CurveListeners {
    pub listen: Vec<String>,
    pub secret_key: CurveSecretKey,
    pub clients: Vec<CurvePublicKey>,
    /// Clients (among `clients`) whose `ServiceDirectory.stats` shows every client's
    /// entries; any other sees its own.
    pub stats_readers: Vec<CurvePublicKey>,
}

impl std::fmt::Debug for CurveListeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurveListeners")
            .field("listen", &self.listen)
            .field("public_key", &self.secret_key.public_key().to_z85())
            .field("clients", &self.clients.len())
            .finish()
    }
}

/// Messages ZeroMQ holds for one peer before the broker's own queue takes over.
const ZEROMQ_QUEUE_PER_PEER: usize = 16;

/// Bind the plain endpoints (loopback and `ipc://`) on one ROUTER socket and the CURVE
/// endpoints on another, each with the frame limit applied from each frame's header, the
/// broker's budget of unfinished messages and its stall timeout.
pub(super) async fn bind(
    listen: &[String],
    curve: Option<&CurveListeners>,
    broker: &WirePort,
) -> Result<Vec<RouterSocket>, ListenError> {
    let limits = broker.limits();
    let limited = || {
        let mut options = SocketOptions::default();
        options.max_message_size(limits.max_frame_bytes as u64);
        options.unfinished_budget(std::sync::Arc::clone(broker.unfinished_budget()));
        options.stall_timeout(limits.stall_timeout());
        // The broker bounds each client's queue itself (max_queued_*): ZeroMQ's own per-peer
        // queue stays short, so that a client that does not read reaches that bound.
        options.send_queue_capacity(ZEROMQ_QUEUE_PER_PEER);
        options
    };
    let mut plain = RouterSocket::with_options(limited());
    for endpoint in listen {
        check_endpoint(endpoint, false)?;
        plain.bind(endpoint).await.map_err(|source| bind_error(endpoint, source))?;
    }
    let mut sockets = vec![plain];
    if let Some(curve) = curve {
        if curve.clients.is_empty() {
            return Err(ListenError::NoCurveClients);
        }
        let mut options = limited();
        options.curve_server(curve.secret_key.clone(), curve.clients.iter().copied());
        let mut secured = RouterSocket::with_options(options);
        for endpoint in &curve.listen {
            check_endpoint(endpoint, true)?;
            secured.bind(endpoint).await.map_err(|source| bind_error(endpoint, source))?;
        }
        sockets.push(secured);
    }
    Ok(sockets)
}

fn bind_error(endpoint: &str, source: zeromq::ZmqError) -> ListenError {
    ListenError::Bind { endpoint: endpoint.to_owned(), source }
}

/// Refuse what must not be bound: a non-loopback TCP address without authentication,
/// and an `ipc://` path holding anything but a stale socket file. A stale one (a crashed
/// broker leaves its socket behind, and bind would fail) is removed; one where another
/// process still listens is not taken over. `ipc://@name` is Linux's abstract namespace
/// (as libzmq's): no file, and a name in use fails the bind.
fn check_endpoint(endpoint: &str, authenticated: bool) -> Result<(), ListenError> {
    let owned_endpoint = || endpoint.to_owned();
    if let Some(path) = endpoint.strip_prefix("ipc://") {
        if path.starts_with('@') {
            return Ok(());
        }
        return match std::fs::symlink_metadata(path) {
            Err(_) => Ok(()),
            Ok(meta) if meta.file_type().is_socket() => {
                if std::os::unix::net::UnixStream::connect(path).is_ok() {
                    return Err(ListenError::SocketInUse {
                        endpoint: owned_endpoint(),
                        path: path.to_owned(),
                    });
                }
                std::fs::remove_file(path)
                    .map_err(|source| ListenError::StaleSocket { endpoint: owned_endpoint(), source })
            }
            Ok(_) => Err(ListenError::NotASocket { endpoint: owned_endpoint(), path: path.to_owned() }),
        };
    }
    if let Some(address) = endpoint.strip_prefix("tcp://") {
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
        if !authenticated && !is_loopback(host) {
            return Err(ListenError::NeedsAuthentication { endpoint: owned_endpoint() });
        }
    }
    Ok(())
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_endpoint_plain(endpoint: &str) -> Result<(), ListenError> {
        check_endpoint(endpoint, false)
    }

    #[test]
    fn only_loopback_tcp_is_bound_without_authentication() {
        assert!(check_endpoint("tcp://0.0.0.0:9559", true).is_ok());
        assert!(check_endpoint_plain("tcp://127.0.0.1:9559").is_ok());
        assert!(check_endpoint_plain("tcp://localhost:9559").is_ok());
        assert!(check_endpoint_plain("tcp://[::1]:9559").is_ok());
        let refused = check_endpoint_plain("tcp://0.0.0.0:9559").unwrap_err().to_string();
        assert!(refused.contains("needs authentication"), "{refused}");
        assert!(check_endpoint_plain("tcp://192.168.1.10:9559").is_err());
    }

    #[test]
    fn an_ipc_path_holding_anything_but_a_socket_is_refused() {
        let dir = std::env::temp_dir().join(format!("naobroker-endpoints-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("precious.txt");
        std::fs::write(&file, "keep me").unwrap();
        let refused = check_endpoint_plain(&format!("ipc://{}", file.display())).unwrap_err().to_string();
        assert!(refused.contains("is not a socket"), "{refused}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
        let socket_path = dir.join("stale.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
        let live = check_endpoint_plain(&format!("ipc://{}", socket_path.display())).unwrap_err().to_string();
        assert!(live.contains("another process is listening"), "{live}");
        drop(listener);
        check_endpoint_plain(&format!("ipc://{}", socket_path.display())).unwrap();
        assert!(!socket_path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
