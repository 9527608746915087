//! A flood that never reads its replies, against the real `naobroker` binary: the flooder is
//! cut off at its bounded outgoing queue, the broker's memory stays bounded and is given back,
//! and another client is answered all along.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_e2e::hostile::rss_mib;
use naobroker_e2e::TestBroker;
use naobroker_protocol::Envelope;
use serde_json::{json, Value as Json};
use zeromq::{Socket, SocketSend, ZmqMessage};

/// Low per-client bounds so that the flooder meets them quickly.
const FLOOD_LIMITS: &str = "[broker.limits]\nmax_queued_messages = 256\nmax_queued_bytes = 4194304\n\
                            max_calls_in_flight = 64\n";
/// The value the flooder asks for: each reply costs the broker this much until written. Past
/// the 64 KiB from which a reply is encoded on a blocking thread, so the flood takes both
/// paths (two replies of a client at a time aside, the others on the broker's thread).
const FLOOD_VALUE_BYTES: usize = 100 << 10;
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
        // A second connection that stays idle, as the Python client's liveness connection
        // does: with more than one peer on its socket the broker writes to each peer through
        // ZeroMQ's shared send path, the one a real client meets.
        let mut companion = zeromq::DealerSocket::new();
        if !matches!(tokio::time::timeout(Duration::from_secs(2), companion.connect(url)).await, Ok(Ok(()))) {
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
