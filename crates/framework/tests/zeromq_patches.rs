//! Tests of naobroker's patches to the vendored zeromq crate (vendor/zeromq/PATCHES.md): the
//! message size limit, disconnecting one ROUTER peer, the handshake timeout, sending
//! without waiting and `ipc://@name` as an abstract socket.
//!
//! Misbehaving peers are raw `std::net::TcpStream`s speaking ZMTP 3 byte by byte, run on
//! blocking threads so the router's single-threaded runtime keeps serving meanwhile.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::mpsc;
use zeromq::util::PeerIdentity;
use zeromq::{
    DealerSocket, DealerTrySend, Endpoint, RouterSendHalf, RouterSocket, RouterTrySend, Socket, SocketEvent,
    SocketOptions, SocketRecv, SocketSend, ZmqError, ZmqMessage,
};

/// The `max_message_size` of the routers under test.
const LIMIT: u64 = 64 * 1024;
/// How long any awaited condition may take before the test fails; generous on purpose.
const DEADLINE: Duration = Duration::from_secs(30);

const FLAG_MORE: u8 = 0b001;
const FLAG_LONG: u8 = 0b010;
const FLAG_COMMAND: u8 = 0b100;

/// A ZMTP 3.0 greeting for the NULL mechanism, as a client.
fn greeting() -> Vec<u8> {
    let mut greeting = vec![0u8; 64];
    greeting[0] = 0xff;
    greeting[9] = 0x7f;
    greeting[10] = 3;
    greeting[12..16].copy_from_slice(b"NULL");
    greeting
}

fn frame_header(flags: u8, len: u64) -> Vec<u8> {
    match u8::try_from(len) {
        Ok(short) if flags & FLAG_LONG == 0 => vec![flags, short],
        _ => {
            let mut header = vec![flags | FLAG_LONG];
            header.extend_from_slice(&len.to_be_bytes());
            header
        }
    }
}

fn frame(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut frame = frame_header(flags, body.len() as u64);
    frame.extend_from_slice(body);
    frame
}

/// The greeting and a READY command of a DEALER named `identity`.
fn handshake(identity: &str) -> Vec<u8> {
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    for (name, value) in [("Socket-Type", "DEALER"), ("Identity", identity)] {
        body.push(name.len() as u8);
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(&(value.len() as u32).to_be_bytes());
        body.extend_from_slice(value.as_bytes());
    }
    let mut bytes = greeting();
    bytes.extend(frame(FLAG_COMMAND, &body));
    bytes
}

/// A raw DEALER named `identity`, connected to the router on `port`, that said `hello`.
fn greeted_peer(port: u16, identity: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut bytes = handshake(identity);
    bytes.extend(frame(0, b"hello"));
    stream.write_all(&bytes).unwrap();
    stream
}

fn peer(identity: &str) -> PeerIdentity {
    identity.parse().unwrap()
}

fn is_closed_by_peer(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe)
}

/// Reads until the other end closes the connection; returns how many bytes came before.
/// Fails if the connection is still open after `DEADLINE`.
fn read_until_closed(stream: &mut TcpStream) -> Result<usize, String> {
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut received = 0;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(received),
            Ok(count) => received += count,
            Err(error) if is_closed_by_peer(&error) => return Ok(received),
            Err(error) => return Err(format!("the connection is still open after {DEADLINE:?}: {error}")),
        }
    }
}

/// Connects a raw peer to `port`, sends `bytes`, and waits until the router closes the
/// connection. A write refused because the router already closed counts as closed.
async fn send_and_expect_close(port: u16, bytes: Vec<u8>) {
    let outcome = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        match stream.write_all(&bytes) {
            Ok(()) => read_until_closed(&mut stream).map(drop),
            Err(error) if is_closed_by_peer(&error) => Ok(()),
            Err(error) => Err(format!("write failed: {error}")),
        }
    })
    .await
    .unwrap();
    outcome.unwrap();
}

/// A ROUTER on a free TCP port that echoes every message back to its sender and reports
/// it on the returned channel.
struct EchoRouter {
    port: u16,
    sender: RouterSendHalf,
    received: mpsc::UnboundedReceiver<ZmqMessage>,
    monitor: futures::channel::mpsc::Receiver<SocketEvent>,
}

