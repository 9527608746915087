//! Sockets and deadlines the CURVE tests share (`zeromq_curve.rs`, `zeromq_curve_libzmq.rs`).

use std::time::Duration;

use bytes::Bytes;
use zeromq::util::PeerIdentity;
use zeromq::{
    CurveKeyPair, CurvePublicKey, DealerSocket, Endpoint, RouterSocket, Socket, SocketOptions, SocketRecv,
    ZmqMessage,
};

/// Generous bound for anything that should happen at once: only a broken build waits this long.
pub const DEADLINE: Duration = Duration::from_secs(60);

pub async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, future).await.unwrap_or_else(|_| panic!("{what} within {DEADLINE:?}"))
}

pub fn message(frames: &[&[u8]]) -> ZmqMessage {
    ZmqMessage::try_from(frames.iter().map(|frame| Bytes::copy_from_slice(frame)).collect::<Vec<_>>())
        .expect("at least one frame")
}

pub fn frames(message: ZmqMessage) -> Vec<Vec<u8>> {
    message.into_vec().into_iter().map(|frame| frame.to_vec()).collect()
}

pub fn tcp_endpoint(endpoint: &Endpoint) -> String {
    endpoint.to_string()
}

pub async fn curve_router(server: &CurveKeyPair, allowed: &[CurvePublicKey]) -> (RouterSocket, Endpoint) {
    let mut options = SocketOptions::default();
    options.curve_server(server.secret.clone(), allowed.iter().copied());
    let mut router = RouterSocket::with_options(options);
    let endpoint = router.bind("tcp://127.0.0.1:0").await.expect("bind the CURVE router");
    (router, endpoint)
}

pub fn curve_dealer(server_key: CurvePublicKey, client: &CurveKeyPair) -> DealerSocket {
    let mut options = SocketOptions::default();
    options.curve_client(server_key, client.clone());
    DealerSocket::with_options(options)
}

/// Receives one message on a ROUTER and splits off the sender's identity.
pub async fn receive_from_peer(router: &mut RouterSocket) -> (PeerIdentity, Vec<Vec<u8>>) {
    let mut received = frames(within("a message at the router", router.recv()).await.expect("router recv"));
    let identity = PeerIdentity::try_from(received.remove(0)).expect("an identity frame");
    (identity, received)
}
