//! naobroker's part of `naobench lola`: the sibling `naobroker` binary started with
//! `[dcm] backend = "lola"` on the simulator's socket (defaults otherwise), measured from the
//! robot's side, its `DCM.stats` read, then stopped.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use naobroker_framework::blocking::Session;
use naobroker_framework::Value;
use naobroker_lolasim::LolaSim;

use super::{measure, Window, PATIENCE};
use crate::helpers::{free_port, sibling, Guard};

/// What one run of the broker gave.
pub struct BrokerRun {
    pub window: Window,
    /// Its `DCM.stats` as `key=value` pairs: the real-time flag, the cycle's and the link's
    /// counters.
    pub stats: String,
}

/// Start naobroker on `socket`, measure it for `seconds` once its answers flow, stop it.
pub fn run(sim: &LolaSim, socket: &Path, scratch: &Path, seconds: f64) -> BrokerRun {
    let tcp = format!("tcp://127.0.0.1:{}", free_port());
    let config = scratch.join("broker.toml");
    // A temporary directory's path has no quote or backslash: it sits in a TOML string as it is.
    let text = format!("[dcm]\nbackend = \"lola\"\n\n[dcm.lola]\nsocket = \"{}\"\n", socket.display());
    std::fs::write(&config, text).expect("write the broker's configuration");
    let log = scratch.join("naobroker.log");
    let child = Command::new(sibling("naobroker"))
        .arg("--config")
        .arg(&config)
        .args(["--listen", &tcp])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("create the broker's log"))
        .spawn()
        .expect("start naobroker");
    let mut broker = Guard(child);
    let session = wait_until_answering(&mut broker, &tcp, &log);
    let window = measure(sim, seconds);
    let stats = match session.call("DCM", "stats", Vec::new()) {
        Ok(stats) => summary(&stats),
        Err(error) => format!("DCM.stats failed: {error}"),
    };
    BrokerRun { window, stats }
}

/// A session once the broker answers on `url`; the broker's log and exit when it dies first.
fn wait_until_answering(broker: &mut Guard, url: &str, log: &Path) -> Session {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = broker.0.try_wait() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            eprintln!("naobench: naobroker stopped ({status}) before answering; its log:\n{text}");
            std::process::exit(1);
        }
        if let Ok(session) = Session::connect(url) {
            return session;
        }
        assert!(started.elapsed() < PATIENCE, "naobroker did not answer on {url}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The entries of `DCM.stats` that say how the LoLA link went.
fn summary(stats: &Value) -> String {
    const CYCLE: [&str; 4] = ["realtime", "cycles", "overruns", "compute_max_us"];
    const LINK: [&str; 9] = [
        "state",
        "sensor_maps",
        "actuator_maps",
        "late_cycles",
        "stalls",
        "reconnects",
        "malformed",
        "oversized",
        "last_loss",
    ];
    let mut pairs: Vec<String> =
        CYCLE.iter().filter_map(|key| entry(stats, key).map(|value| format!("{key}={value}"))).collect();
    match entry(stats, "link") {
        Some(link) => pairs.extend(
            LINK.iter().filter_map(|key| entry(link, key).map(|value| format!("link.{key}={value}"))),
        ),
        None => pairs.push("no link counters".into()),
    }
    pairs.join(", ")
}

fn entry<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    map.as_map()?.iter().find(|(name, _)| name.as_str() == Some(key)).map(|(_, value)| value)
}
