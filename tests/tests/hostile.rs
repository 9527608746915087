//! The hostile-client suite (issue 11): the real `naobroker` binary against clients that
//! attack it over real sockets — an oversized frame header, a flood that never reads its
//! replies, forbidden actions, oversized names and values — and against long work, a broker
//! killed under its clients, and listeners that must not start.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use naobroker_e2e::{bin, free_port, scratch_dir, Process, TestBroker};
use naobroker_protocol::{Envelope, MethodInfo, Value};
use serde_json::{json, Value as Json};
use tokio::sync::mpsc;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "gave up after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A counter of `ServiceDirectory.stats`.
fn counter(broker: &TestBroker, name: &str) -> u64 {
    let stats = broker.call("ServiceDirectory.stats", &[]);
    stats[name].as_u64().unwrap_or_else(|| panic!("ServiceDirectory.stats has no counter {name}"))
}

/// Resident memory of a process in MiB (VmRSS of /proc/PID/status); 0 once it is gone.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) / 1024
}

/// A client speaking the wire protocol itself over a ZeroMQ DEALER, sending exactly the
/// envelopes a test builds, as a hand-written or hostile client would. A background task
/// heartbeats, answers `true` to calls forwarded to modules it registered, and hands every
/// reply and error to the test.
struct RawClient {
    runtime: tokio::runtime::Runtime,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    answers: Mutex<mpsc::UnboundedReceiver<(u64, Result<Value, String>)>>,
    next_id: AtomicU64,
}

impl RawClient {
    fn connect(url: &str, name: &str) -> RawClient {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let mut socket = zeromq::DealerSocket::new();
        runtime.block_on(socket.connect(url)).expect("the broker accepts connections");
        let (outgoing, mut to_send) = mpsc::unbounded_channel::<Vec<u8>>();
        let (answered, answers) = mpsc::unbounded_channel();
        let hello = Envelope::hello(name);
        runtime.spawn(async move {
            let (mut sender, mut receiver) = socket.split();
            let mut heartbeat = tokio::time::interval(Duration::from_millis(500));
            let mut next = Some(hello.encode());
            loop {
                if let Some(frame) = next.take() {
                    if sender.send(ZmqMessage::from(frame)).await.is_err() {
                        return;
                    }
                }
                next = tokio::select! {
                    queued = to_send.recv() => match queued {
                        Some(frame) => Some(frame),
                        None => return,
                    },
                    _ = heartbeat.tick() => Some(Envelope::Heartbeat.encode()),
                    received = receiver.recv() => {
                        let Ok(message) = received else { return };
                        let frame = message.into_vec().into_iter().next().unwrap_or_default();
                        match Envelope::decode(&frame, usize::MAX) {
                            Ok(Envelope::Call { id, .. } | Envelope::Post { id, .. }) => {
                                Some(Envelope::Reply { id, value: true.into() }.encode())
                            }
                            Ok(Envelope::Reply { id, value }) => {
                                let _ = answered.send((id, Ok(value)));
                                None
                            }
                            Ok(Envelope::Error { id, message }) => {
                                let _ = answered.send((id, Err(message)));
                                None
                            }
                            _ => None,
                        }
                    }
                };
            }
        });
        RawClient { runtime, outgoing, answers: Mutex::new(answers), next_id: AtomicU64::new(0) }
    }

    /// Send the envelope `build` makes with a fresh request id; its reply or error message.
    fn request(&self, build: impl FnOnce(u64) -> Envelope) -> Result<Value, String> {
        self.request_frame(|id| build(id).encode())
    }

    /// Send the frame `build` makes with a fresh request id, as is.
    fn request_frame(&self, build: impl FnOnce(u64) -> Vec<u8>) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.outgoing.send(build(id)).expect("the client task runs");
        let mut answers = self.answers.lock().unwrap();
        let limit = Duration::from_secs(20);
        let started = Instant::now();
        loop {
            let left = limit.saturating_sub(started.elapsed());
            match self.runtime.block_on(async { tokio::time::timeout(left, answers.recv()).await }) {
                Ok(Some((answered, result))) if answered == id => return result,
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the connection closed before request {id} was answered"),
                Err(_) => panic!("request {id} unanswered after {limit:?}"),
            }
        }
    }

    fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Result<Value, String> {
        let (module, method) = (module.to_owned(), method.to_owned());
        self.request(|id| Envelope::Call { id, module, method, args })
    }
}