impl EchoRouter {
    async fn start(options: SocketOptions) -> EchoRouter {
        let mut socket = RouterSocket::with_options(options);
        let monitor = socket.monitor();
        let port = match socket.bind("tcp://127.0.0.1:0").await.unwrap() {
            Endpoint::Tcp(_, port) => port,
            other => panic!("bound to {other}"),
        };
        let (sender, mut receiver) = socket.split();
        let (report, received) = mpsc::unbounded_channel();
        let mut echo = sender.clone();
        actix_rt::spawn(async move {
            while let Ok(message) = receiver.recv().await {
                // The peer may be gone by now; the test looks at what was received.
                let _ = echo.send(message.clone()).await;
                if report.send(message).is_err() {
                    break;
                }
            }
        });
        EchoRouter { port, sender, received, monitor }
    }

    fn url(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// The next message the router received, as (identity, body frames).
    async fn next_received(&mut self) -> (Bytes, Vec<Bytes>) {
        let message = tokio::time::timeout(DEADLINE, self.received.recv()).await.unwrap().unwrap();
        let mut frames = message.into_vec().into_iter();
        let identity = frames.next().unwrap();
        (identity, frames.collect())
    }

    async fn wait_for_drops(&self, expected: u64) {
        let started = Instant::now();
        while self.sender.oversized_message_drops() != expected {
            assert!(
                started.elapsed() < DEADLINE,
                "{} oversized-message drops, expected {expected}",
                self.sender.oversized_message_drops()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits for the monitor to report a failed accept that `matches`.
    async fn wait_for_accept_failure(&mut self, matches: impl Fn(&ZmqError) -> bool) {
        tokio::time::timeout(DEADLINE, async {
            loop {
                match self.monitor.next().await {
                    Some(SocketEvent::AcceptFailed(error)) if matches(&error) => return,
                    Some(_) => {}
                    None => panic!("the monitor closed"),
                }
            }
        })
        .await
        .expect("no matching AcceptFailed event");
    }
}

fn limited_options() -> SocketOptions {
    let mut options = SocketOptions::default();
    options.max_message_size(LIMIT);
    options
}

/// A well-behaved DEALER gets its message echoed by `router`.
async fn assert_served(router: &mut EchoRouter, text: &str) {
    let mut dealer = DealerSocket::new();
    dealer.connect(&router.url()).await.unwrap();
    dealer.send(ZmqMessage::from(text)).await.unwrap();
    let echoed = tokio::time::timeout(DEADLINE, dealer.recv()).await.unwrap().unwrap();
    assert_eq!(echoed.get(0).unwrap().as_ref(), text.as_bytes());
    let (_, frames) = router.next_received().await;
    assert_eq!(frames, vec![Bytes::copy_from_slice(text.as_bytes())]);
}

#[actix_rt::test]
async fn oversized_messages_close_only_the_offending_connection() {
    let mut router = EchoRouter::start(limited_options()).await;

    // A frame of exactly the limit passes; the next one, a byte longer, closes the connection.
    let mut bytes = handshake("exact");
    bytes.extend(frame(0, &vec![7u8; LIMIT as usize]));
    bytes.extend(frame_header(FLAG_LONG, LIMIT + 1));
    send_and_expect_close(router.port, bytes).await;
    let (identity, frames) = router.next_received().await;
    assert_eq!(identity.as_ref(), b"exact");
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].len() as u64, LIMIT);
    router.wait_for_drops(1).await;

    // 73 bytes that used to abort the process: memory allocation of 1099511693321 bytes failed.
    let mut bytes = handshake("huge");
    bytes.extend(frame_header(FLAG_LONG, 1 << 40));
    send_and_expect_close(router.port, bytes).await;
    router.wait_for_drops(2).await;

    // Frames flagged MORE that each fit but add up past the limit.
    let mut bytes = handshake("more");
    for _ in 0..100 {
        bytes.extend(frame(FLAG_MORE, &[1u8; 1000]));
    }
    send_and_expect_close(router.port, bytes).await;
    router.wait_for_drops(3).await;

    // Empty frames flagged MORE: no body at all, yet the message may not grow forever.
    let mut bytes = handshake("empty");
    for _ in 0..(2 * LIMIT / zeromq::MULTIPART_FRAME_OVERHEAD) {
        bytes.extend(frame(FLAG_MORE, &[]));
    }
    send_and_expect_close(router.port, bytes).await;
    router.wait_for_drops(4).await;

    assert_served(&mut router, "still serving").await;
    assert_eq!(router.sender.oversized_message_drops(), 4);
}

#[actix_rt::test]
async fn an_oversized_command_during_the_handshake_fails_the_accept() {
    let mut router = EchoRouter::start(limited_options()).await;
    let mut bytes = greeting();
    bytes.extend(frame_header(FLAG_COMMAND | FLAG_LONG, 1 << 40));
    send_and_expect_close(router.port, bytes).await;
    router
        .wait_for_accept_failure(|error| {
            matches!(error, ZmqError::Codec(zeromq::CodecError::MessageTooLarge { announced, limit })
                if *announced == 1 << 40 && *limit == LIMIT)
        })
        .await;
    assert_eq!(router.sender.oversized_message_drops(), 1);
    assert_served(&mut router, "after the bad handshake").await;
}

#[actix_rt::test]
async fn without_a_limit_large_messages_still_pass() {
    let mut router = EchoRouter::start(SocketOptions::default()).await;
    let mut dealer = DealerSocket::new();
    dealer.connect(&router.url()).await.unwrap();
    let body = Bytes::from(vec![3u8; 4 * LIMIT as usize]);
    dealer.send(ZmqMessage::from(body.clone())).await.unwrap();
    let echoed = tokio::time::timeout(DEADLINE, dealer.recv()).await.unwrap().unwrap();
    assert_eq!(echoed.get(0).unwrap(), &body);
    let (_, frames) = router.next_received().await;
    assert_eq!(frames, vec![body]);
    assert_eq!(router.sender.oversized_message_drops(), 0);
}

#[actix_rt::test]
async fn without_a_limit_an_announced_length_costs_nothing_until_it_is_sent() {
    let mut router = EchoRouter::start(SocketOptions::default()).await;
    let port = router.port;
    // Reserving the announced terabyte up front would abort the process here.
    let outcome = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut bytes = handshake("truncated");
        bytes.extend(frame_header(FLAG_LONG, 1 << 40));
        bytes.extend_from_slice(&[5u8; 1000]);
        stream.write_all(&bytes).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        read_until_closed(&mut stream)
    })
    .await
    .unwrap();
    outcome.unwrap();
    assert_served(&mut router, "after the truncated frame").await;
}

