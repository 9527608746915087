//! The motion thread, on the real-time scaffold (`naobroker-rt`): it follows the DCM, whose
//! postProcess hook requests a motion cycle every `ratio` DCM cycles and, under the manual
//! clock, waits for it (lockstep). Each cycle follows seed 004: preProcess is reported
//! first, then the engine reads the sensors, runs the tasks and sends its intentions, then
//! postProcess. In steady state it does not allocate, free, lock, log or block:
//! `crates/motion/tests/no_allocation.rs` proves it.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_dcm::cycle::{CycleContext, RequestChannel};
use naobroker_rt::{report_queue, Cadence, Cycle, Pace, ReportReader, RtThread, ThreadSpec};

use crate::cartesian::Published;
use crate::engine::walking::WalkShared;
use crate::engine::{Engine, EngineOutput, FromEngine};
use crate::reflexes::Switches;

mod commands;
mod cycle;
mod reports;

pub use commands::Commands;
pub use cycle::MotionCycle;

/// Commands the API may queue for the motion thread between two cycles.
const COMMAND_QUEUE: usize = 1024;
/// Reports waiting for the API: room for many cycles' worth.
const REPORT_QUEUE: usize = 8192;
/// Requests to the DCM the motion thread keeps for reuse: it sends one per cycle and the
/// DCM gives it back at its next cycle.
const SPARE_REQUESTS: usize = 4;

/// Values the API reads without asking the motion thread.
pub struct MotionShared {
    positions: Box<[AtomicU64]>,
    /// The stiffness commanded (smart stiffness's lowered value included).
    stiffnesses: Box<[AtomicU64]>,
    /// Set by the API, read by the motion thread every cycle.
    pub(crate) switches: Arc<Switches>,
    pub(crate) cycles: AtomicU64,
    /// Motion cycles skipped because the thread fell behind by more than one.
    pub(crate) skipped: AtomicU64,
    pub(crate) refused: AtomicU64,
    /// Motion cycles in which collision protection held an arm at its last safe pose.
    pub(crate) collision_stops: AtomicU64,
    /// Each arm's self-collision level (`isCollision`), stored every cycle.
    pub(crate) collision_levels: Arc<crate::self_collision::CollisionLevels>,
    /// Commands the thread had taken in when it last stored the values above.
    applied: AtomicU64,
    /// Reports the queue to the API had no room for.
    pub(crate) reports_dropped: AtomicU64,
    /// Each cycle's Cartesian data, when the robot has a kinematic model.
    pub cartesian: Option<Published>,
    /// The walk's odometry and velocity.
    pub walk: Arc<WalkShared>,
}

impl MotionShared {
    pub fn position(&self, motor: usize) -> f64 {
        f64::from_bits(self.positions[motor].load(Ordering::Acquire))
    }

    pub fn stiffness(&self, motor: usize) -> f64 {
        f64::from_bits(self.stiffnesses[motor].load(Ordering::Acquire))
    }

    /// How many commands the values read now reflect (at least).
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Acquire)
    }

    /// Motion cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles.load(Ordering::Acquire)
    }

    /// Requests the DCM refused.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The trouble counters, named as `ALMotion.stats` names them: cycles skipped (the thread
    /// fell behind), requests the DCM refused, cycles an arm was held by collision protection,
    /// reports the API had no room for.
    pub fn trouble(&self) -> [(&'static str, u64); 4] {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        [
            ("skipped", load(&self.skipped)),
            ("refused", load(&self.refused)),
            ("collision_stops", load(&self.collision_stops)),
            ("reports_dropped", load(&self.reports_dropped)),
        ]
    }
}

/// The API side's ends of a motion thread.
pub struct MotionPorts {
    pub commands: Commands,
    pub reports: ReportReader<FromEngine>,
    pub shared: Arc<MotionShared>,
    /// The DCM time of the cycle the hook requested last, for the motion thread.
    requested_time: Arc<AtomicI32>,
}