fn method(name: &str) -> MethodInfo {
    MethodInfo { name: name.into(), signature: "(String, Value, Value) -> ()".into(), help: String::new() }
}

// ---------------------------------------------------------------------------------------
// 1. An oversized frame header.

/// A ZMTP 3.0 greeting (RFC 23): signature, version 3.0, mechanism NULL padded to 20
/// bytes, as-server 0, filler: 64 bytes.
fn zmtp_greeting() -> Vec<u8> {
    let mut greeting = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0];
    greeting.extend_from_slice(b"NULL");
    greeting.resize(12 + 20, 0);
    greeting.push(0);
    greeting.resize(64, 0);
    greeting
}

/// The READY command of a DEALER, as a short command frame.
fn zmtp_ready_of_a_dealer() -> Vec<u8> {
    let mut body = b"\x05READY\x0bSocket-Type".to_vec();
    body.extend_from_slice(&6u32.to_be_bytes());
    body.extend_from_slice(b"DEALER");
    let mut frame = vec![0x04, body.len() as u8];
    frame.extend(body);
    frame
}

/// Open a raw TCP connection, handshake as a DEALER and send one long-frame header that
/// claims `claimed` bytes, then nothing more. Answers once the broker closed the connection.
fn send_frame_header(broker: &TestBroker, claimed: u64) {
    let address = broker.url.strip_prefix("tcp://").unwrap();
    let mut attacker = TcpStream::connect(address).unwrap();
    let mut bytes = zmtp_greeting();
    bytes.extend(zmtp_ready_of_a_dealer());
    bytes.push(0x02);
    bytes.extend(claimed.to_be_bytes());
    attacker.write_all(&bytes).unwrap();
    attacker.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut buffer = [0u8; 256];
    // The broker sends its own greeting and READY, then closes the connection.
    wait_until("the broker to close the connection", Duration::from_secs(10), || {
        match attacker.read(&mut buffer) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => {
                !matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
            }
        }
    });
}

#[test]
fn a_frame_header_claiming_a_terabyte_closes_that_connection_and_nothing_else() {
    let mut broker = TestBroker::start("");
    let time_before = broker.step(1);
    send_frame_header(&broker, 1 << 40);
    assert!(broker.is_running(), "the broker died: {}", broker.log());
    let time_after = broker.step(10);
    assert!(time_after > time_before, "the DCM cycles on");
    assert_eq!(broker.call("ALMemory.getData", &["DCM/Time"]), json!(time_after), "others are served");
    assert_eq!(counter(&broker, "oversized_frames"), 1);
    // Just past max_frame_bytes (16 MiB by default) is refused as well, from the header.
    send_frame_header(&broker, (16 << 20) + 1);
    assert!(broker.is_running(), "the broker died: {}", broker.log());
    assert_eq!(counter(&broker, "oversized_frames"), 2);
    assert!(broker.step(1) > time_after);
    assert!(rss_mib(broker.pid()) < 200, "{} MiB after the attack", rss_mib(broker.pid()));
}

// ---------------------------------------------------------------------------------------
// 2. A flood that never reads its replies.

/// Low per-client bounds so that the flooder meets them quickly.
const FLOOD_LIMITS: &str = "[broker.limits]\nmax_queued_messages = 256\nmax_queued_bytes = 4194304\n\
                            max_calls_in_flight = 64\n";
/// The value the flooder asks for: each reply costs the broker this much until written.
const FLOOD_VALUE_BYTES: usize = 64 << 10;
const FLOOD_CALLS: u64 = 1_000_000;
/// The flood ends after this long even if it has not sent `FLOOD_CALLS`.
const FLOOD_TIME: Duration = Duration::from_secs(8);
/// Past this the broker is killed to protect the machine (the test has failed by then).
const SAFETY_RSS_MIB: u64 = 1024;

struct Flood {
    calls_sent: u64,
    connections: u64,
}

