//! The clock real-time threads keep time by (CLOCK_MONOTONIC), and sleeping to an absolute
//! deadline on it.

use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

/// Nanoseconds on CLOCK_MONOTONIC: never jumps, whatever the wall clock does.
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
