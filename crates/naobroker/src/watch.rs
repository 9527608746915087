//! The DCM cycle's and the motion thread's trouble counters, read off the real-time threads and
//! logged when they grow.

use std::sync::Arc;
use std::time::Duration;

use naobroker_dcm::cycle::Shared;
use naobroker_motion::runner::MotionShared;

/// How often the counters are read: at most one line per counter in this time.
const EVERY: Duration = Duration::from_secs(5);

/// Read `counters` (named values that only grow) every [`EVERY`] on the broker's thread and
/// log each one that grew, as `what`, at `warn` unless `level_of` says otherwise. The real-time
/// threads only count (they never log). Runs until the actix system stops.
fn watch<const N: usize>(
    what: &'static str,
    counters: impl Fn() -> [(&'static str, u64); N] + 'static,
    level_of: fn(&str) -> tracing::Level,
) {
    actix_rt::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut seen = counters();
        loop {
            ticks.tick().await;
            let now = counters();
            for ((counter, before), (_, after)) in seen.iter().zip(now.iter()) {
                if after > before {
                    let (new, total, seconds) = (after - before, *after, EVERY.as_secs());
                    if level_of(counter) == tracing::Level::INFO {
                        tracing::info!(counter, new, total, seconds, "{what}");
                    } else {
                        tracing::warn!(counter, new, total, seconds, "{what}");
                    }
                }
            }
            seen = now;
        }
    });
}

/// Warn whenever the DCM cycle's overruns, refused requests, dropped reports or refused hooks
/// grew since the last look.
pub(crate) fn dcm_counters(shared: Arc<Shared>) {
    let counters = move || {
        let stats = shared.stats.snapshot();
        [
            ("overruns", stats.overruns),
            ("requests_refused", stats.requests_refused),
            ("reports_dropped", stats.reports_dropped),
            ("hooks_refused", stats.hooks_refused),
        ]
    };
    watch("DCM cycle trouble", counters, |_| tracing::Level::WARN);
}

/// Warn whenever ALMotion's thread skipped cycles, had requests refused by the DCM or dropped
/// reports; collision protection holding an arm is what it is for: `info`.
pub(crate) fn motion_counters(shared: Arc<MotionShared>) {
    let level_of = |counter: &str| match counter {
        "collision_stops" => tracing::Level::INFO,
        _ => tracing::Level::WARN,
    };
    watch("ALMotion trouble", move || shared.trouble(), level_of);
}
