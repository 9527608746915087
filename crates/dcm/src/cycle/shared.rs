//! What the cycle thread shares with everyone else, all atomics: ALMemory's slots, the
//! statistics, each actuator's buffer length, the producers' queued counts, the last
//! sensor readings, the clock and the thread's pace.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_hardware::link::LinkHealth;
use naobroker_rt::Pace;
use naobroker_rtslots::RtSlots;

use super::{monotonic_ns, ClockMode, CycleConfig, CycleStats, DcmSlots};
use crate::time::DcmTime;

/// State shared between the cycle thread and everyone else, all atomics.
pub struct Shared {
    pub slots: Arc<RtSlots>,
    pub dcm_slots: DcmSlots,
    pub stats: CycleStats,
    pub(super) buffer_len: Box<[AtomicU32]>,
    /// Per producer and actuator (`producer * actuators + actuator`): the commands of
    /// that producer's requests not applied yet, whatever their update type.
    queued: Box<[AtomicU32]>,
    /// Per producer: how many of its requests the cycle applied.
    pub(super) applied: Box<[AtomicU64]>,
    /// Per sensor: what the hardware read at the last cycle, before its conversion
    /// (`f64` bits).
    pub(super) readings: Box<[AtomicU64]>,
    /// The id of the last hook added through any channel: ids are unique in the cycle.
    last_hook_id: AtomicU32,
    pub capacity: usize,
    pub period_us: u32,
    pub clock: ClockMode,
    pub(super) start_time_ms: DcmTime,
    pub(super) start_ns: i64,
    pub(super) now_ms: AtomicI32,
    /// The thread's cycles granted (manual clock), its wake-ups.
    pub(super) pace: Arc<Pace>,
    /// The link to the robot, for a backend whose link can drop (`lola`).
    pub link: Option<Arc<LinkHealth>>,
}

impl Shared {
    /// For a model of `actuators` and `sensors`, with `config`'s producers, clock and
    /// capacity, in `slots`.
    pub(super) fn new(
        slots: Arc<RtSlots>,
        dcm_slots: DcmSlots,
        actuators: usize,
        sensors: usize,
        config: &CycleConfig,
        link: Option<Arc<LinkHealth>>,
    ) -> Shared {
        let producers = config.producers.len();
        Shared {
            slots,
            dcm_slots,
            stats: CycleStats::default(),
            buffer_len: (0..actuators).map(|_| AtomicU32::new(0)).collect(),
            queued: (0..actuators * producers).map(|_| AtomicU32::new(0)).collect(),
            applied: (0..producers).map(|_| AtomicU64::new(0)).collect(),
            readings: (0..sensors).map(|_| AtomicU64::new(0f64.to_bits())).collect(),
            last_hook_id: AtomicU32::new(0),
            capacity: config.buffer_capacity,
            period_us: config.period_us.max(100),
            clock: config.clock,
            start_time_ms: config.start_time_ms,
            start_ns: monotonic_ns(),
            now_ms: AtomicI32::new(config.start_time_ms),
            pace: Arc::default(),
            link,
        }
    }

    /// DCM time now: with the real clock, derived from the monotonic clock; with the
    /// manual clock and the hardware's, the time of the last cycle (it stands still while
    /// no cycle runs).
    pub fn now(&self) -> DcmTime {
        match self.clock {
            ClockMode::Manual | ClockMode::Hardware => self.now_ms.load(Ordering::Acquire),
            ClockMode::Real => {
                let elapsed_ms = (monotonic_ns() - self.start_ns) / 1_000_000;
                self.start_time_ms.wrapping_add(elapsed_ms as i32)
            }
        }
    }

    /// The time of cycle number `cycle` (cycle 0 is the start).
    pub(super) fn cycle_time(&self, cycle: u64) -> DcmTime {
        let elapsed_ms = cycle * u64::from(self.period_us) / 1000;
        self.start_time_ms.wrapping_add(elapsed_ms as i32)
    }

    pub fn cycles(&self) -> u64 {
        self.stats.cycles.load(Ordering::Acquire)
    }

    /// Manual clock: run `n` more cycles. Returns the cycle number to wait for.
    pub fn grant(&self, n: u64) -> u64 {
        self.pace.grant(n)
    }

    /// Manual clock, from a thread that may block (tests, tools): run `n` more cycles and
    /// wait until they ran, `within` at most. Whether they did. The broker's `DCM.step`
    /// waits without blocking instead.
    pub fn step_blocking(&self, n: u64, within: std::time::Duration) -> bool {
        let target = self.grant(n);
        let started = std::time::Instant::now();
        while self.cycles() < target {
            if started.elapsed() > within {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        true
    }

    /// Manual clock: the thread takes in what producers queued without waiting for a cycle.
    pub(super) fn wake(&self) {
        self.pace.wake();
    }

    pub(super) fn queued_slot(&self, producer: usize, actuator: usize) -> &AtomicU32 {
        &self.queued[producer * self.buffer_len.len() + actuator]
    }

    /// Commands for `actuator` that producers other than `producer` queued.
    pub(super) fn queued_by_others(&self, producer: usize, actuator: usize) -> usize {
        (0..self.applied.len())
            .filter(|&other| other != producer)
            .map(|other| self.queued_slot(other, actuator).load(Ordering::SeqCst) as usize)
            .sum()
    }

    /// A new hook's id, never given before in this cycle (0 is no hook's).
    pub(super) fn new_hook_id(&self) -> u32 {
        self.last_hook_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn buffer_len(&self, actuator: usize) -> usize {
        self.buffer_len[actuator].load(Ordering::Acquire) as usize
    }

    /// What the hardware read for `sensor` at the last cycle, before its conversion: with
    /// the conversion in effect, the sensor's value whether or not the cycle already took
    /// a new one.
    pub fn sensor_reading(&self, sensor: usize) -> f64 {
        f64::from_bits(self.readings[sensor].load(Ordering::Acquire))
    }
}
