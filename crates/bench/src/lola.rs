//! `naobench lola`: sensor map in → actuator map out latency and missed answers of the
//! `naobroker` process driving a simulated NAO through LoLA, beside the floor measured in the
//! same run (a bare client answering each sensor map at once with a pre-encoded actuator map),
//! with the cores idle and then busy. The robot's side is `naobroker-lolasim` in its
//! real-time cadence, in this process: it stamps each map it writes and each answer it reads
//! (CLOCK_MONOTONIC) and counts missing, late and double answers.

pub(crate) mod broker;
pub(crate) mod floor;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use naobroker_dcm::cycle::CycleConfig;
use naobroker_lola::ActuatorMap;
use naobroker_lolasim::{LolaSim, Options, Stats, CYCLE};
use naobroker_rt::{make_realtime, ThreadSpec};

use crate::cycle::BusyLoad;
use crate::helpers::progress;
use crate::stats::{print, Row, Samples};
use broker::BrokerRun;

/// The target: p99 at most 1 ms, and no missed answer.
const TARGET_P99_US: f64 = 1000.0;
/// lolasim's threads and the collector's: above the client measured, so that the robot's side
/// is not what waits.
pub(crate) const SIM_PRIORITY: u8 = 90;
/// Answers kept between two collections (about 49 s of LoLA cycles).
pub(crate) const RECORDED_LATENCIES: usize = 4096;
/// How often the latencies are collected from the simulator.
const COLLECT_EVERY: Duration = Duration::from_millis(200);
/// Answers not measured after a client connects: its start (naobroker's modules start
/// beside its first cycles).
const WARM_UP: Duration = Duration::from_secs(2);
/// How long anything may take to start or connect.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// What the simulator saw of one client over one measured window.
pub(crate) struct Window {
    pub(crate) latencies: Samples,
    pub(crate) counts: Stats,
}

impl Window {
    fn merge(mut self, other: Window) -> Window {
        self.latencies.0.extend(other.latencies.0);
        let (a, b) = (&mut self.counts, other.counts);
        a.sent += b.sent;
        a.answers += b.answers;
        a.missing += b.missing;
        a.late += b.late;
        a.double += b.double;
        self
    }

    /// Answers the robot did not get in time: none, late or twice.
    pub(crate) fn missed(&self) -> u64 {
        self.counts.missing + self.counts.late + self.counts.double
    }
}