/// Send `ALMemory.getData(key)` as fast as the broker takes it, never reading a reply;
/// connect again whenever the broker cuts the connection.
async fn flood(url: &str, key: &str, stop: &AtomicBool) -> Flood {
    let started = Instant::now();
    let mut flood = Flood { calls_sent: 0, connections: 0 };
    let going = |flood: &Flood| {
        !stop.load(Ordering::Relaxed) && flood.calls_sent < FLOOD_CALLS && started.elapsed() < FLOOD_TIME
    };
    while going(&flood) {
        let mut socket = zeromq::DealerSocket::new();
        if !matches!(tokio::time::timeout(Duration::from_secs(2), socket.connect(url)).await, Ok(Ok(()))) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        flood.connections += 1;
        if socket.send(ZmqMessage::from(Envelope::hello("flooder").encode())).await.is_err() {
            continue;
        }
        while going(&flood) {
            let call = Envelope::Call {
                id: flood.calls_sent + 1,
                module: "ALMemory".into(),
                method: "getData".into(),
                args: vec![key.into()],
            };
            let sending = socket.send(ZmqMessage::from(call.encode()));
            match tokio::time::timeout(Duration::from_millis(500), sending).await {
                Ok(Ok(())) => flood.calls_sent += 1,
                // Cut off by the broker: connect again.
                Ok(Err(_)) => break,
                // The broker reads slower than we write: keep pushing.
                Err(_) => {}
            }
        }
    }
    flood
}

#[test]
fn a_client_that_never_reads_its_replies_is_cut_off_and_the_others_are_served() {
    let broker = TestBroker::start_with(FLOOD_LIMITS, "");
    let big = json!("x".repeat(FLOOD_VALUE_BYTES)).to_string();
    broker.call("ALMemory.insertData", &["Test/Big", &big]);
    broker.call("ALMemory.insertData", &["Test/Small", "1"]);
    let pid = broker.pid();
    let idle = rss_mib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(idle));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let rss = rss_mib(pid);
                peak.fetch_max(rss, Ordering::Relaxed);
                if rss > SAFETY_RSS_MIB {
                    stop.store(true, Ordering::Relaxed);
                    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let flooder = {
        let (url, stop) = (broker.url.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(flood(&url, "Test/Big", &stop))
        })
    };
    // Another client is served all along: each call answered within a generous 5 s.
    let (mut answered, mut unanswered) = (0, Vec::new());
    while !flooder.is_finished() {
        let output = broker.naocli(&["--timeout", "5", "call", "ALMemory.getData", "Test/Small"]);
        match output.status.success() {
            true => answered += 1,
            false => unanswered.push(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        }
    }
    let flood = flooder.join().unwrap();
    let flood_peak = peak.load(Ordering::Relaxed);
    // Read without panicking: the report below must come out even if the broker is stuck.
    let counters = broker.naocli(&["--timeout", "5", "call", "ServiceDirectory.stats"]);
    let disconnected = serde_json::from_slice::<Json>(&counters.stdout)
        .ok()
        .and_then(|counters| counters["clients_disconnected"].as_u64());
    let started = Instant::now();
    let mut after = rss_mib(pid);
    while after > idle + 64 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
        after = rss_mib(pid);
    }
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let report = format!(
        "RSS idle {idle} MiB, flood peak {flood_peak} MiB, after {after} MiB; {} calls over {} connections; \
         clients_disconnected {disconnected:?}; {answered} calls of another client answered meanwhile, \
         {} not",
        flood.calls_sent,
        flood.connections,
        unanswered.len()
    );
    eprintln!("{report}");
    assert!(
        flood_peak < SAFETY_RSS_MIB,
        "the broker grew past {SAFETY_RSS_MIB} MiB and was killed: {report}"
    );
    assert!(
        unanswered.is_empty(),
        "another client was not answered during the flood: {unanswered:?}; {report}"
    );
    assert!(answered >= 1, "{report}");
    assert!(disconnected.is_some_and(|count| count >= 1), "the flooder was never cut off: {report}");
    assert!(flood_peak < 300, "memory not bounded during the flood: {report}");
    assert!(after <= idle + 64, "memory not given back after the flood: {report}");
}

// ---------------------------------------------------------------------------------------
// 3. Forbidden actions.

