//! `naobench rpc`: getData round trips over tcp, CURVE and ipc beside a TCP floor, raw zeromq and libqi.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use naobroker_framework::{ClientKeys, ClientSession, Value};
use naobroker_protocol::Envelope;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

use crate::helpers::{progress, spawn_helper, start_curve_broker, time_calls, CurveBroker};
use crate::stats::{print, Row, Samples};

/// libqi 3.1.5 (pip `qi`): Python client → C++ ServiceDirectory.machineId in another
/// process, p50 measured on this kind of machine (dependency notes of the project).
pub const LIBQI_P50_US: f64 = 322.0;

const KEY: &str = "Bench/Float";

fn call_frame() -> Vec<u8> {
    Envelope::Call { id: 1, module: "ALMemory".into(), method: "getData".into(), args: vec![KEY.into()] }
        .encode()
}

fn reply_frame() -> Vec<u8> {
    Envelope::Reply { id: 1, value: Value::F64(0.5) }.encode()
}

fn row(name: &str, samples: &Samples, floor_p50: f64) -> Row {
    Row {
        name: name.into(),
        fields: vec![
            ("p50 µs", samples.p50()),
            ("p99 µs", samples.p99()),
            ("max µs", samples.max()),
            ("p50 / floor", samples.p50() / floor_p50),
        ],
    }
}

