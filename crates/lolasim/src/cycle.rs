//! One LoLA cycle (the body follows the kept commands for 12 ms, then a sensor map goes to
//! the client) and the real-time thread that runs one every 12 ms.

use std::io::Write;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use naobroker_lola::{encode_sensor_map, SENSOR_MAP_BYTES};
use naobroker_rt::{make_realtime, ThreadSpec};

use crate::error::SimError;
use crate::options::{Cadence, CYCLE};
use crate::state::{SentMap, Shared};

/// What one cycle did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CycleOutcome {
    /// The sensor map of this cycle went out.
    Sent(u64),
    /// No client: the body moved, nothing was sent.
    NoClient,
    /// A stall: the body moved, nothing was sent.
    Stalled,
}

/// Run one cycle: the body follows the kept commands, then the client gets the sensor map
/// (a map the previous one still waits an answer for counts that one missing). With
/// `only_with_client`, nothing happens at all when no client is connected.
pub(crate) fn run_cycle(shared: &Shared, only_with_client: bool) -> Result<CycleOutcome, SimError> {
    let mut wire = [0u8; SENSOR_MAP_BYTES];
    let mut guard = shared.lock();
    if only_with_client && guard.connection.is_none() {
        return Ok(CycleOutcome::NoClient);
    }
    let state = &mut *guard;
    state.body.tick(&state.kept);
    state.stats.cycles += 1;
    let cycle = state.stats.cycles;
    // Waiters on the counts see each cycle, sent or not.
    shared.changed.notify_all();
    let Some(connection) = state.connection.clone() else {
        return Ok(CycleOutcome::NoClient);
    };
    if state.stall_until.is_some_and(|until| Instant::now() < until) {
        state.stats.stalled_cycles += 1;
        return Ok(CycleOutcome::Stalled);
    }
    state.body.sense(&state.script, &state.kept, &mut state.sensors);
    encode_sensor_map(&state.sensors, &mut wire)?;
    if state.latest.is_some_and(|latest| !latest.answered) {
        state.stats.missing += 1;
    }
    // Before the write: an answer may come back before this thread locks again.
    state.latest = Some(SentMap { cycle, sent_at: Instant::now(), answered: false });
    state.stats.sent += 1;
    drop(guard);

    let written = (&*connection.stream).write_all(&wire);
    let mut state = shared.lock();
    if let Err(error) = written {
        let id = connection.id;
        tracing::warn!(%error, connection = id, "lolasim: the client did not take a sensor map: closed");
        state.drop_connection(connection.id);
        shared.changed.notify_all();
        return Err(SimError::Send(error));
    }
    shared.changed.notify_all();
    Ok(CycleOutcome::Sent(cycle))
}

/// Start the thread that runs a cycle every 12 ms on absolute deadlines.
pub(crate) fn spawn_real_time(shared: Arc<Shared>) -> Result<JoinHandle<()>, SimError> {
    std::thread::Builder::new()
        .name("lolasim-cycle".into())
        .spawn(move || run_real_time(&shared))
        .map_err(SimError::Thread)
}

fn run_real_time(shared: &Shared) {
    ask_priority(shared, "lolasim-cycle", "lolasim cycle");
    let answer_timeout = match shared.options.cadence {
        Cadence::RealTimeWaitingForAnswers { timeout } => Some(timeout),
        Cadence::RealTime | Cadence::Stepped => None,
    };
    let mut deadline = Instant::now() + CYCLE;
    loop {
        if !sleep_until(shared, deadline) {
            return;
        }
        let delay = {
            let mut state = shared.lock();
            let (delay, count) = &mut state.late_maps;
            if *count > 0 {
                *count -= 1;
                let delay = *delay;
                state.stats.delayed_cycles += 1;
                Some(delay)
            } else {
                None
            }
        };
        if let Some(delay) = delay {
            if !sleep_until(shared, deadline + delay) {
                return;
            }
        }
        let outcome = run_cycle(shared, false);
        if let (Ok(CycleOutcome::Sent(cycle)), Some(timeout)) = (outcome, answer_timeout) {
            wait_for_answer(shared, cycle, timeout);
        }
        // Absolute deadlines; after a late cycle, the next follows at once, then 12 ms apart.
        deadline += CYCLE;
        let now = Instant::now();
        if deadline < now {
            deadline = now;
        }
    }
}

/// On the calling thread: `SCHED_FIFO` at `Options::priority`, when one is asked for.
pub(crate) fn ask_priority(shared: &Shared, name: &'static str, role: &'static str) {
    if let Some(priority) = shared.options.priority {
        // A priority stays with the thread; only a CPU kept awake (none here) ends with the grant.
        let _granted = make_realtime(&ThreadSpec {
            name,
            role,
            priority: Some(priority),
            cpu: None,
            keep_cpu_awake: false,
            mlock: false,
        });
    }
}

/// Sleep until `deadline`; false when the simulator stops meanwhile.
fn sleep_until(shared: &Shared, deadline: Instant) -> bool {
    let state = shared.lock();
    let timeout = deadline.saturating_duration_since(Instant::now());
    let (state, _) = shared.wait_for(state, timeout, |state| state.stopping);
    !state.stopping
}

fn wait_for_answer(shared: &Shared, cycle: u64, timeout: Duration) {
    let state = shared.lock();
    drop(shared.wait_for(state, timeout, |state| {
        state.latest.is_none_or(|latest| latest.cycle != cycle || latest.answered)
    }));
}
