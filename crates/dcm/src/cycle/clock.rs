//! The cycle's clocks: real (the monotonic clock and absolute deadlines), manual
//! (`DCM.step`) or the hardware's (a robot that clocks the DCM: LoLA). The scaffold
//! (`naobroker-rt`) keeps each.

use serde::Deserialize;

/// Where the cycle's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// CLOCK_MONOTONIC, absolute deadlines.
    Real,
    /// Cycles run only when `DCM.step(n)` asks: deterministic simulation and tests.
    Manual,
    /// One cycle per cycle of the hardware (`backend = "lola"`: per sensor map), DCM time
    /// advancing by the hardware's period per cycle. Chosen by the backend, never written
    /// in a configuration.
    #[serde(skip)]
    Hardware,
}
