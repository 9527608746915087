//! `naobench team`: seven simulated robots, each its own broker at its DCM's cycle rate (real
//! clock, default period), first without Zenoh, then on one Zenoh network (loopback, explicit
//! `connect`, no multicast); the CPU time and resident memory each broker spends, and the
//! latency of `DCM/Time` from one robot's cycle to a subscriber on the network.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zenoh::Wait;

use crate::helpers::{
    cpu_seconds, free_port, progress, sibling, ticks_per_second, wait_until_answering, Guard,
};
use crate::stats::{print, Row, Samples};

/// A RoboCup SPL team's robots on the field and a spare.
const ROBOTS: usize = 7;
/// Time for the brokers to settle (and the network to form) before they are measured.
const SETTLE: Duration = Duration::from_secs(2);

/// The process's resident memory, MiB.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the broker's /proc status");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("VmRSS");
    let kib: f64 = line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmRSS kB");
    kib / 1024.0
}

/// Each broker's CPU ms per second of wall time, and its resident MiB at the end.
struct Measured {
    cpu_ms_per_s: Vec<f64>,
    rss_mib: Vec<f64>,
}

/// The team's brokers, each with its `[zenoh]` section when given.
fn team(dir: &std::path::Path, zenoh: impl Fn(usize) -> String) -> Vec<Guard> {
    let brokers: Vec<(Guard, String)> = (0..ROBOTS)
        .map(|index| {
            let tcp = format!("tcp://127.0.0.1:{}", free_port());
            let path = dir.join(format!("robot-{index}.toml"));
            let config = format!("{}\n[broker]\nlisten = [\"{tcp}\"]\n[dcm]\npriority = 0\n", zenoh(index));
            std::fs::write(&path, config).expect("write a broker's configuration");
            let child = Command::new(sibling("naobroker"))
                .arg("--config")
                .arg(&path)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn naobroker");
            (Guard(child), tcp)
        })
        .collect();
    brokers
        .into_iter()
        .map(|(broker, tcp)| {
            wait_until_answering(&tcp, None);
            broker
        })
        .collect()
}

fn measure(brokers: &[Guard], seconds: f64, ticks: f64) -> Measured {
    let pids: Vec<u32> = brokers.iter().map(|broker| broker.0.id()).collect();
    let before: Vec<f64> = pids.iter().map(|pid| cpu_seconds(*pid, ticks)).collect();
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_ms_per_s = pids
        .iter()
        .zip(&before)
        .map(|(pid, before)| 1000.0 * (cpu_seconds(*pid, ticks) - before) / elapsed)
        .collect();
    Measured { cpu_ms_per_s, rss_mib: pids.iter().map(|pid| rss_mib(*pid)).collect() }
}

/// A subscriber on the network: every robot's `DCM/Time`, the latency of the first robot's.
struct Watcher {
    _session: zenoh::Session,
    _subscriber: zenoh::pubsub::Subscriber<()>,
    latencies_us: Arc<Mutex<Vec<f64>>>,
    samples: Arc<Mutex<u64>>,
}

