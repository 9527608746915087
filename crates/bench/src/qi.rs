//! `naobench qi`: the `qi` 3.1.5 Python client calling libqi's own server and naobroker's qi listener.
//!
//! One Python process (`crates/bench/qi_client.py`, built into this binary) calls both servers,
//! interleaved in blocks: libqi's `ServiceDirectory.machineId` (a standalone `qi.Session` in
//! another Python process, answered by libqi's C++), naobroker's `ServiceDirectory.machineId`
//! and naobroker's `ALMemory.getData` of a float key (the sibling `naobroker` binary with
//! `--qi-listen`). The client and its overhead are the same for every row, so the ratio of
//! the p50s is the servers' difference.

use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{free_port, sibling, Guard};
use crate::stats::{print, Row, Samples};

const CLIENT_SCRIPT: &str = include_str!("../qi_client.py");
const CLIENT_MARKER: &str = "naobench-qi ";
/// The target: naobroker at least this many times faster than libqi at p50.
const TARGET_SPEEDUP: f64 = 1.5;

/// The rows, in the order the client script names them, and their labels in the table.
const TARGETS: [(&str, &str); 3] = [
    ("libqi machineId", "libqi C++ server: ServiceDirectory.machineId"),
    ("naobroker machineId", "naobroker qi listener: ServiceDirectory.machineId"),
    ("naobroker getData", "naobroker qi listener: ALMemory.getData (float key)"),
];

/// `naobroker` with a qi listener on a free loopback port (and its own wire on another, so
/// that the default 9559 is not taken); returns the qi URL once it accepts connections.
fn start_broker() -> (Guard, String) {
    let qi_port = free_port();
    let child = Command::new(sibling("naobroker"))
        .arg("--config")
        .arg("/dev/null")
        .args(["--listen", &format!("tcp://127.0.0.1:{}", free_port())])
        .args(["--qi-listen", &format!("tcp://127.0.0.1:{qi_port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start naobroker");
    let broker = Guard(child);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", qi_port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "naobroker's qi listener did not open");
        std::thread::sleep(Duration::from_millis(50));
    }
    (broker, format!("tcp://127.0.0.1:{qi_port}"))
}

/// Run the client script against `url`; each target's latencies in µs, by name.
fn run_client(url: &str, calls: usize, block: usize) -> serde_json::Map<String, serde_json::Value> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(CLIENT_SCRIPT)
        .args(["--naobroker", url, "--calls", &calls.to_string(), "--block", &block.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result = stdout.lines().rev().find_map(|line| line.strip_prefix(CLIENT_MARKER));
    let Some(result) = result.filter(|_| output.status.success()) else {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        eprintln!(
            "naobench: the qi client failed ({}); it needs `python3 -m pip install qi==3.1.5`",
            output.status
        );
        std::process::exit(1);
    };
    let mut parsed: serde_json::Value = serde_json::from_str(result).expect("the client's JSON");
    match parsed["samples"].take() {
        serde_json::Value::Object(samples) => samples,
        other => panic!("the client's samples are not an object: {other}"),
    }
}

fn samples_of(samples: &serde_json::Map<String, serde_json::Value>, name: &str) -> Samples {
    let values = samples[name].as_array().unwrap_or_else(|| panic!("no samples for {name}"));
    Samples(values.iter().map(|v| v.as_f64().expect("a latency")).collect())
}

pub fn run(calls: usize, block: usize, json: bool) {
    let (_broker, url) = start_broker();
    let samples = run_client(&url, calls, block);
    let measured: Vec<(&str, Samples)> =
        TARGETS.iter().map(|(name, label)| (*label, samples_of(&samples, name))).collect();
    let libqi_p50 = measured[0].1.p50();
    let rows: Vec<Row> = measured
        .iter()
        .map(|(label, samples)| Row {
            name: (*label).into(),
            fields: vec![
                ("p50 µs", samples.p50()),
                ("p99 µs", samples.p99()),
                ("max µs", samples.max()),
                ("libqi p50 / p50", libqi_p50 / samples.p50()),
            ],
        })
        .collect();
    let speedup = libqi_p50 / measured[1].1.p50();
    let verdict = if speedup >= TARGET_SPEEDUP { "met" } else { "missed" };
    let notes = vec![
        format!(
            "libqi p50 / naobroker machineId p50 = {speedup:.2} (target ≥ {TARGET_SPEEDUP}: {verdict}); \
             against getData: {:.2}",
            libqi_p50 / measured[2].1.p50()
        ),
        format!(
            "one qi 3.1.5 Python client process, {calls} sequential calls per row in blocks of {block}, \
             the rows interleaved (ABC CBA ...) after {} warm-up calls each; medians matter on this VM",
            (calls / 10).max(1)
        ),
    ];
    print("qi", &rows, &notes, json);
}