#[actix_rt::test]
async fn disconnect_peer_closes_one_connection_and_drops_its_queue() {
    let mut router = EchoRouter::start(SocketOptions::default()).await;
    let port = router.port;

    // A raw peer that says hello, then reads nothing until told to.
    let (start_reading, reading_allowed) = std_mpsc::channel::<()>();
    let slow_reader = tokio::task::spawn_blocking(move || {
        let mut stream = greeted_peer(port, "slow-reader");
        reading_allowed.recv().unwrap();
        read_until_closed(&mut stream)
    });
    let (identity, frames) = router.next_received().await;
    assert_eq!(identity.as_ref(), b"slow-reader");
    assert_eq!(frames, vec![Bytes::from_static(b"hello")]);

    // Far more than the socket buffers hold: the writer blocks on the peer that does not read.
    const QUEUED_MESSAGES: usize = 64;
    let megabyte = Bytes::from(vec![9u8; 1 << 20]);
    let mut sender = router.sender.clone();
    for _ in 0..QUEUED_MESSAGES {
        let message =
            ZmqMessage::try_from(vec![Bytes::from_static(b"slow-reader"), megabyte.clone()]).unwrap();
        sender.send(message).await.unwrap();
    }

    assert!(router.sender.disconnect_peer(&peer("slow-reader")));
    start_reading.send(()).unwrap();
    let received = slow_reader.await.unwrap().unwrap();
    assert!(
        received < QUEUED_MESSAGES << 20,
        "the peer got all {received} bytes: the queue was written out instead of dropped"
    );

    assert!(!router.sender.disconnect_peer(&peer("slow-reader")));
    let message = ZmqMessage::try_from(vec![Bytes::from_static(b"slow-reader"), megabyte]).unwrap();
    assert!(sender.send(message).await.is_err());
    assert_served(&mut router, "the other peer").await;
}

