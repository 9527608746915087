//! CURVE between the vendored zeromq crate and libzmq (through pyzmq), both ways, and keys
//! made by libzmq (vendor/zeromq/PATCHES.md).

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};

use zeromq::{CurveKeyPair, CurvePublicKey, CurveSecretKey, Socket, SocketRecv, SocketSend};

mod curve_sockets;

use curve_sockets::*;

/// Fails, rather than skips, when the interoperation tests cannot run.
fn require_pyzmq_with_curve() {
    let found = Command::new("python3")
        .args(["-c", "import zmq, sys; sys.exit(0 if zmq.has('curve') else 1)"])
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    assert!(
        found,
        "these tests need python3 with pyzmq built with CURVE: run `python3 -m pip install ./clients/python`"
    );
}

fn python(script: &str, args: &[String]) -> std::process::Child {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3")
}

async fn python_output(child: std::process::Child) -> Output {
    within("the python peer to finish", tokio::task::spawn_blocking(move || child.wait_with_output()))
        .await
        .expect("join")
        .expect("python output")
}

fn assert_python_succeeded(output: &Output) {
    assert!(
        output.status.success() && String::from_utf8_lossy(&output.stdout).contains("ok"),
        "python peer failed ({}): stdout {} stderr {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn keys_from_libzmq_parse_and_derive_the_same_public_key() {
    require_pyzmq_with_curve();
    let output = Command::new("python3")
        .args([
            "-c",
            "import zmq; public, secret = zmq.curve_keypair(); print(public.decode(), secret.decode())",
        ])
        .output()
        .expect("run python3");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let (public, secret) = text.trim().split_once(' ').expect("two keys");
    let secret = CurveSecretKey::from_z85(secret).expect("libzmq's secret key");
    assert_eq!(secret.public_key(), CurvePublicKey::from_z85(public).expect("libzmq's public key"));
}

const PYZMQ_DEALER: &str = r#"
import sys, zmq
from zmq.utils.monitor import recv_monitor_message

endpoint, server_public, public, secret, intruder_public, intruder_secret = sys.argv[1:7]
context = zmq.Context()

def dealer(public, secret):
    socket = context.socket(zmq.DEALER)
    socket.linger = 0
    socket.curve_serverkey = server_public.encode()
    socket.curve_publickey = public.encode()
    socket.curve_secretkey = secret.encode()
    return socket

# A key off the allow-list: refused with ZAP status 400, its message never delivered.
intruder = dealer(intruder_public, intruder_secret)
monitor = intruder.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
intruder.connect(endpoint)
intruder.send(b"intruder payload")
if not monitor.poll(60000):
    sys.exit("the intruder was not refused")
event = recv_monitor_message(monitor)
if event["value"] != 400:
    sys.exit("unexpected refusal %r" % (event,))
intruder.disable_monitor()
intruder.close()

socket = dealer(public, secret)
socket.connect(endpoint)
socket.send_multipart([b"ping from python", b"second part"])
if not socket.poll(60000):
    sys.exit("no reply from the Rust router")
reply = socket.recv_multipart()
if reply != [b"pong from rust", b"y" * 70000]:
    sys.exit("unexpected reply %r" % (reply[:1],))
print("ok", flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyzmq_dealer_talks_to_rust_curve_router() {
    require_pyzmq_with_curve();
    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let intruder = CurveKeyPair::generate();
    let (mut router, endpoint) = curve_router(&server, &[client.public]).await;
    let child = python(
        PYZMQ_DEALER,
        &[
            tcp_endpoint(&endpoint),
            server.public.to_z85(),
            client.public.to_z85(),
            client.secret.to_z85(),
            intruder.public.to_z85(),
            intruder.secret.to_z85(),
        ],
    );

    // The intruder sent first; the first message to arrive must still be the good client's.
    let (identity, received) = receive_from_peer(&mut router).await;
    assert_eq!(received, vec![b"ping from python".to_vec(), b"second part".to_vec()]);
    assert_eq!(router.peer_public_key(&identity), Some(client.public));
    let mut reply = message(&[b"pong from rust", &[b'y'; 70000]]);
    reply.push_front(identity.into());
    router.send(reply).await.expect("router send");

    assert_python_succeeded(&python_output(child).await);
}

const PYZMQ_ROUTER: &str = r#"
import sys, zmq

context = zmq.Context()
router = context.socket(zmq.ROUTER)
router.curve_server = True
router.curve_secretkey = sys.argv[1].encode()
port = router.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
if not router.poll(60000):
    sys.exit("no message from the Rust dealer")
identity, *frames = router.recv_multipart()
if frames != [b"ping from rust", b"z" * 1000]:
    sys.exit("unexpected message %r" % (frames[:1],))
router.send_multipart([identity, b"pong from python", b"second part"])
router.close(linger=60000)
print("ok", flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_curve_dealer_talks_to_pyzmq_router() {
    require_pyzmq_with_curve();
    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let mut child = python(PYZMQ_ROUTER, &[server.secret.to_z85()]);
    let stdout = child.stdout.take().expect("python stdout");
    let (port, stdout) = within(
        "the python router's port",
        tokio::task::spawn_blocking(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            reader.read_line(&mut line).expect("read the port");
            (line.trim().to_owned(), reader)
        }),
    )
    .await
    .expect("join");
    assert!(!port.is_empty(), "the python router printed no port");

    let mut dealer = curve_dealer(server.public, &client);
    within("the CURVE handshake with libzmq", dealer.connect(&format!("tcp://127.0.0.1:{port}")))
        .await
        .expect("connect to the pyzmq router");
    dealer.send(message(&[b"ping from rust", &[b'z'; 1000]])).await.expect("dealer send");
    let reply = frames(within("the python router's reply", dealer.recv()).await.expect("dealer recv"));
    assert_eq!(reply, vec![b"pong from python".to_vec(), b"second part".to_vec()]);

    let mut output = python_output(child).await;
    let mut rest = String::new();
    let mut stdout = stdout;
    stdout.read_to_string(&mut rest).expect("rest of python stdout");
    output.stdout = rest.into_bytes();
    assert_python_succeeded(&output);
}