impl MotionPorts {
    /// The DCM postProcess hook that drives the motion thread: every `ratio`-th DCM cycle
    /// requests motion cycle `cycle / ratio` and, in `lockstep`, waits for it, so that the
    /// next DCM cycle carries its commands.
    pub fn dcm_hook(
        &self,
        pace: Arc<Pace>,
        ratio: u64,
        lockstep: bool,
    ) -> impl FnMut(&mut CycleContext<'_>) + Send + 'static {
        let requested_time = Arc::clone(&self.requested_time);
        move |context| {
            if context.cycle % ratio == 0 {
                let motion_cycle = context.cycle / ratio;
                requested_time.store(context.time, Ordering::Release);
                pace.request(motion_cycle);
                if lockstep {
                    pace.wait_for(motion_cycle);
                }
            }
        }
    }
}

/// Make the motion cycle and the API's ends of it; everything either uses is allocated
/// here. [`spawn`] starts it.
pub fn prepare(engine: Engine, mut channel: RequestChannel) -> std::io::Result<(MotionCycle, MotionPorts)> {
    let motors = engine.motors();
    let shared = Arc::new(MotionShared {
        positions: (0..motors).map(|m| AtomicU64::new(engine.position(m).to_bits())).collect(),
        stiffnesses: (0..motors).map(|m| AtomicU64::new(engine.commanded_stiffness(m).to_bits())).collect(),
        switches: Arc::clone(engine.switches()),
        cycles: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        collision_stops: AtomicU64::new(0),
        collision_levels: Arc::clone(engine.collision_levels()),
        applied: AtomicU64::new(0),
        reports_dropped: AtomicU64::new(0),
        cartesian: engine.kinematics().map(|kinematics| Published::new(kinematics)),
        walk: Arc::clone(engine.walk_shared()),
    });
    if let Some(published) = &shared.cartesian {
        engine.publish_cartesian(published);
    }
    let (commands, incoming) = rtrb::RingBuffer::new(COMMAND_QUEUE);
    // Every task that can be queued or running at once: the API frees them before it
    // queues a command, so the motion thread always has room to hand them back.
    let (retire, retired) = rtrb::RingBuffer::new(COMMAND_QUEUE + engine.max_reports(0));
    let (reporter, reports) = report_queue(REPORT_QUEUE)?;
    let output = EngineOutput::with_capacity(engine.max_reports(COMMAND_QUEUE));
    // Each motor's position and stiffness, twice for a stiffness restored before a move.
    channel.keep_requests(SPARE_REQUESTS, 4 * motors);
    let requested_time = Arc::new(AtomicI32::new(0));
    let cycle = MotionCycle::new(
        engine,
        channel,
        incoming,
        retire,
        reports::Reports::new(reporter, output.reports.capacity()),
        output,
        Arc::clone(&shared),
        Arc::clone(&requested_time),
    );
    let ports = MotionPorts { commands: Commands::new(commands, retired), reports, shared, requested_time };
    Ok((cycle, ports))
}

/// Start `cycle` (a [`MotionCycle`], or one wrapping it) as the `motion-cycle` thread,
/// following the cycles the DCM's hook requests ([`MotionPorts::dcm_hook`]), under
/// `SCHED_FIFO` at `priority` when given.
pub fn spawn(cycle: impl Cycle, priority: Option<u8>) -> std::io::Result<RtThread> {
    let spec = ThreadSpec {
        name: "motion-cycle",
        role: "motion cycle",
        priority,
        cpu: None,
        keep_cpu_awake: false,
        mlock: false,
    };
    RtThread::spawn(spec, Cadence::Following, Arc::default(), cycle)
}

/// The running motion thread; dropped, it stops (a DCM hook waiting for it is let go).
pub(crate) type MotionThread = RtThread;

/// What ALMotion's module keeps of its thread.
pub(crate) struct Started {
    pub(crate) thread: MotionThread,
    pub(crate) commands: Commands,
    pub(crate) reports: rtrb::Consumer<FromEngine>,
    pub(crate) wake: std::os::unix::net::UnixDatagram,
    pub(crate) shared: Arc<MotionShared>,
}
