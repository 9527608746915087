//! A real-time thread: spawned under its name, it asks the OS for what its [`ThreadSpec`]
//! says, then runs its [`Cycle`] at its [`Cadence`] until it is dropped.

use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::clock::{monotonic_ns, sleep_until};
use crate::pace::{Cadence, Pace, HARDWARE_WAIT};
use crate::priority::{make_realtime, ThreadSpec};

/// Which cycle runs, and when it woke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// 1 for the first cycle; with [`Cadence::Periodic`], the deadline's number (missed
    /// deadlines are not run but still counted), with [`Cadence::Following`] the number
    /// requested, with [`Cadence::Hardware`] the hardware's cycles so far (those it had
    /// while the thread was late counted too).
    pub number: u64,
    /// Cycles not run just before this one: deadlines missed after an overrun, requests
    /// jumped over, hardware cycles that passed while the thread was late.
    pub skipped: u64,
    /// How late the thread woke after its deadline (0 without deadlines).
    pub lateness_ns: i64,
    /// When it woke, on CLOCK_MONOTONIC ([`crate::monotonic_ns`]).
    pub woke_ns: i64,
}

/// The work of a real-time thread. It runs on that thread only: it must not allocate,
/// lock, log or block.
pub trait Cycle: Send + 'static {
    /// Before the first cycle, once the OS answered: whether the thread runs `SCHED_FIFO`.
    fn started(&mut self, _realtime: bool) {}

    /// One cycle.
    fn run(&mut self, tick: Tick);

    /// Without deadlines ([`Cadence::Granted`], [`Cadence::Following`],
    /// [`Cadence::Hardware`]): at every wake-up, before looking for the next cycle (the DCM
    /// takes in what producers queued).
    fn idle(&mut self) {}

    /// [`Cadence::Hardware`]: wait at most `timeout` for the hardware's next cycle.
    /// `Some(missed)` when one is ready to run, `missed` being the hardware's cycles that
    /// passed unrun just before it (the thread was late); `None` when `timeout` passed first.
    /// It returns within `timeout` (the thread looks for a stop in between) and, like
    /// [`Cycle::run`], never allocates, locks or logs. By default there is no hardware: it
    /// sleeps `timeout` and says no.
    fn wait_hardware(&mut self, timeout: Duration) -> Option<u64> {
        thread::park_timeout(timeout);
        None
    }
}

/// A running real-time thread; dropping it stops and joins it.
pub struct RtThread {
    pace: Arc<Pace>,
    handle: Option<JoinHandle<()>>,
}

impl RtThread {
    /// Start `cycle` on a new thread named and prioritized as `spec` says, paced through
    /// `pace` (made beforehand, so that what the cycle shares with others can hold it).
    pub fn spawn(
        spec: ThreadSpec,
        cadence: Cadence,
        pace: Arc<Pace>,
        mut cycle: impl Cycle,
    ) -> std::io::Result<RtThread> {
        let thread_pace = Arc::clone(&pace);
        let handle = thread::Builder::new().name(spec.name.into()).spawn(move || {
            let realtime = make_realtime(&spec);
            cycle.started(realtime.fifo);
            match cadence {
                Cadence::Periodic { start_ns, period_ns } => {
                    periodic(&thread_pace, &mut cycle, start_ns, period_ns)
                }
                Cadence::Granted => granted(&thread_pace, &mut cycle),
                Cadence::Following => following(&thread_pace, &mut cycle),
                Cadence::Hardware => hardware(&thread_pace, &mut cycle),
            }
        })?;
        pace.set_thread(handle.thread().clone());
        Ok(RtThread { pace, handle: Some(handle) })
    }

    /// Grant or request cycles, wait for them, read overruns and skipped cycles.
    pub fn pace(&self) -> &Arc<Pace> {
        &self.pace
    }
}

impl Drop for RtThread {
    fn drop(&mut self) {
        self.pace.stop();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

fn periodic(pace: &Pace, cycle: &mut impl Cycle, start_ns: i64, period_ns: i64) {
    let period_ns = period_ns.max(1);
    let mut number = 0u64;
    let mut deadline = start_ns;
    let mut skipped = 0;
    while !pace.stopping() {
        number += 1;
        deadline += period_ns;
        sleep_until(deadline);
        let woke_ns = monotonic_ns();
        cycle.run(Tick { number, skipped, lateness_ns: woke_ns - deadline, woke_ns });
        pace.finished(number);
        let finished = monotonic_ns();
        skipped = 0;
        if finished > deadline + period_ns {
            // Continue from the present instead of bursting through the missed deadlines.
            let missed = (finished - deadline) / period_ns;
            skipped = missed as u64;
            pace.count_overrun(skipped);
            number += skipped;
            deadline += missed * period_ns;
        }
    }
}

fn granted(pace: &Pace, cycle: &mut impl Cycle) {
    let mut number = 0u64;
    while !pace.stopping() {
        cycle.idle();
        if pace.target() > number {
            number += 1;
            cycle.run(Tick { number, skipped: 0, lateness_ns: 0, woke_ns: monotonic_ns() });
            pace.finished(number);
        } else {
            thread::park();
        }
    }
}

fn following(pace: &Pace, cycle: &mut impl Cycle) {
    let mut done = 0u64;
    while !pace.stopping() {
        cycle.idle();
        let requested = pace.target();
        if requested <= done {
            thread::park();
            continue;
        }
        let skipped = requested - done - 1;
        pace.count_skipped(skipped);
        cycle.run(Tick { number: requested, skipped, lateness_ns: 0, woke_ns: monotonic_ns() });
        done = requested;
        pace.finished(done);
    }
}

fn hardware(pace: &Pace, cycle: &mut impl Cycle) {
    let mut number = 0u64;
    while !pace.stopping() {
        cycle.idle();
        let Some(missed) = cycle.wait_hardware(HARDWARE_WAIT) else { continue };
        number += missed + 1;
        pace.count_skipped(missed);
        cycle.run(Tick { number, skipped: missed, lateness_ns: 0, woke_ns: monotonic_ns() });
        pace.finished(number);
    }
}

#[cfg(test)]
mod tests;
