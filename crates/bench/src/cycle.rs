//! `naobench cycle`: the DCM cycle's wake-up lateness, compute time and overruns beside a
//! bare clock_nanosleep loop at the same priority on the same CPU, kept out of idle states,
//! with the other core idle and busy, at 10 ms and 1 ms, and at 10 ms with the CPU free to
//! idle; then buffers 1 and 4000 commands deep. Progress goes to stderr; `--plot` draws the
//! lateness histograms, one panel per configuration.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_backend_sim::SimRobot;
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{ClockMode, CycleConfig, CycleReport, CycleThread, DcmSlots, StartedCycle};
use naobroker_plot::{histogram_panels, Distribution, Panel};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rt::{make_realtime, monotonic_ns, sleep_until, ThreadSpec};
use naobroker_rtslots::{timestamp_now, RtSlots};

use crate::stats::{print, Row, Samples};

struct Measured {
    lateness: Samples,
    compute: Samples,
    overruns: u64,
}

impl Measured {
    fn merge(mut self, other: Measured) -> Measured {
        self.lateness.0.extend(other.lateness.0);
        self.compute.0.extend(other.compute.0);
        self.overruns += other.overruns;
        self
    }
}

/// Keeps one CPU busy while alive.
pub(crate) struct BusyLoad {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BusyLoad {
    pub(crate) fn on(cpu: usize) -> BusyLoad {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let spec = ThreadSpec {
                name: "busy-load",
                role: "busy load",
                priority: None,
                cpu: Some(cpu),
                keep_cpu_awake: false,
                mlock: false,
            };
            let _realtime = make_realtime(&spec);
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        BusyLoad { stop, thread: Some(thread) }
    }
}

impl Drop for BusyLoad {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The floor: a bare clock_nanosleep loop with the same priority, on the same CPU, kept
/// awake as the cycle's is. Its compute is an empty cycle's: wake-up to after the clocks a
/// cycle reads (the publishing stamp, the end), what waking costs before any work.
fn bare_loop(period_us: u32, seconds: f64, priority: u8, cpu: usize, awake: bool) -> (Measured, bool) {
    let handle = std::thread::spawn(move || {
        let priority = Some(priority).filter(|&priority| priority > 0);
        let spec = ThreadSpec {
            name: "bare-loop",
            role: "bare loop",
            priority,
            cpu: Some(cpu),
            keep_cpu_awake: awake,
            mlock: false,
        };
        let realtime = make_realtime(&spec);
        let period = i64::from(period_us) * 1000;
        let cycles = (seconds * 1e6 / f64::from(period_us)) as usize;
        let mut lateness = Vec::with_capacity(cycles);
        let mut compute = Vec::with_capacity(cycles);
        let mut overruns = 0;
        let mut deadline = monotonic_ns();
        for _ in 0..cycles {
            deadline += period;
            sleep_until(deadline);
            let woke = monotonic_ns();
            std::hint::black_box(timestamp_now());
            compute.push((monotonic_ns() - woke) as f64 / 1000.0);
            lateness.push((woke - deadline) as f64 / 1000.0);
            if woke > deadline + period {
                overruns += 1;
                deadline += (woke - deadline) / period * period;
            }
        }
        (Measured { lateness: Samples(lateness), compute: Samples(compute), overruns }, realtime.cpu_awake())
    });
    handle.join().unwrap()
}

/// The DCM cycle on the simulated robot, its thread started on `clock`, every actuator's
/// buffer filled `depth` deep.
fn start(config: &CycleConfig, depth: usize) -> StartedCycle {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let slots = RtSlots::new(layout);
    let mut started =
        CycleThread::start(Arc::clone(&model), Box::new(SimRobot::new(&model)), slots, dcm_slots, config)
            .unwrap();
    let shared = Arc::clone(started.thread.shared());
    let mut channel = started.channels.take("DCM").unwrap();
    // A key frame every 100 ms whatever the depth: deeper buffers reach further into
    // the future, the number of commands falling due per cycle stays the same.
    for actuator in 0..model.actuators.len() {
        let mut request = Request::default();
        let commands = (1..=depth as i32)
            .map(|i| TimedCommand { time: shared.now() + 100 + i * 100, value: 0.1 * f64::from(i % 7) })
            .collect();
        request.push(actuator, UpdateType::Merge, commands);
        while channel.send(request.clone()).is_err() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    started
}

/// The DCM cycle on the simulated robot, every actuator's buffer `depth` deep.
fn dcm(period_us: u32, seconds: f64, priority: u8, cpu: usize, awake: bool, depth: usize) -> Measured {
    let config = CycleConfig {
        period_us,
        priority,
        cpu: Some(cpu),
        keep_cpu_awake: awake,
        clock: ClockMode::Real,
        start_time_ms: 0,
        buffer_capacity: 4096,
        ..CycleConfig::default()
    };
    let StartedCycle { thread: cycle, mut reports, .. } = start(&config, depth);
    let shared = Arc::clone(cycle.shared());
    std::thread::sleep(Duration::from_millis(200));
    while reports.pop().is_ok() {}
    let overruns_before = shared.stats.overruns.load(Ordering::Relaxed);
    let mut collected: Vec<CycleReport> = Vec::new();
    let deadline = monotonic_ns() + (seconds * 1e9) as i64;
    while monotonic_ns() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        while let Ok(report) = reports.pop() {
            collected.push(report);
        }
    }
    let overruns = shared.stats.overruns.load(Ordering::Relaxed) - overruns_before;
    drop(cycle);
    Measured {
        lateness: Samples(collected.iter().map(|r| r.lateness_ns as f64 / 1000.0).collect()),
        compute: Samples(collected.iter().map(|r| r.compute_ns as f64 / 1000.0).collect()),
        overruns,
    }
}

/// A table row (empty samples print as "–").
fn row(name: String, measured: &Measured) -> Row {
    Row {
        name,
        fields: vec![
            ("lateness p50 µs", measured.lateness.p50()),
            ("p99 µs", measured.lateness.p99()),
            ("max µs", measured.lateness.max()),
            ("overruns", measured.overruns as f64),
            ("compute p50 µs", measured.compute.p50()),
            ("compute p99 µs", measured.compute.p99()),
        ],
    }
}

/// One configuration's lateness samples, named for its panel.
fn distribution(label: &str, measured: &Measured) -> Distribution {
    Distribution { label: label.into(), samples: measured.lateness.0.clone() }
}

/// Says on stderr which configuration starts and how long it takes.
struct Progress {
    done: usize,
    total: usize,
}

impl Progress {
    fn start(&mut self, what: &str, seconds: f64) {
        self.done += 1;
        eprintln!("naobench cycle: [{}/{}] {what}, {seconds:.0} s", self.done, self.total);
    }
}

/// The floor-and-DCM comparisons: period, the other core busy, the CPU kept awake. Kept
/// awake as `cyclictest` keeps every CPU by default; once free to idle, to show what that
/// is worth (on a VM a halted vCPU's core, caches and TLB go to the host meanwhile).
const COMPARISONS: [(u32, bool, bool); 5] = [
    (10_000, false, true),
    (10_000, true, true),
    (10_000, false, false),
    (1_000, false, true),
    (1_000, true, true),
];

pub fn run(seconds: f64, priority: u8, cpu: usize, json: bool, plot: Option<&Path>) {
    let other_cpu = if cpu == 0 { 1 } else { 0 };
    let depth_seconds = seconds.min(10.0);
    let total = COMPARISONS.len() + 4;
    eprintln!(
        "naobench cycle: {total} configurations, about {:.0} s in all (--seconds {seconds} each)",
        COMPARISONS.len() as f64 * 2.0 * seconds + 4.0 * depth_seconds
    );
    let mut progress = Progress { done: 0, total };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut panels = Vec::new();
    let mut kept_awake = true;
    for (period_us, busy, awake) in COMPARISONS {
        let label = format!(
            "{} ms, {}, {}",
            period_us / 1000,
            if busy { "other core busy" } else { "other core idle" },
            if awake { "CPU kept awake" } else { "CPU free to idle" }
        );
        progress.start(&format!("floor and DCM, {label}"), 2.0 * seconds);
        let load = busy.then(|| BusyLoad::on(other_cpu));
        // ABBA order: host pauses and drift fall on both loops alike.
        let half = seconds / 2.0;
        let (floor_a, awake_a) = bare_loop(period_us, half, priority, cpu, awake);
        let dcm_a = dcm(period_us, half, priority, cpu, awake, 2000);
        let dcm_b = dcm(period_us, half, priority, cpu, awake, 2000);
        let (floor_b, awake_b) = bare_loop(period_us, half, priority, cpu, awake);
        kept_awake &= !awake || (awake_a && awake_b);
        drop(load);
        let floor = floor_a.merge(floor_b);
        let measured = dcm_a.merge(dcm_b);
        rows.push(row(format!("floor: bare loop, {label}"), &floor));
        rows.push(row(format!("DCM, 140 actuators × 2000 commands (100 ms apart), {label}"), &measured));
        notes.push(format!(
            "{label}: DCM − floor lateness p50 {:+.0} µs, p99 {:+.0} µs (target ≤ +20); \
             overruns {} vs {}; compute p50 {:.1} µs, an empty cycle's {:.1} µs (target ≤ 10)",
            measured.lateness.p50() - floor.lateness.p50(),
            measured.lateness.p99() - floor.lateness.p99(),
            measured.overruns,
            floor.overruns,
            measured.compute.p50(),
            floor.compute.p50()
        ));
        panels.push(Panel {
            title: label,
            distributions: vec![distribution("floor: bare loop", &floor), distribution("DCM", &measured)],
        });
    }
    for period_us in [10_000u32, 1_000] {
        for depth in [1usize, 4000] {
            let label = format!("DCM, {} ms, buffers {depth} deep, CPU kept awake", period_us / 1000);
            progress.start(&label, depth_seconds);
            let measured = dcm(period_us, depth_seconds, priority, cpu, true, depth);
            rows.push(row(label.clone(), &measured));
            panels.push(Panel { title: label, distributions: vec![distribution("DCM", &measured)] });
        }
    }
    notes.push(format!(
        "{seconds} s per configuration (floor and DCM in ABBA halves); priority {priority} SCHED_FIFO, \
         CPU {cpu}; compute is wake-up to end of cycle (hooks included, none here); the floor's \
         compute is an empty cycle's: wake-up to after reading the clocks a cycle reads"
    ));
    if !kept_awake {
        notes.push(format!(
            "CPU {cpu} could not be kept awake (root writes its pm_qos_resume_latency_us): \
             every row ran with the CPU free to idle"
        ));
    }
    print("cycle", &rows, &notes, json);
    if let Some(path) = plot {
        let title = format!("naobench cycle: wake-up lateness, {seconds} s per configuration");
        match histogram_panels(path, &title, "lateness (µs)", &panels) {
            Ok(()) => eprintln!("naobench cycle: histograms in {}", path.display()),
            Err(error) => eprintln!("naobench cycle: {error}"),
        }
    }
}

/// `naobench cycle-steps`: the cycle of `naobench cycle` (140 actuators, buffers `depth`
/// deep, key frames 100 ms apart) on the manual clock, `cycles` cycles at `period_us` of DCM
/// time each, for an instruction count that does not depend on the machine:
/// callgrind with `--toggle-collect='*Cycle as naobroker_rt::thread::Cycle>::run'` counts
/// the cycles' instructions alone (docs/dcm.md, "Cost of a cycle").
pub fn steps(cycles: u64, period_us: u32, depth: usize) {
    let config = CycleConfig {
        period_us,
        priority: 0,
        clock: ClockMode::Manual,
        start_time_ms: 0,
        buffer_capacity: 4096,
        ..CycleConfig::default()
    };
    let started = start(&config, depth);
    let shared = Arc::clone(started.thread.shared());
    // The requests are queued, not applied: the thread takes them in before the first cycle.
    assert!(shared.step_blocking(cycles, Duration::from_secs(600)), "the cycles did not run");
    eprintln!("naobench cycle-steps: {cycles} cycles of {period_us} µs, buffers {depth} deep");
}
