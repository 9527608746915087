//! `naobench physics`: `naobroker-lolasim`'s physical robot (MuJoCo, `--physics`) beside its
//! kinematic one, measured in the same run against the two targets. Stepped: how many
//! times faster than real time each simulator runs on one CPU against a bare LoLA client
//! holding StandInit, and the physics alone without the socket. Paced: each in its
//! real-time cadence with the sibling `naobroker` binary as its client, its maps missed and
//! its answers' latency, as `naobench lola` measures them.

mod paced;
mod stepped;

use naobroker_lolasim::{Stats, Truth, World, CYCLE};

use crate::helpers::progress;
use crate::lola::{verdict, Scratch, SIM_PRIORITY};
use crate::stats::{print, Row, Samples};
use paced::PacedRun;
use stepped::SteppedRun;

/// The target for the stepped physical simulator: simulated seconds per wall second.
const TARGET_SPEEDUP: f64 = 10.0;

/// One row: how fast simulated time went, the per-cycle (or per-answer) times, the link's
/// counts when there was one, and the ratios to the kinematic row of the same part.
struct Measured<'a> {
    speedup: f64,
    times_us: &'a Samples,
    link: Option<Stats>,
    kinematic: Option<&'a Samples>,
}

impl Measured<'_> {
    fn row(&self, name: &str) -> Row {
        let count = |pick: fn(&Stats) -> u64| self.link.map_or(f64::NAN, |stats| pick(&stats) as f64);
        let ratio = |percentile: fn(&Samples) -> f64| {
            self.kinematic.map_or(f64::NAN, |kinematic| percentile(self.times_us) / percentile(kinematic))
        };
        Row {
            name: name.to_owned(),
            fields: vec![
                ("sim s / wall s", self.speedup),
                ("p50 µs", self.times_us.p50()),
                ("p99 µs", self.times_us.p99()),
                ("max µs", self.times_us.max()),
                ("maps", count(|stats| stats.sent)),
                ("missing", count(|stats| stats.missing)),
                ("late", count(|stats| stats.late)),
                ("double", count(|stats| stats.double)),
                ("p50 / kinematic", ratio(Samples::p50)),
                ("p99 / kinematic", ratio(Samples::p99)),
            ],
        }
    }
}

fn stepped_row(name: &str, run: &SteppedRun, kinematic: Option<&SteppedRun>) -> Row {
    let measured = Measured {
        speedup: run.speedup(),
        times_us: &run.cycle_us,
        link: run.link,
        kinematic: kinematic.map(|kinematic| &kinematic.cycle_us),
    };
    measured.row(name)
}

fn paced_row(name: &str, run: &PacedRun, kinematic: &PacedRun, seconds: f64) -> Row {
    let window = &run.window;
    let measured = Measured {
        speedup: window.counts.sent as f64 * CYCLE.as_secs_f64() / seconds,
        times_us: &window.latencies,
        link: Some(window.counts),
        kinematic: Some(&kinematic.window.latencies),
    };
    measured.row(name)
}

/// Where the robot ended, for the notes: its ground truth said in a few words.
fn posture(truth: Option<Truth>) -> String {
    match truth {
        Some(truth) => format!(
            "{} (torso {:.2} m above the ground, pitch {:.2} rad, after {:.1} simulated s)",
            if truth.fallen { "fallen" } else { "upright" },
            truth.torso[2],
            truth.torso[4],
            truth.time_s
        ),
        None => "no ground truth".into(),
    }
}