#[actix_rt::test]
async fn disconnect_peer_leaves_other_dealers_working() {
    let mut router = EchoRouter::start(SocketOptions::default()).await;
    let mut dealers = Vec::new();
    for name in ["first", "second"] {
        let mut options = SocketOptions::default();
        options.peer_identity(peer(name));
        let mut dealer = DealerSocket::with_options(options);
        let monitor = dealer.monitor();
        dealer.connect(&router.url()).await.unwrap();
        dealer.send(ZmqMessage::from(name)).await.unwrap();
        let (identity, _) = router.next_received().await;
        assert_eq!(identity.as_ref(), name.as_bytes());
        dealers.push((dealer, monitor));
    }

    assert!(router.sender.disconnect_peer(&peer("first")));
    // A DEALER notices a closed connection while it reads.
    let (first, first_monitor) = &mut dealers[0];
    tokio::time::timeout(DEADLINE, async {
        loop {
            tokio::select! {
                event = first_monitor.next() => match event {
                    Some(SocketEvent::Disconnected(_)) => return,
                    Some(_) => {}
                    None => panic!("the monitor closed"),
                },
                _ = first.recv() => {}
            }
        }
    })
    .await
    .expect("the first dealer never saw its connection close");

    let (second, _) = &mut dealers[1];
    // The echo of "second" sent above, then a new round trip.
    let echoed = tokio::time::timeout(DEADLINE, second.recv()).await.unwrap().unwrap();
    assert_eq!(echoed.get(0).unwrap().as_ref(), b"second");
    second.send(ZmqMessage::from("again")).await.unwrap();
    let echoed = tokio::time::timeout(DEADLINE, second.recv()).await.unwrap().unwrap();
    assert_eq!(echoed.get(0).unwrap().as_ref(), b"again");
}

#[actix_rt::test]
async fn peers_that_do_not_finish_the_handshake_are_closed() {
    let mut options = SocketOptions::default();
    options.handshake_timeout(Duration::from_millis(300));
    let mut router = EchoRouter::start(options).await;

    // One says nothing at all, the other greets but never sends READY.
    send_and_expect_close(router.port, Vec::new()).await;
    router.wait_for_accept_failure(|error| matches!(error, ZmqError::HandshakeTimeout(_))).await;
    send_and_expect_close(router.port, greeting()).await;
    router.wait_for_accept_failure(|error| matches!(error, ZmqError::HandshakeTimeout(_))).await;
}

#[actix_rt::test]
async fn a_peer_that_does_not_read_holds_at_most_its_send_queue() {
    const CAPACITY: usize = 4;
    const MESSAGE_BYTES: usize = 64 << 10;
    // Loopback's socket buffers take a few MiB before the writer blocks; a bounded queue
    // makes a send wait long before this many messages (64 MiB) are accepted.
    const UNBOUNDED_AFTER: usize = 1024;
    let mut options = SocketOptions::default();
    options.send_queue_capacity(CAPACITY);
    let mut router = EchoRouter::start(options).await;
    let port = router.port;

    // Two raw peers, so that sends go through the peer table rather than the cache of a
    // socket's only peer; neither reads.
    let (release, released) = std_mpsc::channel::<()>();
    let idle = tokio::task::spawn_blocking(move || {
        let _streams = ["not-reading", "bystander"].map(|identity| greeted_peer(port, identity));
        released.recv().unwrap();
    });
    for _ in 0..2 {
        router.next_received().await;
    }

    let body = Bytes::from(vec![7u8; MESSAGE_BYTES]);
    let mut sender = router.sender.clone();
    let mut accepted = 0;
    while accepted < UNBOUNDED_AFTER {
        let message = ZmqMessage::try_from(vec![Bytes::from_static(b"not-reading"), body.clone()]).unwrap();
        match tokio::time::timeout(Duration::from_millis(500), sender.send(message)).await {
            Ok(sent) => sent.unwrap(),
            Err(_waiting) => break,
        }
        accepted += 1;
    }
    assert!(
        accepted < UNBOUNDED_AFTER,
        "{accepted} messages of {MESSAGE_BYTES} bytes accepted for a peer that reads nothing: \
         its send queue of {CAPACITY} is not bounded"
    );
    release.send(()).unwrap();
    idle.await.unwrap();
}

