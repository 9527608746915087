//! The cycle's clocks: real (the monotonic clock and absolute deadlines) or manual
//! (`DCM.step`). The scaffold (`naobroker-rt`) keeps either.

use serde::Deserialize;

/// Where the cycle's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// CLOCK_MONOTONIC, absolute deadlines.
    Real,
    /// Cycles run only when `DCM.step(n)` asks: deterministic simulation and tests.
    Manual,
}