/// Blocking std TCP ping-pong of the same bytes between two processes.
fn tcp_floor(calls: usize) -> Samples {
    let request = call_frame();
    let reply_len = reply_frame().len();
    let (_server, port) = spawn_helper(&["tcp-echo", &request.len().to_string(), &reply_len.to_string()]);
    let mut stream = TcpStream::connect(("127.0.0.1", port.trim().parse::<u16>().unwrap())).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reply = vec![0u8; reply_len];
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls + calls / 10 {
        let started = Instant::now();
        stream.write_all(&request).unwrap();
        stream.read_exact(&mut reply).unwrap();
        if i >= calls / 10 {
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    Samples(samples)
}

/// zmq.rs DEALER → ROUTER echo in another process: the transport naobroker uses.
async fn zmq_raw(calls: usize) -> Samples {
    let url = format!("tcp://127.0.0.1:{}", crate::helpers::free_port());
    let _server = spawn_helper(&["zmq-echo", &url]);
    let mut dealer = zeromq::DealerSocket::new();
    dealer.connect(&url).await.unwrap();
    let frame = bytes::Bytes::from(call_frame());
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls + calls / 10 {
        let started = Instant::now();
        dealer.send(ZmqMessage::from(frame.clone())).await.unwrap();
        dealer.recv().await.unwrap();
        if i >= calls / 10 {
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    Samples(samples)
}

async fn getdata_latency(url: &str, keys: Option<ClientKeys>, calls: usize) -> Samples {
    let session = ClientSession::connect_with(url, "naobench", keys).await.unwrap();
    session.call("ALMemory", "insertData", vec![KEY.into(), Value::F64(0.5)], false).await.unwrap();
    time_calls(calls, || {
        let session = session.clone();
        async move { session.call("ALMemory", "getData", vec![KEY.into()], false).await.unwrap() }
    })
    .await
}

/// Calls per second from one client keeping `in_flight` calls under way.
async fn throughput(url: &str, total: usize, in_flight: usize) -> f64 {
    let session = ClientSession::connect_with(url, "naobench", None).await.unwrap();
    let started = Instant::now();
    let mut pending = FuturesUnordered::new();
    let mut issued = 0;
    let call = |session: ClientSession| async move {
        session.call("ALMemory", "getData", vec![KEY.into()], false).await.unwrap();
    };
    while issued < in_flight.min(total) {
        pending.push(call(session.clone()));
        issued += 1;
    }
    while pending.next().await.is_some() {
        if issued < total {
            pending.push(call(session.clone()));
            issued += 1;
        }
    }
    total as f64 / started.elapsed().as_secs_f64()
}

/// `naobench rpc-load`: the throughput row's client alone, against a broker already running
/// (under callgrind, say), its rate on stderr.
pub fn load(url: &str, calls: usize, in_flight: usize) {
    let system = actix_rt::System::new();
    let rate = system.block_on(async {
        let session = ClientSession::connect_with(url, "naobench", None).await.unwrap();
        session.call("ALMemory", "insertData", vec![KEY.into(), Value::F64(0.5)], false).await.unwrap();
        throughput(url, calls, in_flight).await
    });
    eprintln!("naobench rpc-load: {calls} calls, {in_flight} in flight: {rate:.0} calls/s");
}

pub fn run(calls: usize, json: bool) {
    progress("rpc", format_args!("floor: blocking TCP ping-pong, {calls} calls"));
    let floor = tcp_floor(calls);
    let CurveBroker { process: _broker, tcp, ipc, curve, keys } = start_curve_broker();
    let system = actix_rt::System::new();
    let (zmq, over_tcp, over_curve, over_ipc, rate) = system.block_on(async {
        progress("rpc", format_args!("raw zmq.rs echo, {calls} calls"));
        let zmq = zmq_raw(calls).await;
        progress("rpc", format_args!("naobroker over tcp, {calls} calls"));
        let over_tcp = getdata_latency(&tcp, None, calls).await;
        progress("rpc", format_args!("naobroker over tcp with CURVE, {calls} calls"));
        let over_curve = getdata_latency(&curve, Some(keys), calls).await;
        progress("rpc", format_args!("naobroker over ipc, {calls} calls"));
        let over_ipc = getdata_latency(&ipc, None, calls).await;
        progress("rpc", "throughput: 100 000 calls, 128 in flight");
        let rate = throughput(&tcp, 100_000, 128).await;
        (zmq, over_tcp, over_curve, over_ipc, rate)
    });
    let floor_p50 = floor.p50();
    let rows = vec![
        row("floor: blocking std TCP ping-pong, same bytes", &floor, floor_p50),
        row("raw zmq.rs DEALER↔ROUTER echo", &zmq, floor_p50),
        row("naobroker ALMemory.getData, Rust client, tcp", &over_tcp, floor_p50),
        row("naobroker ALMemory.getData, Rust client, tcp, CURVE (authenticated)", &over_curve, floor_p50),
        row("naobroker ALMemory.getData, Rust client, ipc", &over_ipc, floor_p50),
        Row {
            name: "libqi Python → C++ ServiceDirectory (quoted)".into(),
            fields: vec![
                ("p50 µs", LIBQI_P50_US),
                ("p99 µs", f64::NAN),
                ("max µs", f64::NAN),
                ("p50 / floor", LIBQI_P50_US / floor_p50),
            ],
        },
    ];
    let notes = vec![
        format!(
            "tcp p50 / raw zmq.rs echo p50 = {:.2} (target ≤ 1.3); tcp p50 / floor p50 = {:.2}",
            over_tcp.p50() / zmq.p50(),
            over_tcp.p50() / floor_p50
        ),
        format!(
            "CURVE tcp p50 / loopback tcp p50 = {:.2}: what authentication and encryption cost",
            over_curve.p50() / over_tcp.p50()
        ),
        format!("libqi p50 / naobroker tcp p50 = {:.2} (target ≥ 2)", LIBQI_P50_US / over_tcp.p50()),
        format!("throughput, one client, 128 calls in flight: {rate:.0} calls/s (target ≥ 400 000)"),
        format!(
            "{calls} sequential calls per row after {} warm-up calls; medians matter on this VM",
            calls / 10
        ),
    ];
    print("rpc", &rows, &notes, json);
}

/// The Python client beside libqi's Python client, by clients/python/bench_rpc.py.
pub fn python(calls: usize, json: bool) {
    let exe = std::env::current_exe().expect("own path");
    let script = exe
        .ancestors()
        .map(|dir| dir.join("clients/python/bench_rpc.py"))
        .find(|path| path.exists())
        .expect("clients/python/bench_rpc.py above the naobench binary");
    let broker = crate::helpers::sibling("naobroker");
    progress("rpc", format_args!("Python clients: naobroker's and libqi's, {calls} calls each"));
    let mut command = std::process::Command::new("python3");
    command.arg(script).arg("--broker").arg(broker).arg("--calls").arg(calls.to_string());
    if json {
        command.arg("--json");
    }
    let status = command.status().expect("python3 runs");
    if !status.success() {
        eprintln!("naobench: the Python benchmark failed");
    }
}