/// A directory of its own for the socket and the broker's files, removed when dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    /// `naobench-BENCH-PID` in the temporary directory, empty.
    pub(crate) fn new(bench: &str) -> Scratch {
        let directory = std::env::temp_dir().join(format!("naobench-{bench}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).expect("create the scratch directory");
        Scratch(directory)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Wait for a client's answers to flow for `WARM_UP`, then measure it for `seconds`, from a
/// thread at lolasim's priority: a caller on the normal scheduler preempted while it holds
/// lolasim's lock would stall lolasim's threads, and count their waits against the client.
pub(crate) fn measure(sim: &LolaSim, seconds: f64) -> Window {
    std::thread::scope(|scope| {
        let collector = std::thread::Builder::new().name("lola-collect".into()).spawn_scoped(scope, || {
            let spec = ThreadSpec {
                name: "lola-collect",
                role: "latency collector",
                priority: Some(SIM_PRIORITY),
                cpu: None,
                keep_cpu_awake: false,
                mlock: false,
            };
            let _realtime = make_realtime(&spec);
            collect(sim, seconds)
        });
        collector.expect("start the collector").join().expect("the collector ends")
    })
}

fn collect(sim: &LolaSim, seconds: f64) -> Window {
    let warm = sim.stats().answers + (WARM_UP.as_micros() / CYCLE.as_micros()) as u64;
    sim.wait_until(PATIENCE, |stats| stats.connected && stats.answers >= warm)
        .expect("the LoLA client answers within 30 s");
    sim.take_latencies();
    let before = sim.stats();
    let mut latencies = Vec::with_capacity((seconds * 90.0) as usize);
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < end {
        std::thread::sleep(COLLECT_EVERY.min(end.saturating_duration_since(Instant::now())));
        latencies.extend(sim.take_latencies().iter().map(|latency| latency.as_secs_f64() * 1e6));
    }
    let counts = sim.stats().since(&before);
    Window { latencies: Samples(latencies), counts }
}

/// The floor for `seconds`: connects, measures, disconnects.
fn floor_window(sim: &LolaSim, socket: &Path, seconds: f64, priority: u8) -> (Window, bool) {
    let client = floor::FloorClient::start(socket, Some(priority), &[ActuatorMap::default()]);
    let window = measure(sim, seconds);
    let fifo = client.stop();
    wait_disconnected(sim);
    (window, fifo)
}

pub(crate) fn wait_disconnected(sim: &LolaSim) {
    sim.wait_until(PATIENCE, |stats| !stats.connected).expect("the client leaves lolasim");
}

fn row(name: String, window: &Window, floor: &Window) -> Row {
    let latencies = &window.latencies;
    let over_target = latencies.0.iter().filter(|&&latency| latency > TARGET_P99_US).count();
    Row {
        name,
        fields: vec![
            ("p50 µs", latencies.p50()),
            ("p99 µs", latencies.p99()),
            ("max µs", latencies.max()),
            ("maps", window.counts.sent as f64),
            ("missing", window.counts.missing as f64),
            ("late", window.counts.late as f64),
            ("double", window.counts.double as f64),
            ("> 1 ms", over_target as f64),
            ("p50 / floor", latencies.p50() / floor.latencies.p50()),
            ("p99 / floor", latencies.p99() / floor.latencies.p99()),
        ],
    }
}

pub(crate) fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

pub fn run(seconds: f64, json: bool) {
    let scratch = Scratch::new("lola");
    let socket = scratch.0.join("robocup");
    let options = Options {
        recorded_latencies: RECORDED_LATENCIES,
        priority: Some(SIM_PRIORITY),
        ..Options::at(&socket)
    };
    let sim = LolaSim::start(options).expect("start lolasim");
    let priority = CycleConfig::default().priority;
    let cpus = std::thread::available_parallelism().map_or(2, |cpus| cpus.get());
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut floor_fifo = true;
    for busy in [false, true] {
        let label = if busy { "cores busy" } else { "idle" };
        let load: Vec<BusyLoad> = if busy { (0..cpus).map(BusyLoad::on).collect() } else { Vec::new() };
        let half = seconds / 2.0;
        progress("lola", format_args!("{label}: floor, first half, {half} s"));
        let (floor_a, fifo_a) = floor_window(&sim, &socket, half, priority);
        progress("lola", format_args!("{label}: naobroker, 2 s start-up then {seconds} s"));
        let BrokerRun { window: measured, stats } = broker::run(&sim, &socket, &scratch.0, seconds);
        wait_disconnected(&sim);
        progress("lola", format_args!("{label}: floor, second half, {half} s"));
        let (floor_b, fifo_b) = floor_window(&sim, &socket, half, priority);
        drop(load);
        floor_fifo &= fifo_a && fifo_b;
        let floor = floor_a.merge(floor_b);
        rows.push(row(format!("floor: bare client, pre-encoded answer, {label}"), &floor, &floor));
        rows.push(row(format!("naobroker, DCM lola backend, {label}"), &measured, &floor));
        progress(
            "lola",
            format_args!(
                "{label}: p99 floor {:.0} µs, naobroker {:.0} µs; missed floor {}, naobroker {}",
                floor.latencies.p99(),
                measured.latencies.p99(),
                floor.missed(),
                measured.missed()
            ),
        );
        notes.push(format!(
            "{label}: naobroker / floor p50 ×{:.2}, p99 ×{:.2}; p99 {:.0} µs against ≤ 1000 µs: {}; \
             missed answers (missing + late + double) {} against 0: {}",
            measured.latencies.p50() / floor.latencies.p50(),
            measured.latencies.p99() / floor.latencies.p99(),
            measured.latencies.p99(),
            verdict(measured.latencies.p99() <= TARGET_P99_US),
            measured.missed(),
            verdict(measured.missed() == 0)
        ));
        notes.push(format!("{label}: naobroker's DCM.stats at the end of its run (start included): {stats}"));
    }
    notes.push(format!(
        "cores busy: one spinning thread per CPU ({cpus}), normal priority (nice 0), each pinned to its \
         CPU; the real-time threads (naobroker's DCM cycle, the floor, lolasim) preempt them"
    ));
    notes.push(format!(
        "{seconds} s of naobroker per load, the floor {seconds} s in two halves around it (same \
         lolasim), each client measured after its first 2 s. Latency: lolasim's CLOCK_MONOTONIC from \
         just before a sensor map's write to the return of the read that completes its answer. An \
         answer past the next map is taken for that map's (a client cannot say which map it \
         answers): the first map counts missing, the next a double, and neither has a latency"
    ));
    notes.push(format!(
        "lolasim in its real-time cadence (12 ms absolute deadlines); SCHED_FIFO asked for its \
         threads and the thread collecting its latencies ({SIM_PRIORITY}), and for the floor \
         ({priority}, the DCM cycle's default): {}; naobroker: defaults, backend = \"lola\" on a \
         socket in a temporary directory",
        if floor_fifo { "granted" } else { "REFUSED, all ran on the normal scheduler" }
    ));
    print("lola", &rows, &notes, json);
}
