//! CURVE security in the vendored zeromq crate (vendor/zeromq/PATCHES.md): Rust to Rust,
//! refusal of peers without valid credentials, and what actually crosses the wire
//! (interoperation with libzmq: `zeromq_curve_libzmq.rs`).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use zeromq::{
    z85_decode, z85_encode, CurveError, CurveKeyPair, CurvePublicKey, CurveSecretKey, DealerSocket, Endpoint,
    RouterSocket, Socket, SocketEvent, SocketRecv, SocketSend, ZmqError,
};

mod curve_sockets;

use curve_sockets::*;

fn socket_addr(endpoint: &Endpoint) -> SocketAddr {
    tcp_endpoint(endpoint).trim_start_matches("tcp://").parse().expect("a TCP endpoint")
}

#[test]
fn z85_follows_rfc_32_and_keys_round_trip() {
    let bytes = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
    assert_eq!(z85_encode(&bytes).unwrap(), "HelloWorld");
    assert_eq!(z85_decode("HelloWorld").unwrap(), bytes);
    assert!(z85_encode(&bytes[..3]).is_err(), "Z85 encodes whole 4-byte groups only");
    assert!(z85_decode("Hello Worl").is_err(), "a space is not a Z85 character");
    assert!(z85_decode("#####").is_err(), "a group above 2^32 - 1 is refused");

    let pair = CurveKeyPair::generate();
    let public_text = pair.public.to_string();
    assert_eq!(public_text.len(), 40);
    assert_eq!(public_text.parse::<CurvePublicKey>().unwrap(), pair.public);
    let secret = CurveSecretKey::from_z85(&pair.secret.to_z85()).unwrap();
    assert_eq!(secret.public_key(), pair.public);
    assert!(!format!("{:?}", pair.secret).contains(&pair.secret.to_z85()), "Debug hides the secret");
    assert!(CurvePublicKey::from_z85(&public_text[..39]).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_dealer_and_router_talk_over_curve() {
    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let (mut router, endpoint) = curve_router(&server, &[client.public]).await;
    let mut dealer = curve_dealer(server.public, &client);
    within("the CURVE handshake", dealer.connect(&tcp_endpoint(&endpoint))).await.expect("connect");

    // Enough round trips for the nonces to count on, short and long frames, multipart.
    let large = vec![0x5a_u8; 100_000];
    for round in 0..50u32 {
        let request = format!("request {round}");
        dealer.send(message(&[request.as_bytes(), b"", &large])).await.expect("dealer send");
        let (identity, received) = receive_from_peer(&mut router).await;
        assert_eq!(received, vec![request.into_bytes(), Vec::new(), large.clone()]);
        assert_eq!(router.peer_public_key(&identity), Some(client.public));

        let reply = format!("reply {round}");
        let mut outgoing = message(&[reply.as_bytes(), &large[..300]]);
        outgoing.push_front(identity.into());
        router.send(outgoing).await.expect("router send");
        let received = frames(within("a reply at the dealer", dealer.recv()).await.expect("dealer recv"));
        assert_eq!(received, vec![reply.into_bytes(), large[..300].to_vec()]);
    }
}
/// Waits for `count` failed handshakes on a router's monitor and returns their errors.
async fn accept_failures(
    monitor: &mut futures::channel::mpsc::Receiver<SocketEvent>,
    count: usize,
) -> Vec<ZmqError> {
    let mut failures = Vec::new();
    while failures.len() < count {
        match within("a refused handshake on the monitor", monitor.next()).await {
            Some(SocketEvent::AcceptFailed(error)) => failures.push(error),
            Some(_) => {}
            None => panic!("monitor closed"),
        }
    }
    failures
}

/// Reads what a peer sends until it closes the connection (a reset, when it closed with our
/// bytes unread, counts as closed too).
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return received,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => return received,
            Err(error) => panic!("the router did not close the connection: {error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curve_router_refuses_peers_without_valid_credentials() {
    let server = CurveKeyPair::generate();
    let good = CurveKeyPair::generate();
    let (mut router, endpoint) = curve_router(&server, &[good.public]).await;
    let mut monitor = router.monitor();
    let url = tcp_endpoint(&endpoint);

    // A key that is not on the allow-list.
    let stranger = CurveKeyPair::generate();
    let mut dealer = curve_dealer(server.public, &stranger);
    let error = within("the stranger's refusal", dealer.connect(&url)).await.expect_err("stranger refused");
    assert!(matches!(&error, ZmqError::Curve(CurveError::Refused(reason)) if reason == "400"), "{error}");
    assert!(dealer.send(message(&[b"stranger payload"])).await.is_err(), "no connection to send on");
    let failure = accept_failures(&mut monitor, 1).await.remove(0);
    assert!(
        matches!(&failure, ZmqError::Curve(CurveError::NotAllowed(key)) if *key == stranger.public),
        "{failure}"
    );

    // A client holding the wrong server key (its own allow-listed key pair, even).
    let mut dealer = curve_dealer(CurveKeyPair::generate().public, &good);
    let error = within("the wrong server key's refusal", dealer.connect(&url)).await.expect_err("refused");
    assert!(matches!(&error, ZmqError::Curve(CurveError::Refused(_))), "{error}");
    let failure = accept_failures(&mut monitor, 1).await.remove(0);
    assert!(matches!(&failure, ZmqError::Curve(CurveError::WrongServerKey)), "{failure}");

    // A NULL-mechanism zeromq client.
    let mut dealer = DealerSocket::new();
    let error = within("the NULL client's refusal", dealer.connect(&url)).await.expect_err("refused");
    assert!(matches!(&error, ZmqError::MechanismMismatch { ours: "NULL", theirs: "CURVE" }), "{error}");
    let failure = accept_failures(&mut monitor, 1).await.remove(0);
    assert!(matches!(&failure, ZmqError::MechanismMismatch { ours: "CURVE", theirs: "NULL" }), "{failure}");

    // A NULL peer that does not wait for answers: greeting, READY and a message in one write.
    let mut raw = TcpStream::connect(socket_addr(&endpoint)).expect("raw connect");
    let mut bytes = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0];
    bytes.extend_from_slice(b"NULL");
    bytes.resize(64, 0);
    let ready: &[u8] = b"\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER";
    bytes.extend_from_slice(&[0x04, ready.len() as u8]);
    bytes.extend_from_slice(ready);
    bytes.extend_from_slice(&[0x00, 12]);
    bytes.extend_from_slice(b"raw payload!");
    raw.write_all(&bytes).expect("raw write");
    let failure = accept_failures(&mut monitor, 1).await.remove(0);
    assert!(matches!(&failure, ZmqError::MechanismMismatch { theirs: "NULL", .. }), "{failure}");
    assert!(read_until_closed(&mut raw).len() <= 64, "the router sent its greeting and nothing more");

    // The good client still gets through, and is the first and only sender the router saw.
    let mut dealer = curve_dealer(server.public, &good);
    within("the good handshake", dealer.connect(&url)).await.expect("good client connects");
    for text in ["first good message", "second good message"] {
        dealer.send(message(&[text.as_bytes()])).await.expect("good send");
        let (identity, received) = receive_from_peer(&mut router).await;
        assert_eq!(received, vec![text.as_bytes().to_vec()]);
        assert_eq!(router.peer_public_key(&identity), Some(good.public));
    }
}

/// A TCP relay that keeps a copy of every byte it forwards, one record per direction, and
/// on demand corrupts what goes to the server.
struct RecordingProxy {
    address: SocketAddr,
    to_server: Arc<Mutex<Vec<u8>>>,
    to_client: Arc<Mutex<Vec<u8>>>,
    tamper_with_client_bytes: Arc<AtomicBool>,
}

impl RecordingProxy {
    fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let proxy = Self {
            address: listener.local_addr().unwrap(),
            to_server: Arc::default(),
            to_client: Arc::default(),
            tamper_with_client_bytes: Arc::default(),
        };
        let (to_server, to_client) = (proxy.to_server.clone(), proxy.to_client.clone());
        let tamper = proxy.tamper_with_client_bytes.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let server = TcpStream::connect(target).expect("proxy connects to the server");
                let (client_reader, server_reader) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (to_server, tamper) = (to_server.clone(), tamper.clone());
                std::thread::spawn(move || relay(client_reader, server, &to_server, &tamper));
                let to_client = to_client.clone();
                let never = AtomicBool::new(false);
                std::thread::spawn(move || relay(server_reader, client, &to_client, &never));
            }
        });
        proxy
    }

    fn url(&self) -> String {
        format!("tcp://{}", self.address)
    }

    fn saw(&self, needle: &[u8]) -> bool {
        [&self.to_server, &self.to_client]
            .iter()
            .any(|record| record.lock().unwrap().windows(needle.len()).any(|window| window == needle))
    }
}

