//! The stepped half of `naobench physics`: a simulator stepped as fast as it goes against a
//! bare LoLA client holding StandInit, and the physical body advanced alone, on one CPU. Both
//! first stand the robot up from its crouch (untimed): StandInit sent at once to the limp
//! crouching robot throws it over, and a robot lying on the ground is not what is measured.

use std::path::Path;
use std::time::{Duration, Instant};

use naobroker_lola::{names, ActuatorMap};
use naobroker_lolasim::{LolaSim, Options, Stats, Truth, World, CYCLE};
use naobroker_physics::{PhysicalBody, RobotModel};
use naobroker_posture::library::{Posture, CROUCH, STAND_INIT};
use naobroker_rt::{make_realtime, ThreadSpec};

use crate::lola::floor::FloorClient;
use crate::lola::PATIENCE;
use crate::stats::Samples;

/// The untimed stand-up: from the crouch the robot starts in to StandInit, then still.
const STAND_UP: Duration = Duration::from_secs(2);
const SETTLE: Duration = Duration::from_secs(1);

/// What stepping one simulator gave.
pub(super) struct SteppedRun {
    /// The wall time of each cycle, µs.
    pub(super) cycle_us: Samples,
    /// The whole loop's wall time.
    pub(super) wall: Duration,
    /// The link's counts over the timed cycles, when a client answered.
    pub(super) link: Option<Stats>,
    /// Where the physical robot ended.
    pub(super) truth: Option<Truth>,
}

impl SteppedRun {
    /// Simulated seconds per wall second.
    pub(super) fn speedup(&self) -> f64 {
        self.cycle_us.0.len() as f64 * CYCLE.as_secs_f64() / self.wall.as_secs_f64()
    }
}

/// Run `work` on a thread of its own pinned to `cpu` (the threads it starts inherit the pin),
/// on the normal scheduler.
pub(super) fn on_cpu<T: Send>(cpu: usize, work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let pinned = std::thread::Builder::new().name("physics-stepped".into()).spawn_scoped(scope, || {
            let spec = ThreadSpec {
                name: "physics-stepped",
                role: "stepped simulator",
                priority: None,
                cpu: Some(cpu),
                keep_cpu_awake: false,
                mlock: false,
            };
            let _realtime = make_realtime(&spec);
            work()
        });
        pinned.expect("start the stepping thread").join().expect("the stepping thread ends")
    })
}

/// LoLA's joint angles in `posture` (the hands as the posture has them).
fn lola_angles(posture: &Posture) -> [f32; names::JOINTS.len()] {
    names::JOINTS.map(|joint| {
        let angle = posture.joints.iter().find(|(name, _)| *name == joint).map(|(_, angle)| *angle);
        angle.expect("every posture names every LoLA joint") as f32
    })
}

/// The answers of the warm-up, one a cycle, stiff: Crouch to StandInit eased over `STAND_UP`
/// (as ALMotion interpolates), then StandInit for `SETTLE`; the last one, StandInit, is the
/// answer from then on.
fn stand_up() -> Vec<ActuatorMap> {
    let (from, to) = (lola_angles(&CROUCH), lola_angles(&STAND_INIT));
    let moving = (STAND_UP.as_secs_f64() / CYCLE.as_secs_f64()).round() as usize;
    let still = (SETTLE.as_secs_f64() / CYCLE.as_secs_f64()).round() as usize;
    (1..=moving + still)
        .map(|cycle| {
            let along = (cycle as f32 / moving as f32).min(1.0);
            let eased = along * along * (3.0 - 2.0 * along);
            let position = std::array::from_fn(|joint| from[joint] + (to[joint] - from[joint]) * eased);
            ActuatorMap { position, stiffness: [1.0; names::JOINTS.len()], ..ActuatorMap::default() }
        })
        .collect()
}

/// Run `cycle` `seconds / 12 ms` times, each timed: their times and the loop's.
fn timed_cycles(seconds: f64, mut cycle: impl FnMut()) -> (Samples, Duration) {
    let cycles = (seconds / CYCLE.as_secs_f64()).round() as usize;
    let mut cycle_us = Vec::with_capacity(cycles);
    let started = Instant::now();
    for _ in 0..cycles {
        let cycle_started = Instant::now();
        cycle();
        cycle_us.push(cycle_started.elapsed().as_secs_f64() * 1e6);
    }
    (Samples(cycle_us), started.elapsed())
}

/// `seconds` of simulated time through LoLA after the stand-up: the kinematic body, or the
/// physical one in `physics`; one step and its answer per cycle.
pub(super) fn through_lola(scratch: &Path, physics: Option<World>, seconds: f64) -> SteppedRun {
    let socket = scratch.join(if physics.is_some() { "stepped-physical" } else { "stepped-kinematic" });
    let options = Options { physics, ..Options::at(&socket).stepped() };
    let sim = LolaSim::start(options).unwrap_or_else(|error| unavailable(&error));
    let answers = stand_up();
    let client = FloorClient::start(&socket, None, &answers);
    sim.wait_for_client(PATIENCE).expect("the bare client connects");
    let cycle = || {
        sim.step().expect("a stepped cycle");
        sim.wait_answer(PATIENCE).expect("the bare client answers");
    };
    answers.iter().for_each(|_| cycle());
    let before = sim.stats();
    let (cycle_us, wall) = timed_cycles(seconds, cycle);
    let link = sim.stats().since(&before);
    let truth = sim.truth().ok();
    // The client's read ends with the connection.
    drop(sim);
    client.stop();
    SteppedRun { cycle_us, wall, link: Some(link), truth }
}

/// `seconds` of simulated time of the physical body alone after the stand-up, commanded as
/// the client commands it.
pub(super) fn physics_alone(seconds: f64) -> SteppedRun {
    let model = RobotModel::nao_v6();
    let mut body =
        PhysicalBody::new(&model, World::Flat, &names::JOINTS).unwrap_or_else(|error| unavailable(&error));
    let follow = |body: &mut PhysicalBody, commands: &ActuatorMap| {
        for (joint, (&position, &stiffness)) in commands.position.iter().zip(&commands.stiffness).enumerate()
        {
            body.command(joint, f64::from(position), f64::from(stiffness));
        }
        body.advance(CYCLE.as_secs_f64());
    };
    let answers = stand_up();
    answers.iter().for_each(|commands| follow(&mut body, commands));
    let held = answers.last().expect("the stand-up ends at StandInit");
    let (cycle_us, wall) = timed_cycles(seconds, || follow(&mut body, held));
    SteppedRun { cycle_us, wall, link: None, truth: Some(body.truth()) }
}

/// MuJoCo missing (or the simulator refused): say why and stop.
pub(super) fn unavailable(error: &dyn std::fmt::Display) -> ! {
    eprintln!("naobench physics: cannot start the simulator: {error}");
    std::process::exit(2);
}
