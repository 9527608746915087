//! `naobench qi`: the `qi` 3.1.5 Python client calling libqi's own server and naobroker's qi listener.
//!
//! One Python process (`crates/bench/qi_client.py`, built into this binary) calls both servers,
//! interleaved in blocks: libqi's `ServiceDirectory.machineId` (a standalone `qi.Session` in
//! another Python process, answered by libqi's C++), naobroker's `ServiceDirectory.machineId`
//! and naobroker's `ALMemory.getData` of a float key (the sibling `naobroker` binary with
//! `--qi-listen`). The client and its overhead are the same for every row. A bare socket
//! client in the same process sends both servers the same machineId frame: the servers'
//! difference without what libqi's Python binding adds to every `qi` row.

use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{free_port, progress, sibling, Guard};
use crate::stats::{print, Row, Samples};

const CLIENT_SCRIPT: &str = include_str!("../qi_client.py");
const CLIENT_MARKER: &str = "naobench-qi ";
/// The target: naobroker at least this many times faster than libqi at p50.
const TARGET_SPEEDUP: f64 = 1.5;

/// A row of the table: the client script's name for its samples, the row's label, and the
/// name of the libqi row measured by the same client, which its ratio divides.
struct Target {
    name: &'static str,
    label: &'static str,
    libqi: &'static str,
}

const QI_LIBQI: &str = "libqi machineId";
const QI_MACHINE_ID: &str = "naobroker machineId";
const QI_GET_DATA: &str = "naobroker getData";
const BARE_LIBQI: &str = "bare libqi machineId";
const BARE_MACHINE_ID: &str = "bare naobroker machineId";

const TARGETS: [Target; 5] = [
    Target {
        name: QI_LIBQI,
        label: "qi client → libqi C++ server: ServiceDirectory.machineId",
        libqi: QI_LIBQI,
    },
    Target {
        name: QI_MACHINE_ID,
        label: "qi client → naobroker: ServiceDirectory.machineId",
        libqi: QI_LIBQI,
    },
    Target {
        name: QI_GET_DATA,
        label: "qi client → naobroker: ALMemory.getData (float key)",
        libqi: QI_LIBQI,
    },
    Target {
        name: BARE_LIBQI,
        label: "bare socket → libqi C++ server: ServiceDirectory.machineId",
        libqi: BARE_LIBQI,
    },
    Target {
        name: BARE_MACHINE_ID,
        label: "bare socket → naobroker: ServiceDirectory.machineId",
        libqi: BARE_LIBQI,
    },
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
    progress("qi", format_args!("one Python client, {calls} calls per row (5 rows), in blocks of {block}"));
    let samples = run_client(&url, calls, block);
    let p50 = |name: &str| samples_of(&samples, name).p50();
    let rows: Vec<Row> = TARGETS
        .iter()
        .map(|target| {
            let measured = samples_of(&samples, target.name);
            Row {
                name: target.label.into(),
                fields: vec![
                    ("p50 µs", measured.p50()),
                    ("p99 µs", measured.p99()),
                    ("max µs", measured.max()),
                    ("libqi p50 / p50", p50(target.libqi) / measured.p50()),
                ],
            }
        })
        .collect();
    let speedup = p50(QI_LIBQI) / p50(QI_MACHINE_ID);
    let verdict = if speedup >= TARGET_SPEEDUP { "met" } else { "missed" };
    let notes = vec![
        format!(
            "qi client: libqi p50 / naobroker machineId p50 = {speedup:.2} (target ≥ {TARGET_SPEEDUP}: \
             {verdict}); against naobroker's getData: {:.2}",
            p50(QI_LIBQI) / p50(QI_GET_DATA)
        ),
        format!(
            "what libqi's Python binding adds to a call (qi client p50 - bare socket p50): \
             {:.0} µs to libqi's, {:.0} µs to naobroker's machineId",
            p50(QI_LIBQI) - p50(BARE_LIBQI),
            p50(QI_MACHINE_ID) - p50(BARE_MACHINE_ID)
        ),
        format!(
            "one Python client process, {calls} sequential calls per row in blocks of {block}, the rows \
             interleaved (ABCDE EDCBA ...) after {} warm-up calls each; medians matter on this VM",
            (calls / 10).max(1)
        ),
    ];
    print("qi", &rows, &notes, json);
}
