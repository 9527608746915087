//! The real-time half of `naobench physics`: a simulator in its 12 ms cadence with the sibling
//! `naobroker` binary as its client, measured as `naobench lola` measures naobroker.

use std::path::Path;

use naobroker_lolasim::{LolaSim, Options, Truth, World};

use super::stepped::unavailable;
use crate::lola::broker::{self, BrokerRun};
use crate::lola::{wait_disconnected, Window, RECORDED_LATENCIES, SIM_PRIORITY};

/// What one simulator saw of naobroker.
pub(super) struct PacedRun {
    pub(super) window: Window,
    /// naobroker's `DCM.stats` at the end.
    pub(super) stats: String,
    /// Where the physical robot ended.
    pub(super) truth: Option<Truth>,
}

/// The kinematic body, or the physical one in `physics`, served every 12 ms to naobroker,
/// measured for `seconds` after its start-up.
pub(super) fn with_broker(scratch: &Path, physics: Option<World>, seconds: f64) -> PacedRun {
    let socket = scratch.join(if physics.is_some() { "paced-physical" } else { "paced-kinematic" });
    let options = Options {
        recorded_latencies: RECORDED_LATENCIES,
        priority: Some(SIM_PRIORITY),
        physics,
        ..Options::at(&socket)
    };
    let sim = LolaSim::start(options).unwrap_or_else(|error| unavailable(&error));
    let BrokerRun { window, stats } = broker::run(&sim, &socket, scratch, seconds);
    wait_disconnected(&sim);
    PacedRun { window, stats, truth: sim.truth().ok() }
}