/// `try_send_to` queues at once while the peer's queue has room, gives the message back whole
/// once it has none (a peer that reads nothing), and drops one for a peer that is not there.
#[actix_rt::test]
async fn try_send_to_queues_at_once_and_gives_back_what_does_not_fit() {
    const CAPACITY: usize = 4;
    const MESSAGE_BYTES: usize = 64 << 10;
    // As in the test above: loopback's buffers take a few MiB, then only the queue is left.
    const UNBOUNDED_AFTER: usize = 1024;
    let mut options = SocketOptions::default();
    options.send_queue_capacity(CAPACITY);
    let mut router = EchoRouter::start(options).await;
    let port = router.port;
    let (release, released) = std_mpsc::channel::<()>();
    let idle = tokio::task::spawn_blocking(move || {
        let _streams = ["not-reading", "bystander"].map(|identity| greeted_peer(port, identity));
        released.recv().unwrap();
    });
    for _ in 0..2 {
        router.next_received().await;
    }

    let peer = |name: &'static str| PeerIdentity::try_from(Bytes::from_static(name.as_bytes())).unwrap();
    let body = Bytes::from(vec![7u8; MESSAGE_BYTES]);
    let mut queued = 0;
    let given_back = loop {
        match router.sender.try_send_to(&peer("not-reading"), ZmqMessage::from(body.clone())) {
            RouterTrySend::Queued => queued += 1,
            RouterTrySend::Full(message) => break message,
            RouterTrySend::NoPeer => panic!("the peer that does not read is connected"),
        }
        assert!(queued < UNBOUNDED_AFTER, "{queued} messages queued for a peer that reads nothing");
        // The peer's writer task moves the queue into the socket until its buffers are full.
        tokio::task::yield_now().await;
    };
    assert_eq!(given_back.into_vec(), vec![body]);
    let small = || ZmqMessage::from(Bytes::from_static(b"x"));
    assert!(matches!(router.sender.try_send_to(&peer("bystander"), small()), RouterTrySend::Queued));
    assert!(matches!(router.sender.try_send_to(&peer("nobody"), small()), RouterTrySend::NoPeer));
    release.send(()).unwrap();
    idle.await.unwrap();
}

/// Reads one message body (a single frame) from a raw DEALER's stream, skipping commands.
fn read_body(stream: &mut TcpStream) -> Vec<u8> {
    loop {
        let mut flags = [0u8; 1];
        stream.read_exact(&mut flags).unwrap();
        let len = if flags[0] & FLAG_LONG != 0 {
            let mut len = [0u8; 8];
            stream.read_exact(&mut len).unwrap();
            u64::from_be_bytes(len) as usize
        } else {
            let mut len = [0u8; 1];
            stream.read_exact(&mut len).unwrap();
            usize::from(len[0])
        };
        let mut body = vec![0u8; len];
        stream.read_exact(&mut body).unwrap();
        if flags[0] & FLAG_COMMAND == 0 {
            return body;
        }
    }
}

/// A send waiting for room in a peer's queue holds it: `try_send_to` answers `Full` even
/// once the queue has room again, until that send is in, so it cannot overtake it; the
/// peer reads the waiting message first.
#[actix_rt::test]
async fn try_send_to_never_overtakes_a_waiting_send() {
    use std::future::Future;
    use std::task::{Context, Poll};

    const CAPACITY: usize = 4;
    const MESSAGE_BYTES: usize = 64 << 10;
    const UNBOUNDED_AFTER: usize = 1024;
    let mut options = SocketOptions::default();
    options.send_queue_capacity(CAPACITY);
    let mut router = EchoRouter::start(options).await;
    let port = router.port;
    let (start_reading, reading) = std_mpsc::channel::<usize>();
    let (bodies, read) = std_mpsc::channel::<Vec<u8>>();
    let reader = tokio::task::spawn_blocking(move || {
        let mut streams = ["slow", "bystander"].map(|identity| greeted_peer(port, identity));
        let slow = &mut streams[0];
        stream_greeting(slow);
        assert_eq!(read_body(slow), b"hello", "the router's echo");
        // Everything queued before the waiting send, then that send and what followed it.
        let queued = reading.recv().unwrap();
        for _ in 0..queued + 2 {
            bodies.send(read_body(slow)).unwrap();
        }
    });
    for _ in 0..2 {
        router.next_received().await;
    }

    let body = Bytes::from(vec![b'F'; MESSAGE_BYTES]);
    let mut queued = 0;
    loop {
        match router.sender.try_send_to(&peer("slow"), ZmqMessage::from(body.clone())) {
            RouterTrySend::Queued => queued += 1,
            RouterTrySend::Full(_) => break,
            RouterTrySend::NoPeer => panic!("the slow peer is connected"),
        }
        assert!(queued < UNBOUNDED_AFTER, "{queued} messages queued for a peer that reads nothing");
        tokio::task::yield_now().await;
    }
    // A send that waits for room: polled once by hand, it holds the peer's queue.
    let mut sender = router.sender.clone();
    let waiting_message = ZmqMessage::try_from(vec![Bytes::from_static(b"slow"), Bytes::from_static(b"W")]);
    let mut waiting = Box::pin(sender.send(waiting_message.unwrap()));
    let mut context = Context::from_waker(futures::task::noop_waker_ref());
    assert!(matches!(waiting.as_mut().poll(&mut context), Poll::Pending), "the queue was full");

    // The peer reads all that was queued before: the queue has room again.
    start_reading.send(queued).unwrap();
    let received = read_bodies(&read, queued).await;
    assert!(received.iter().all(|body| body.len() == MESSAGE_BYTES));
    let small = |text: &'static [u8]| ZmqMessage::from(Bytes::from_static(text));
    assert!(
        matches!(router.sender.try_send_to(&peer("slow"), small(b"T1")), RouterTrySend::Full(_)),
        "try_send_to overtook the send waiting for the same peer"
    );
    waiting.await.unwrap();
    assert!(matches!(router.sender.try_send_to(&peer("slow"), small(b"T2")), RouterTrySend::Queued));
    let next = read_bodies(&read, 2).await;
    assert_eq!(next, vec![b"W".to_vec(), b"T2".to_vec()], "the waiting send arrives first");
    reader.await.unwrap();
}