fn watch(endpoints: &[String]) -> Watcher {
    let mut config = zenoh::Config::default();
    let settings = [
        ("mode", "\"peer\"".to_owned()),
        ("connect/endpoints", serde_json::to_string(endpoints).expect("endpoints")),
        ("listen/endpoints", "[]".to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
    ];
    for (key, value) in settings {
        config.insert_json5(key, &value).expect("a Zenoh setting");
    }
    let session = zenoh::open(config).wait().expect("open a Zenoh session");
    let latencies_us = Arc::new(Mutex::new(Vec::new()));
    let samples = Arc::new(Mutex::new(0));
    let (latencies, count) = (Arc::clone(&latencies_us), Arc::clone(&samples));
    let subscriber = session
        .declare_subscriber("naobroker/*/memory/DCM/Time")
        .callback(move |sample| {
            let now = naobroker_rtslots::timestamp_now();
            *count.lock().unwrap() += 1;
            if sample.key_expr().as_str() != "naobroker/nao-0/memory/DCM/Time" {
                return;
            }
            let Some(stamp) =
                sample.attachment().and_then(|bytes| <[u8; 8]>::try_from(&*bytes.to_bytes()).ok())
            else {
                return;
            };
            latencies.lock().unwrap().push(now.saturating_sub(u64::from_le_bytes(stamp)) as f64);
        })
        .wait()
        .expect("subscribe");
    Watcher { _session: session, _subscriber: subscriber, latencies_us, samples }
}

pub fn run(seconds: f64, json: bool) {
    let ticks = ticks_per_second();
    let dir = std::env::temp_dir().join(format!("naobench-{}-team", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    progress("team", format_args!("{ROBOTS} brokers without Zenoh, {seconds} s"));
    let brokers = team(&dir, |_| String::new());
    std::thread::sleep(SETTLE);
    let without = measure(&brokers, seconds, ticks);
    drop(brokers);
    progress("team", format_args!("{ROBOTS} brokers on Zenoh, {seconds} s"));
    let endpoints: Vec<String> = (0..ROBOTS).map(|_| format!("tcp/127.0.0.1:{}", free_port())).collect();
    let brokers = team(&dir, |index| {
        format!(
            "[zenoh]\nrobot = \"nao-{index}\"\nlisten = [\"{}\"]\nconnect = {}\nscouting = false\n",
            endpoints[index],
            serde_json::to_string(&endpoints[..index]).expect("endpoints")
        )
    });
    let watcher = watch(&endpoints);
    std::thread::sleep(SETTLE);
    watcher.latencies_us.lock().unwrap().clear();
    *watcher.samples.lock().unwrap() = 0;
    let with = measure(&brokers, seconds, ticks);
    let latencies = Samples(std::mem::take(&mut *watcher.latencies_us.lock().unwrap()));
    let samples = *watcher.samples.lock().unwrap();
    drop(watcher);
    drop(brokers);
    let _ = std::fs::remove_dir_all(&dir);
    let row = |name: &str, measured: &Measured| {
        let (cpu, rss) = (Samples(measured.cpu_ms_per_s.clone()), Samples(measured.rss_mib.clone()));
        Row {
            name: name.to_owned(),
            fields: vec![
                ("CPU ms/s p50", cpu.p50()),
                ("min", cpu.percentile(0.0)),
                ("max", cpu.max()),
                ("RSS MiB p50", rss.p50()),
            ],
        }
    };
    let costs = [
        row(&format!("each of {ROBOTS} brokers, no Zenoh"), &without),
        row(&format!("each of {ROBOTS} brokers on Zenoh"), &with),
    ];
    let latency = [Row::latencies("DCM/Time, nao-0's cycle → subscriber", &latencies)];
    let p50 = |values: &[f64]| Samples(values.to_vec()).p50();
    let notes = [format!(
        "On Zenoh / without, per broker (medians over the {ROBOTS}): CPU {:.2}× (+{:.1} ms/s), RSS {:.2}× \
         (+{:.1} MiB). The subscriber got {:.0} DCM/Time values a second per robot ({} in {seconds} s \
         from {ROBOTS}); latency: the cycle's stamp (the value's attachment) to the subscriber's callback, \
         same clock. Each broker puts every real-time value that changed, every cycle.",
        p50(&with.cpu_ms_per_s) / p50(&without.cpu_ms_per_s),
        p50(&with.cpu_ms_per_s) - p50(&without.cpu_ms_per_s),
        p50(&with.rss_mib) / p50(&without.rss_mib),
        p50(&with.rss_mib) - p50(&without.rss_mib),
        samples as f64 / seconds / ROBOTS as f64,
        samples,
    )];
    print("team", &costs, &[], json);
    print("team latency", &latency, &notes, json);
}
