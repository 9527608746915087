//! The motion thread: woken by the DCM every `ratio` cycles, in lockstep with it under
//! the manual clock. Each cycle follows seed 004: preProcess is reported first, then the
//! engine reads the sensors, runs the tasks and sends its intentions, then postProcess.

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle, Thread};

use naobroker_dcm::core::Request;
use naobroker_dcm::cycle::{make_realtime, ClockMode, RequestChannel};

use crate::engine::{Engine, FromEngine, ToEngine};
use crate::reflexes::Switches;

mod reports;

/// Commands the API may queue for the motion thread between two cycles.
const COMMAND_QUEUE: usize = 1024;
/// Reports waiting for the API: room for many cycles' worth.
const REPORT_QUEUE: usize = 8192;

/// Values the API reads without asking the motion thread.
pub(crate) struct MotionShared {
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
    /// Commands the thread had taken in when it last stored the values above.
    applied: AtomicU64,
    /// Reports the queue to the API had no room for.
    pub(crate) reports_dropped: AtomicU64,
}

impl MotionShared {
    pub(crate) fn position(&self, motor: usize) -> f64 {
        f64::from_bits(self.positions[motor].load(Ordering::Acquire))
    }

    pub(crate) fn stiffness(&self, motor: usize) -> f64 {
        f64::from_bits(self.stiffnesses[motor].load(Ordering::Acquire))
    }

    /// How many commands the values read now reflect (at least).
    pub(crate) fn applied(&self) -> u64 {
        self.applied.load(Ordering::Acquire)
    }
}

/// Rendezvous between the DCM cycle (its postProcess hook) and the motion thread.
pub(crate) struct Sync {
    requested: AtomicU64,
    requested_time: AtomicI32,
    done: AtomicU64,
    stop: AtomicBool,
    dcm_thread: OnceLock<Thread>,
    motion_thread: OnceLock<Thread>,
}

impl Sync {
    /// Called on the DCM thread at every motion cycle's DCM cycle. With the real
    /// clock it only wakes the motion thread; with the manual clock it also waits for
    /// it, so that the next DCM cycle carries the motion cycle's commands.
    pub(crate) fn tick(&self, motion_cycle: u64, time: i32, lockstep: bool) {
        self.requested_time.store(time, Ordering::Release);
        self.requested.store(motion_cycle, Ordering::Release);
        if let Some(thread) = self.motion_thread.get() {
            thread.unpark();
        }
        if lockstep {
            self.dcm_thread.get_or_init(thread::current);
            while self.done.load(Ordering::Acquire) < motion_cycle && !self.stop.load(Ordering::Acquire) {
                thread::park_timeout(std::time::Duration::from_millis(100));
            }
        }
    }
}

pub(crate) struct MotionThread {
    pub(crate) sync: Arc<Sync>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for MotionThread {
    fn drop(&mut self) {
        self.sync.stop.store(true, Ordering::Release);
        if let Some(thread) = self.sync.motion_thread.get() {
            thread.unpark();
        }
        if let Some(thread) = self.sync.dcm_thread.get() {
            thread.unpark();
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

pub(crate) struct Started {
    pub(crate) thread: MotionThread,
    pub(crate) commands: rtrb::Producer<ToEngine>,
    pub(crate) reports: rtrb::Consumer<FromEngine>,
    pub(crate) wake: UnixDatagram,
    pub(crate) shared: Arc<MotionShared>,
}

pub(crate) fn start(
    mut engine: Engine,
    mut channel: RequestChannel,
    motors: usize,
    priority: u8,
    clock: ClockMode,
) -> std::io::Result<Started> {
    let shared = Arc::new(MotionShared {
        positions: (0..motors).map(|m| AtomicU64::new(engine.position(m).to_bits())).collect(),
        stiffnesses: (0..motors).map(|m| AtomicU64::new(engine.commanded_stiffness(m).to_bits())).collect(),
        switches: Arc::clone(engine.switches()),
        cycles: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        collision_stops: AtomicU64::new(0),
        applied: AtomicU64::new(0),
        reports_dropped: AtomicU64::new(0),
    });
    let sync = Arc::new(Sync {
        requested: AtomicU64::new(0),
        requested_time: AtomicI32::new(0),
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        dcm_thread: OnceLock::new(),
        motion_thread: OnceLock::new(),
    });
    let (commands, mut incoming) = rtrb::RingBuffer::new(COMMAND_QUEUE);
    let (outgoing, reports) = rtrb::RingBuffer::new(REPORT_QUEUE);
    // Allocated here: the motion thread never grows it.
    let mut events = Vec::with_capacity(engine.max_reports(COMMAND_QUEUE));
    let mut outgoing = reports::Reports::new(outgoing, events.capacity());
    let (wake_sender, wake) = UnixDatagram::pair()?;
    wake_sender.set_nonblocking(true)?;
    wake.set_nonblocking(true)?;
    let thread_sync = Arc::clone(&sync);
    let thread_shared = Arc::clone(&shared);
    let handle = thread::Builder::new().name("motion-cycle".into()).spawn(move || {
        if clock == ClockMode::Real && priority > 0 {
            make_realtime(priority, None, false);
        }
        let sync = thread_sync;
        let shared = thread_shared;
        let mut done = 0u64;
        let mut taken = 0u64;
        let mut request = Request::default();
        while !sync.stop.load(Ordering::Acquire) {
            let requested = sync.requested.load(Ordering::Acquire);
            if requested <= done {
                thread::park();
                continue;
            }
            if requested > done + 1 {
                // Fell behind by more than a cycle: continue from the present.
                shared.skipped.fetch_add(requested - done - 1, Ordering::Relaxed);
            }
            let time = sync.requested_time.load(Ordering::Acquire);
            // preProcess before anything of the cycle, its sensors included; the API raises
            // it while the cycle runs.
            let dropped = outgoing.pre_process(engine.cycles() + 1, time);
            let _ = wake_sender.send(&[0]);
            // At most a queue's worth per cycle, the bound `events` was sized for.
            for _ in 0..COMMAND_QUEUE {
                let Ok(command) = incoming.pop() else { break };
                taken += 1;
                engine.command(command, &mut events);
            }
            request.clear();
            engine.cycle(time, &mut request, &mut events);
            if !request.groups().is_empty() && channel.send(std::mem::take(&mut request)).is_err() {
                shared.refused.fetch_add(1, Ordering::Relaxed);
            }
            for motor in 0..motors {
                shared.positions[motor].store(engine.position(motor).to_bits(), Ordering::Release);
                let stiffness = engine.commanded_stiffness(motor);
                shared.stiffnesses[motor].store(stiffness.to_bits(), Ordering::Release);
            }
            shared.applied.store(taken, Ordering::Release);
            shared.collision_stops.store(engine.collision_stops(), Ordering::Relaxed);
            shared.cycles.fetch_add(1, Ordering::AcqRel);
            let dropped = dropped + outgoing.send(&mut events);
            if dropped > 0 {
                shared.reports_dropped.fetch_add(dropped, Ordering::Relaxed);
            }
            done = requested;
            sync.done.store(done, Ordering::Release);
            if let Some(thread) = sync.dcm_thread.get() {
                thread.unpark();
            }
            let _ = wake_sender.send(&[0]);
        }
    })?;
    let _ = sync.motion_thread.set(handle.thread().clone());
    Ok(Started { thread: MotionThread { sync, handle: Some(handle) }, commands, reports, wake, shared })
}