#[test]
fn forbidden_actions_are_refused_naming_the_rule_and_the_owner_may_do_them() {
    let broker = TestBroker::start("");
    let mut echo = broker.module("echo", "Echo");
    let owner = RawClient::connect(&broker.url, "owner");
    owner
        .request(|id| Envelope::Register { id, module: "Owner".into(), methods: vec![method("onEvent")] })
        .unwrap();
    let subscribe = |event: &str, module: &str| vec![event.into(), module.into(), "onEvent".into()];
    owner.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Owner")).unwrap();
    let subscribers =
        || broker.call("ALMemory.getSubscribers", &["\"Test/Event\""]).as_array().unwrap().clone();
    assert_eq!(subscribers(), [json!("Owner")]);

    let intruder = RawClient::connect(&broker.url, "intruder");
    let refused = |result: Result<Value, String>, rule: &str| {
        let message = result.expect_err("refused");
        assert!(message.contains(rule), "{message:?} does not say {rule:?}");
    };
    refused(intruder.call("Echo", "exit", vec![]), "only the client that registered Echo may make it exit");
    assert!(echo.child.try_wait().unwrap().is_none(), "the echo process lives");
    assert_eq!(broker.call("Echo.echo", &["1"]), json!(1));
    refused(
        intruder.call("ALMemory", "raiseEvent", vec!["DCM/PostProcess".into(), 1.into()]),
        "DCM/PostProcess belongs to module DCM",
    );
    let fallen_before = intruder.call("ALMemory", "getData", vec!["ALMotion/Robot/Fallen".into()]);
    refused(
        intruder.call("ALMemory", "insertData", vec!["ALMotion/Robot/Fallen".into(), true.into()]),
        "ALMotion/Robot/Fallen belongs to module ALMotion",
    );
    assert_eq!(intruder.call("ALMemory", "getData", vec!["ALMotion/Robot/Fallen".into()]), fallen_before);
    refused(
        intruder.call("ALMemory", "insertData", vec!["Owner/Key".into(), 1.into()]),
        "Owner/Key belongs to module Owner",
    );
    // NAOqi's standard names have no module prefix: reserved for the module that raises them.
    for (name, module) in
        [("robotHasFallen", "ALMotion"), ("FrontTactilTouched", "ALSensors"), ("footContact", "ALSensors")]
    {
        refused(
            intruder.call("ALMemory", "raiseEvent", vec![name.into(), true.into()]),
            &format!("{name} belongs to module {module}"),
        );
        refused(
            intruder.call("ALMemory", "insertData", vec![name.into(), true.into()]),
            &format!("{name} belongs to module {module}"),
        );
    }
    refused(
        intruder.call("ALMemory", "raiseEvent", vec!["Echo/Shouted".into(), "forged".into()]),
        "Echo/Shouted belongs to module Echo",
    );
    refused(
        intruder.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Echo")),
        "module Echo belongs to another client",
    );
    refused(
        intruder.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Echo".into()]),
        "module Echo belongs to another client",
    );
    refused(
        intruder.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Owner".into()]),
        "module Owner belongs to another client",
    );
    assert_eq!(subscribers(), [json!("Owner")], "the owner's callback is still there");
    refused(
        intruder.request(|id| Envelope::Unregister { id, module: "Owner".into() }),
        "module Owner is not registered by this client",
    );
    refused(
        intruder.request(|id| Envelope::Unregister { id, module: "Echo".into() }),
        "module Echo is not registered by this client",
    );
    assert!(broker.modules().iter().any(|m| m == "Owner") && broker.modules().iter().any(|m| m == "Echo"));
    let refusals = counter(&broker, "refused");
    assert!(refusals >= 3, "{refusals} refusals counted");

    // The owner may do each of these for its own module and prefix.
    owner.call("ALMemory", "insertData", vec!["Owner/Key".into(), 2.into()]).unwrap();
    assert_eq!(broker.call("ALMemory.getData", &["Owner/Key"]), json!(2));
    owner.call("ALMemory", "raiseEvent", vec!["Owner/Thing".into(), 3.into()]).unwrap();
    assert_eq!(broker.call("ALMemory.getData", &["Owner/Thing"]), json!(3));
    owner.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Owner".into()]).unwrap();
    assert_eq!(subscribers(), Vec::<Json>::new());
    owner.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Owner")).unwrap();
    assert_eq!(subscribers(), [json!("Owner")]);
    // Forwarded to the owner itself, which answers true.
    assert_eq!(owner.call("Owner", "exit", vec![]), Ok(Value::from(true)));
    assert_eq!(
        owner.request(|id| Envelope::Unregister { id, module: "Owner".into() }),
        Ok(Value::from(true))
    );
    assert!(!broker.modules().iter().any(|m| m == "Owner"));
    assert_eq!(
        broker.call("ALMemory.getSubscribers", &["\"Test/Event\""]),
        json!([]),
        "its callbacks went with it"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Names and values past the limits.

/// The error names `limit` and quotes only a short excerpt of the bad input.
fn refused_by_limit(result: Result<Value, String>, limit: &str) {
    let message = result.expect_err("refused");
    assert!(message.len() < 300, "a {}-byte error: {}…", message.len(), &message[..300]);
    assert!(message.contains(limit), "{message:?} does not name {limit}");
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::from(0), |inner, _| Value::Array(vec![inner]))
}

/// `ALMemory.insertData("Test/Deep", [[[...0...]]])` with `depth` arrays, written byte by byte
/// (building so deep a `Value` would overflow this test's own stack).
fn deep_insert(id: u64, depth: usize) -> Vec<u8> {
    let args = vec!["Test/Deep".into(), Value::Nil];
    let mut frame =
        Envelope::Call { id, module: "ALMemory".into(), method: "insertData".into(), args }.encode();
    assert_eq!(frame.pop(), Some(0xc0), "nil, the placeholder, is the last byte");
    frame.extend(std::iter::repeat_n(0x91, depth));
    frame.push(0);
    frame
}

#[test]
fn names_and_values_past_the_limits_are_refused_with_short_errors() {
    let broker = TestBroker::start("");
    let client = RawClient::connect(&broker.url, "limits");
    let huge_name = "M".repeat(10 << 20);
    refused_by_limit(
        client.request(|id| Envelope::Register { id, module: huge_name.clone(), methods: vec![] }),
        "max_name_bytes",
    );
    let long_method = vec![method(&"m".repeat(100_000))];
    refused_by_limit(
        client.request(|id| Envelope::Register { id, module: "Fine".into(), methods: long_method }),
        "max_name_bytes",
    );
    let listed = broker.modules();
    assert!(
        listed.iter().all(|name| name.len() <= 256) && !listed.contains(&"Fine".to_owned()),
        "{listed:?}"
    );

    let long_key = format!("Test/{}", "k".repeat(1 << 20));
    refused_by_limit(
        client.call("ALMemory", "insertData", vec![long_key.as_str().into(), 1.into()]),
        "max_name_bytes",
    );
    refused_by_limit(
        client.call("ALMemory", "raiseEvent", vec![long_key.as_str().into(), 1.into()]),
        "max_name_bytes",
    );
    refused_by_limit(
        client.request(|id| Envelope::Subscribe { id, event: long_key.clone() }),
        "max_name_bytes",
    );
    refused_by_limit(client.call(&huge_name, "ping", vec![]), "max_name_bytes");
    // Errors that are not about a limit quote little of the input either.
    for (module, method) in
        [("ALMemory", "getData"), ("ALMemory", "getType"), ("ServiceDirectory", "methods")]
    {
        refused_by_limit(client.call(module, method, vec![long_key.as_str().into()]), "kkkk");
    }
    refused_by_limit(client.call("ALMemory", &huge_name, vec![]), "max_name_bytes");

    // Deep enough to overflow a recursive decoder's stack, too: the refusal still answers
    // the request it refuses.
    for depth in [40, 100_000] {
        refused_by_limit(client.request_frame(|id| deep_insert(id, depth)), "max_value_depth");
    }
    let big = Value::from("x".repeat(2 << 20));
    refused_by_limit(
        client.call("ALMemory", "insertData", vec!["Test/Big".into(), big.clone()]),
        "max_value_bytes",
    );
    refused_by_limit(client.call("ALMemory", "raiseEvent", vec!["Test/Big".into(), big]), "max_value_bytes");
    assert!(client.call("ALMemory", "getData", vec!["Test/Big".into()]).is_err(), "nothing was stored");
    // Within the limits all is well.
    client.call("ALMemory", "insertData", vec!["Test/Deep".into(), nested(32)]).unwrap();
    assert_eq!(client.call("ALMemory", "getData", vec!["Test/Deep".into()]), Ok(nested(32)));
    assert_eq!(broker.modules(), listed);
}

// ---------------------------------------------------------------------------------------
// 5. A long call into a Rust module that blocks its thread.

#[test]
fn a_rust_module_blocked_far_past_the_silence_limit_stays_registered_and_answers() {
    let broker = TestBroker::start("");
    let _probe = broker.module("probe-module", "Probe");
    let url = broker.url.clone();
    // 7 s with the module's thread asleep: its main connection is silent far past the
    // broker's 2 s limit; only its liveness connection speaks for it.
    let call = std::thread::spawn(move || {
        Command::new(bin("naocli")).args(["--url", &url, "call", "Probe.sleep", "7000"]).output().unwrap()
    });
    while !call.is_finished() {
        assert!(broker.modules().iter().any(|m| m == "Probe"), "Probe dropped mid-call: {}", broker.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    let output = call.join().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(serde_json::from_slice::<Json>(&output.stdout).unwrap(), json!(7000));
    assert_eq!(broker.call("Probe.ping", &[]), json!(true));
    assert_eq!(counter(&broker, "pending_remote_calls"), 0);
}

// ---------------------------------------------------------------------------------------
// 6. Subscriptions restored after the broker is killed and started again.

const PROBE_EVENT: &str = "Test/Ping";

/// Raise `PROBE_EVENT` with values from `from` up until the probe's callback and its
/// stream both received one of them.
fn raise_until_the_probe_receives(broker: &TestBroker, from: i64) {
    let mut value = from;
    let received = |method: &str| {
        let values = broker.call(method, &[]);
        values.as_array().unwrap().iter().any(|v| v.as_i64().is_some_and(|v| v >= from))
    };
    wait_until("the probe's callback and stream to receive the event", Duration::from_secs(20), || {
        broker.call("ALMemory.raiseEvent", &[PROBE_EVENT, &value.to_string()]);
        value += 1;
        received("Probe.callbacks") && received("Probe.streamed")
    });
}

#[test]
fn a_rust_module_gets_its_callback_and_stream_back_after_the_broker_is_killed() {
    let mut broker = TestBroker::start("");
    let _probe = broker.module("probe-module", "Probe");
    raise_until_the_probe_receives(&broker, 1);
    broker.restart();
    wait_until("Probe to register again", Duration::from_secs(20), || {
        broker.modules().iter().any(|m| m == "Probe")
    });
    raise_until_the_probe_receives(&broker, 1000);
    assert_eq!(broker.call("ALMemory.getSubscribers", &[&format!("\"{PROBE_EVENT}\"")]), json!(["Probe"]));
}

// ---------------------------------------------------------------------------------------
// 7. Listeners that must not start.

/// Run the broker with `args`, expecting it to exit; its status and standard error.
fn broker_exit(args: &[&str]) -> (ExitStatus, String) {
    let mut process = Process::spawn(
        Command::new(bin("naobroker"))
            .args(["--config", "/dev/null", "--clock", "manual"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let mut status = None;
    wait_until("the broker to exit", Duration::from_secs(20), || {
        status = process.child.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    process.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (status.unwrap(), stderr)
}

#[test]
fn a_listener_beyond_loopback_or_over_a_regular_file_is_refused() {
    let port = free_port();
    for endpoint in [format!("tcp://0.0.0.0:{port}"), format!("tcp://[::]:{port}")] {
        let (status, stderr) = broker_exit(&["--listen", &endpoint]);
        assert!(!status.success(), "{endpoint} was accepted");
        assert!(stderr.contains("needs authentication"), "{endpoint}: {stderr}");
    }
    let dir = scratch_dir("hostile-ipc");
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let (status, stderr) = broker_exit(&["--listen", &format!("ipc://{}", precious.display())]);
    assert!(!status.success(), "an ipc path over a regular file was accepted");
    assert!(
        stderr.contains(&precious.display().to_string()) && stderr.contains("is not a socket"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    std::fs::remove_dir_all(&dir).unwrap();
}