/// The next `count` bodies the raw peer's thread read, while this runtime writes to it.
async fn read_bodies(read: &std_mpsc::Receiver<Vec<u8>>, count: usize) -> Vec<Vec<u8>> {
    let started = Instant::now();
    let mut received = Vec::new();
    while received.len() < count {
        match read.try_recv() {
            Ok(body) => received.push(body),
            Err(_) => tokio::task::yield_now().await,
        }
        assert!(started.elapsed() < DEADLINE, "the peer read {} of {count}", received.len());
    }
    received
}

/// Reads the router's greeting (64 bytes) from a raw DEALER's stream.
fn stream_greeting(stream: &mut TcpStream) {
    let mut greeting = [0u8; 64];
    stream.read_exact(&mut greeting).unwrap();
}

/// A DEALER's `try_send` queues for its one peer at once, and gives the message back whole
/// when it has no single peer to queue it for (not connected yet), for `send` to take.
#[actix_rt::test]
async fn dealer_try_send_queues_for_its_one_peer_and_gives_back_otherwise() {
    let mut router = EchoRouter::start(SocketOptions::default()).await;
    let dealer = DealerSocket::new();
    let (sender, _receiver) = dealer.split();
    let early = Bytes::from_static(b"before connecting");
    match sender.try_send(ZmqMessage::from(early.clone())) {
        DealerTrySend::NotNow(message) => assert_eq!(message.into_vec(), vec![early]),
        DealerTrySend::Sent | DealerTrySend::Disconnected => panic!("queued without a peer"),
    }

    let mut dealer = DealerSocket::new();
    dealer.connect(&router.url()).await.unwrap();
    let (sender, _receiver) = dealer.split();
    let body = Bytes::from_static(b"at once");
    assert!(matches!(sender.try_send(ZmqMessage::from(body.clone())), DealerTrySend::Sent));
    let (_, frames) = router.next_received().await;
    assert_eq!(frames, vec![body]);
}

#[actix_rt::test]
async fn ipc_at_names_a_linux_abstract_socket_as_in_libzmq() {
    use std::os::linux::net::SocketAddrExt;

    let name = format!("naobroker-zeromq-patches-{}", std::process::id());
    let url = format!("ipc://@{name}");
    let mut router = RouterSocket::new();
    assert_eq!(router.bind(&url).await.unwrap().to_string(), url);
    let file = format!("@{name}");
    assert!(!std::path::Path::new(&file).exists(), "bound a file named {file}, not an abstract socket");
    // The kernel knows it by that name in the abstract namespace, where libzmq (and the
    // Python client) connect for `ipc://@name`.
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    drop(std::os::unix::net::UnixStream::connect_addr(&address).unwrap());

    let mut dealer = DealerSocket::new();
    dealer.connect(&url).await.unwrap();
    dealer.send(ZmqMessage::from("through the abstract socket")).await.unwrap();
    let message = tokio::time::timeout(DEADLINE, router.recv()).await.unwrap().unwrap();
    assert_eq!(message.get(1).unwrap().as_ref(), b"through the abstract socket");

    let unnamed = RouterSocket::new().bind("ipc://@").await.unwrap_err().to_string();
    assert!(unnamed.contains("needs a name"), "{unnamed}");
}
