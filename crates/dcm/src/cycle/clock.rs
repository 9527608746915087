//! The cycle's clocks (real: the monotonic clock and absolute sleeps; manual: `DCM.step`)
//! and the thread's real-time requests (SCHED_FIFO priority, CPU, `mlockall`).

use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};
use serde::Deserialize;
use thread_priority::unix::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadSchedulePolicy,
};
use thread_priority::ThreadPriority;

/// Where the cycle's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// CLOCK_MONOTONIC, absolute deadlines.
    Real,
    /// Cycles run only when `DCM.step(n)` asks: deterministic simulation and tests.
    Manual,
}

pub fn monotonic_ns() -> i64 {
    let now = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC exists");
    now.tv_sec() * 1_000_000_000 + now.tv_nsec()
}

/// Sleep to an absolute CLOCK_MONOTONIC deadline: no drift, whatever a cycle took.
pub fn sleep_until(deadline_ns: i64) {
    let deadline = TimeSpec::new(deadline_ns / 1_000_000_000, deadline_ns % 1_000_000_000);
    while let Err(nix::errno::Errno::EINTR) =
        clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &deadline)
    {}
}

/// Ask for SCHED_FIFO, CPU affinity and locked memory, as configured. Each refusal
/// is said clearly once, before the cycle starts; the cycle runs anyway.
/// Returns whether the thread got its real-time priority.
pub fn make_realtime(priority: u8, cpu: Option<usize>, mlock: bool) -> bool {
    if mlock {
        use nix::sys::mman::{mlockall, MlockAllFlags};
        if let Err(error) = mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE) {
            tracing::warn!(%error, "mlockall refused: memory of the DCM may be paged out");
        }
    }
    if let Some(cpu) = cpu {
        let mut set = nix::sched::CpuSet::new();
        let pinned =
            set.set(cpu).and_then(|_| nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set));
        if let Err(error) = pinned {
            tracing::warn!(cpu, %error, "cannot pin the DCM cycle thread to its CPU");
        }
    }
    if priority == 0 {
        tracing::warn!("DCM real-time priority disabled by config (priority = 0): DCM/Realtime = false");
        return false;
    }
    let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    let result =
        priority.min(99).try_into().map_err(|_| thread_priority::Error::Priority("out of range")).and_then(
            |value| {
                set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Crossplatform(value), fifo)
            },
        );
    match result {
        Ok(()) => {
            tracing::info!(priority, "DCM cycle thread runs SCHED_FIFO");
            true
        }
        Err(error) => {
            tracing::warn!(
                priority,
                ?error,
                "the OS refused SCHED_FIFO for the DCM cycle (run as root or grant CAP_SYS_NICE / rtprio): \
                 the cycle runs with normal priority and DCM/Realtime = false"
            );
            false
        }
    }
}