pub fn run(seconds: f64, json: bool) {
    let scratch = Scratch::new("physics");
    let cpus = std::thread::available_parallelism().map_or(2, |cpus| cpus.get());
    let cpu = cpus - 1;
    progress("physics", format_args!("stepped, on CPU {cpu}: kinematic body, {seconds} simulated s"));
    let kinematic = stepped::on_cpu(cpu, || stepped::through_lola(&scratch.0, None, seconds));
    progress("physics", format_args!("stepped, on CPU {cpu}: physical body, {seconds} simulated s"));
    let physical = stepped::on_cpu(cpu, || stepped::through_lola(&scratch.0, Some(World::Flat), seconds));
    progress("physics", format_args!("stepped, on CPU {cpu}: physics alone, {seconds} simulated s"));
    let alone = stepped::on_cpu(cpu, || stepped::physics_alone(seconds));
    progress(
        "physics",
        format_args!(
            "stepped: {:.1} × real time kinematic, {:.1} × physical, {:.1} × physics alone",
            kinematic.speedup(),
            physical.speedup(),
            alone.speedup()
        ),
    );
    progress("physics", format_args!("paced: kinematic body and naobroker, 2 s start-up then {seconds} s"));
    let paced_kinematic = paced::with_broker(&scratch.0, None, seconds);
    progress("physics", format_args!("paced: physical body and naobroker, 2 s start-up then {seconds} s"));
    let paced_physical = paced::with_broker(&scratch.0, Some(World::Flat), seconds);
    progress(
        "physics",
        format_args!(
            "paced: missed kinematic {}, physical {}; p99 kinematic {:.0} µs, physical {:.0} µs",
            paced_kinematic.window.missed(),
            paced_physical.window.missed(),
            paced_kinematic.window.latencies.p99(),
            paced_physical.window.latencies.p99()
        ),
    );

    let rows = vec![
        stepped_row("stepped: kinematic body, bare client (cycle)", &kinematic, Some(&kinematic)),
        stepped_row("stepped: physical body, bare client (cycle)", &physical, Some(&kinematic)),
        stepped_row("physics alone: PhysicalBody::advance(12 ms), no socket", &alone, None),
        paced_row(
            "real time: kinematic body, naobroker (answer)",
            &paced_kinematic,
            &paced_kinematic,
            seconds,
        ),
        paced_row("real time: physical body, naobroker (answer)", &paced_physical, &paced_kinematic, seconds),
    ];
    let notes = vec![
        format!(
            "stepped physical robot: {:.1} × real time against ≥ {TARGET_SPEEDUP} ×: {} ({:.1} × at its \
             median cycle, 12 ms / p50, which the machine's other load moves less; {:.1} × the kinematic \
             one's cycle time at p50); the physics alone runs {:.1} × real time: the socket, the client and \
             reading the sensors cost {:.0} µs a cycle at p50 (physical cycle p50 − physics alone p50)",
            physical.speedup(),
            verdict(physical.speedup() >= TARGET_SPEEDUP),
            CYCLE.as_secs_f64() * 1e6 / physical.cycle_us.p50(),
            physical.cycle_us.p50() / kinematic.cycle_us.p50(),
            alone.speedup(),
            physical.cycle_us.p50() - alone.cycle_us.p50()
        ),
        format!(
            "real time with naobroker: missed maps (missing + late + double) physical {} against 0: {}; \
             kinematic {} in the same run",
            paced_physical.window.missed(),
            verdict(paced_physical.window.missed() == 0),
            paced_kinematic.window.missed()
        ),
        format!(
            "stepped: {seconds} simulated s each, every thread (stepping, lolasim's, the client's) on CPU \
             {cpu} of {cpus} and the normal scheduler: one lolasim step() and wait_answer() per cycle (p50, \
             p99, max: that cycle's wall time), the bare client answering every map with actuator maps \
             encoded before the first, all stiffness 1: an untimed 3 s stand-up (Crouch to StandInit eased \
             over 2 s, 1 s still; StandInit at once throws the limp crouching robot over), then StandInit \
             held; sim s / wall s = cycles × 12 ms / the loop's wall time. The physics alone: the same \
             commands, command() and advance(12 ms) timed. Robot at the end: stepped {}, physics alone {}",
            posture(physical.truth),
            posture(alone.truth)
        ),
        format!(
            "real time: lolasim's 12 ms cadence, its threads and the latency collector SCHED_FIFO \
             {SIM_PRIORITY}; naobroker: defaults, backend = \"lola\", {seconds} s after its first 2 s; p50, \
             p99, max: each answer's latency as naobench lola measures it (sim s / wall s: maps × 12 ms / \
             {seconds} s). A map is stamped once its cycle has moved the body and read its sensors: the \
             physics' time is not in the latency, it shows as maps missed when a cycle overruns. The \
             physical robot at the end: {}",
            posture(paced_physical.truth)
        ),
        format!(
            "real time, kinematic body: naobroker's DCM.stats (start included): {}",
            paced_kinematic.stats
        ),
        format!("real time, physical body: naobroker's DCM.stats (start included): {}", paced_physical.stats),
    ];
    print("physics", &rows, &notes, json);
}
