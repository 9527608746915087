//! naobroker-rt: the one scaffold of naobroker's real-time threads, the DCM cycle and the
//! motion cycle. A [`ThreadSpec`] says who the thread is and what it asks of the OS
//! (`SCHED_FIFO` priority, a CPU, kept out of idle states or not, locked memory; each
//! refusal said once, the thread runs anyway); a [`Realtime`] holds what it got; a
//! [`Cadence`] says when its [`Cycle`] runs (absolute deadlines, cycles granted
//! by a manual clock, cycle numbers requested by another thread, or the hardware's own
//! cycles); its [`Pace`] counts overruns and skipped cycles; reports leave through
//! preallocated queues ([`report_queue`]) that wake the actor side without blocking (its
//! end, `Wakeups`, comes with the feature `wakeups`: it needs tokio, which the real-time
//! crates themselves do not link).
//!
//! Nothing here allocates, locks or blocks once the thread runs; what the cycle does is up
//! to it, under the same rule.
#![deny(unsafe_code, unreachable_pub)]

mod awake;
mod clock;
mod pace;
mod priority;
mod reports;
mod thread;
#[cfg(feature = "wakeups")]
mod wakeups;

pub use clock::{monotonic_ns, sleep_until};
pub use pace::{Cadence, Pace, HARDWARE_WAIT};
pub use priority::{make_realtime, Realtime, ThreadSpec};
pub use reports::{report_queue, ReportReader, Reporter};
pub use thread::{Cycle, RtThread, Tick};
#[cfg(feature = "wakeups")]
pub use wakeups::Wakeups;
