//! Binding the broker's listeners: which addresses may be bound, and with what options.

use std::os::unix::fs::FileTypeExt;

use bytes::Bytes;
use zeromq::{RouterSendHalf, RouterSocket, Socket, SocketOptions};

use super::BrokerConfig;

/// Bind every endpoint of `config` on one ROUTER socket, with the frame limit applied
/// from each frame's header.
pub(super) async fn bind(config: &BrokerConfig) -> Result<RouterSocket, String> {
    let mut options = SocketOptions::default();
    options.max_message_size(config.limits.max_frame_bytes as u64);
    let mut socket = RouterSocket::with_options(options);
    for endpoint in &config.listen {
        check_endpoint(endpoint)?;
        socket.bind(endpoint).await.map_err(|error| format!("cannot listen on {endpoint}: {error}"))?;
    }
    Ok(socket)
}

/// Refuse what must not be bound: a non-loopback TCP address without authentication,
/// and an `ipc://` path holding anything but a stale socket file (which is removed: a
/// crashed broker leaves its socket behind, and bind would fail).
fn check_endpoint(endpoint: &str) -> Result<(), String> {
    if let Some(path) = endpoint.strip_prefix("ipc://") {
        return match std::fs::symlink_metadata(path) {
            Err(_) => Ok(()),
            Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)
                .map_err(|error| format!("cannot listen on {endpoint}: cannot remove the old socket: {error}")),
            Ok(_) => Err(format!(
                "cannot listen on {endpoint}: {path} exists and is not a socket; remove it or choose another path"
            )),
        };
    }
    if let Some(address) = endpoint.strip_prefix("tcp://") {
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
        if !is_loopback(host) {
            return Err(format!(
                "refusing to listen on {endpoint}: a listener beyond loopback needs authentication \
                 (see docs/security.md)"
            ));
        }
    }
    Ok(())
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Close one client's connection (the broker already forgot its state).
pub(super) fn drop_peer(sender: &RouterSendHalf, peer: &Bytes) {
    if let Ok(identity) = zeromq::util::PeerIdentity::try_from(peer.clone()) {
        sender.disconnect_peer(&identity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_tcp_is_bound_without_authentication() {
        assert!(check_endpoint("tcp://127.0.0.1:9559").is_ok());
        assert!(check_endpoint("tcp://localhost:9559").is_ok());
        assert!(check_endpoint("tcp://[::1]:9559").is_ok());
        let refused = check_endpoint("tcp://0.0.0.0:9559").unwrap_err();
        assert!(refused.contains("needs authentication"), "{refused}");
        assert!(check_endpoint("tcp://192.168.1.10:9559").is_err());
    }

    #[test]
    fn an_ipc_path_holding_anything_but_a_socket_is_refused() {
        let dir = std::env::temp_dir().join(format!("naobroker-endpoints-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("precious.txt");
        std::fs::write(&file, "keep me").unwrap();
        let refused = check_endpoint(&format!("ipc://{}", file.display())).unwrap_err();
        assert!(refused.contains("is not a socket"), "{refused}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
        let socket_path = dir.join("stale.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
        drop(listener);
        check_endpoint(&format!("ipc://{}", socket_path.display())).unwrap();
        assert!(!socket_path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
