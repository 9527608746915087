//! `naobench foxglove`: what the Foxglove live view costs the broker while no viewer is
//! connected: the broker process's CPU time per second of wall time, without the server and
//! with it, in alternating runs of the same length (the real clock, the DCM's default period).

use std::process::Command;
use std::time::{Duration, Instant};

use crate::helpers::{free_port, progress, start_broker_with};
use crate::stats::{print, Row, Samples};

/// Time for the broker to settle after answering, before it is measured.
const SETTLE: Duration = Duration::from_secs(1);

/// The process's user and system CPU time so far, in seconds.
fn cpu_seconds(pid: u32, ticks_per_second: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the broker's /proc stat");
    // After the command name in parentheses: state is field 3; utime, stime are 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')').expect("a stat line").1.split_whitespace().collect();
    let ticks = |index: usize| fields[index - 3].parse::<f64>().expect("a tick count");
    (ticks(14) + ticks(15)) / ticks_per_second
}

fn ticks_per_second() -> f64 {
    let output = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
    String::from_utf8_lossy(&output.stdout).trim().parse().expect("CLK_TCK")
}

/// One run: a broker with `config`, measured for `seconds`; its CPU milliseconds per second.
fn cpu_ms_per_second(config: &str, seconds: f64, ticks: f64) -> f64 {
    let path = std::env::temp_dir().join(format!("naobench-{}-foxglove.toml", std::process::id()));
    std::fs::write(&path, config).expect("write the broker's configuration");
    let (broker, _tcp, _ipc) = start_broker_with(&path);
    std::thread::sleep(SETTLE);
    let pid = broker.0.id();
    let (started, cpu_before) = (Instant::now(), cpu_seconds(pid, ticks));
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let cpu = cpu_seconds(pid, ticks) - cpu_before;
    let _ = std::fs::remove_file(&path);
    1000.0 * cpu / started.elapsed().as_secs_f64()
}

pub fn run(seconds: f64, runs: usize, json: bool) {
    let ticks = ticks_per_second();
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for run in 1..=runs {
        progress("foxglove", format_args!("run {run} of {runs}: without the server, {seconds} s"));
        without.push(cpu_ms_per_second("", seconds, ticks));
        progress("foxglove", format_args!("run {run} of {runs}: with it, no viewer, {seconds} s"));
        let config = format!("[foxglove]\nlisten = \"127.0.0.1:{}\"\n", free_port());
        with.push(cpu_ms_per_second(&config, seconds, ticks));
    }
    let (without, with) = (Samples(without), Samples(with));
    let row = |name: &str, samples: &Samples| Row {
        name: name.into(),
        fields: vec![
            ("CPU ms/s p50", samples.p50()),
            ("min", samples.percentile(0.0)),
            ("max", samples.max()),
        ],
    };
    let rows = [row("naobroker, no Foxglove server", &without), row("naobroker, server, no viewer", &with)];
    let notes = [format!(
        "Server without a viewer / no server, CPU p50: {:.2} ({runs} runs of {seconds} s each, alternating; \
         the broker's whole process: DCM cycle, motion thread, broker thread, the view's thread)",
        with.p50() / without.p50()
    )];
    print("foxglove", &rows, &notes, json);
}