/// Copies `from` to `to`, recording each chunk before it is forwarded, and flipping the last
/// bit of each chunk while `tamper` is set.
fn relay(mut from: TcpStream, mut to: TcpStream, record: &Mutex<Vec<u8>>, tamper: &AtomicBool) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                record.lock().unwrap().extend_from_slice(&buffer[..read]);
                if tamper.load(Ordering::SeqCst) {
                    buffer[read - 1] ^= 1;
                }
                if to.write_all(&buffer[..read]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

const REQUEST_TEXT: &[u8] = b"naobroker-distinctive-request-payload-7f3a";
const REPLY_TEXT: &[u8] = b"naobroker-distinctive-reply-payload-91c4";

/// Sends a request through `proxy` and back, and returns once both have arrived.
async fn exchange_through(router: &mut RouterSocket, mut dealer: DealerSocket, proxy: &RecordingProxy) {
    within("the handshake through the proxy", dealer.connect(&proxy.url())).await.expect("connect");
    dealer.send(message(&[REQUEST_TEXT])).await.expect("dealer send");
    let (identity, received) = receive_from_peer(router).await;
    assert_eq!(received, vec![REQUEST_TEXT.to_vec()]);
    let mut reply = message(&[REPLY_TEXT]);
    reply.push_front(identity.into());
    router.send(reply).await.expect("router send");
    let received = frames(within("the reply through the proxy", dealer.recv()).await.expect("dealer recv"));
    assert_eq!(received, vec![REPLY_TEXT.to_vec()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curve_hides_payloads_and_keys_that_null_shows() {
    // NULL first, so that the check is shown able to see a payload.
    let mut router = RouterSocket::new();
    let endpoint = router.bind("tcp://127.0.0.1:0").await.expect("bind");
    let proxy = RecordingProxy::start(socket_addr(&endpoint));
    exchange_through(&mut router, DealerSocket::new(), &proxy).await;
    assert!(proxy.saw(REQUEST_TEXT) && proxy.saw(REPLY_TEXT), "NULL traffic carries payloads in clear");

    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let (mut router, endpoint) = curve_router(&server, &[client.public]).await;
    let proxy = RecordingProxy::start(socket_addr(&endpoint));
    exchange_through(&mut router, curve_dealer(server.public, &client), &proxy).await;
    assert!(proxy.saw(b"CURVE") && proxy.saw(b"INITIATE"), "the recording holds the handshake");
    assert!(!proxy.saw(REQUEST_TEXT), "the request crossed in clear");
    assert!(!proxy.saw(REPLY_TEXT), "the reply crossed in clear");
    assert!(!proxy.saw(client.public.as_bytes()), "the client's identity key crossed in clear");
    assert!(!proxy.saw(&client.secret.to_bytes()), "the client's secret key crossed");
    assert!(!proxy.saw(&server.secret.to_bytes()), "the server's secret key crossed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curve_router_drops_a_peer_whose_message_box_does_not_open() {
    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let (mut router, endpoint) = curve_router(&server, &[client.public]).await;
    let mut monitor = router.monitor();
    let proxy = RecordingProxy::start(socket_addr(&endpoint));

    // The handshake passes the proxy untouched; from the first message on, bytes are altered.
    let mut tampered = curve_dealer(server.public, &client);
    within("the handshake through the proxy", tampered.connect(&proxy.url())).await.expect("connect");
    proxy.tamper_with_client_bytes.store(true, Ordering::SeqCst);
    tampered.send(message(&[b"altered on the way"])).await.expect("dealer send");

    let mut good = curve_dealer(server.public, &client);
    let good_client = async {
        loop {
            match within("the tampered peer's disconnection", monitor.next()).await {
                Some(SocketEvent::Disconnected(_)) => break,
                Some(_) => {}
                None => panic!("monitor closed"),
            }
        }
        within("the good handshake", good.connect(&tcp_endpoint(&endpoint))).await.expect("connect");
        good.send(message(&[b"straight"])).await.expect("good send");
    };
    let ((identity, received), ()) = tokio::join!(receive_from_peer(&mut router), good_client);
    assert_eq!(received, vec![b"straight".to_vec()], "the altered message was not delivered");
    assert_eq!(router.peer_public_key(&identity), Some(client.public));
}
