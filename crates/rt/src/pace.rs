//! The cadence a real-time thread keeps, and [`Pace`]: the atomics through which other
//! threads grant or request its cycles, wait for them, stop it, and read what it missed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::{self, Thread};
use std::time::Duration;

/// When a real-time thread runs its cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    /// Every `period_ns` after `start_ns`, on absolute CLOCK_MONOTONIC deadlines (no drift).
    /// A cycle that ends after the next deadline is an overrun: the thread continues from
    /// the present instead of bursting through the deadlines it missed (counted as skipped).
    Periodic { start_ns: i64, period_ns: i64 },
    /// Only the cycles granted through [`Pace::grant`], each one, in order (the DCM's
    /// manual clock: `DCM.step(n)`).
    Granted,
    /// The cycle numbers requested through [`Pace::request`]: the latest runs, those it
    /// jumped over are counted as skipped (the motion cycle following the DCM's).
    Following,
    /// Whenever the hardware has a cycle ready ([`crate::Cycle::wait_hardware`]): the robot
    /// clocks the thread (the DCM under LoLA). The thread waits in slices of at most
    /// [`HARDWARE_WAIT`], so that it sees a stop soon even when the hardware is silent;
    /// hardware cycles that passed unrun (the thread was late) count as skipped.
    Hardware,
}

/// The longest the thread waits for the hardware at once ([`Cadence::Hardware`]): between
/// two waits it looks whether it must stop and takes in what producers queued.
pub const HARDWARE_WAIT: Duration = Duration::from_millis(100);

/// Shared between a real-time thread and the threads that pace it. Nothing here locks or
/// allocates.
#[derive(Debug, Default)]
pub struct Pace {
    /// Granted: cycles granted so far. Following: the cycle number last requested.
    target: AtomicU64,
    /// The number of the last cycle finished.
    done: AtomicU64,
    overruns: AtomicU64,
    skipped: AtomicU64,
    stop: AtomicBool,
    thread: OnceLock<Thread>,
    /// The thread waiting in [`Pace::wait_for`], woken after every cycle.
    waiter: OnceLock<Thread>,
}

impl Pace {
    /// [`Cadence::Granted`]: run `n` more cycles. Returns the number of the last one.
    pub fn grant(&self, n: u64) -> u64 {
        let target = self.target.fetch_add(n, Ordering::AcqRel) + n;
        self.wake();
        target
    }

    /// [`Cadence::Following`]: run cycle number `cycle` next (an older request is ignored).
    pub fn request(&self, cycle: u64) {
        self.target.fetch_max(cycle, Ordering::AcqRel);
        self.wake();
    }

    /// Block until cycle number `cycle` finished, or the thread stops: lockstep with it.
    /// Meant for one waiting thread (the first that waits is the one woken after cycles);
    /// it parks, so it does not spin, and looks again every 100 ms in any case.
    pub fn wait_for(&self, cycle: u64) {
        self.waiter.get_or_init(thread::current);
        while self.done() < cycle && !self.stopping() {
            thread::park_timeout(Duration::from_millis(100));
        }
    }

    /// Wake the thread: it looks for a new cycle (and, waiting, at its inbound queues).
    pub fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }

    /// The number of the last cycle finished (0 before the first).
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    /// Cycles that ended after the next one's deadline ([`Cadence::Periodic`]).
    pub fn overruns(&self) -> u64 {
        self.overruns.load(Ordering::Relaxed)
    }

    /// Cycles not run because the thread fell behind (deadlines missed, requests jumped,
    /// hardware cycles passed while it was late).
    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn target(&self) -> u64 {
        self.target.load(Ordering::Acquire)
    }

    pub(crate) fn set_thread(&self, thread: Thread) {
        let _ = self.thread.set(thread);
    }

    pub(crate) fn finished(&self, cycle: u64) {
        self.done.store(cycle, Ordering::Release);
        if let Some(waiter) = self.waiter.get() {
            waiter.unpark();
        }
    }

    pub(crate) fn count_overrun(&self, skipped: u64) {
        self.overruns.fetch_add(1, Ordering::Relaxed);
        self.count_skipped(skipped);
    }

    pub(crate) fn count_skipped(&self, skipped: u64) {
        if skipped > 0 {
            self.skipped.fetch_add(skipped, Ordering::Relaxed);
        }
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake();
        if let Some(waiter) = self.waiter.get() {
            waiter.unpark();
        }
    }
}
