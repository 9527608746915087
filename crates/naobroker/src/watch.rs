//! The DCM cycle's trouble counters, read off the real-time thread and logged when they grow.

use std::sync::Arc;
use std::time::Duration;

use naobroker_dcm::cycle::Shared;

/// How often the counters are read: at most one line per counter in this time.
const EVERY: Duration = Duration::from_secs(5);

/// Log a warning whenever the DCM cycle's overruns, refused requests, dropped reports or
/// refused hooks grew since the last look. The cycle thread only counts (it never logs);
/// this task on the broker's thread reads the counters. Runs until the actix system stops.
pub(crate) fn dcm_counters(shared: Arc<Shared>) {
    actix_rt::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut seen = shared.stats.snapshot();
        loop {
            ticks.tick().await;
            let now = shared.stats.snapshot();
            let grown = |name: &str, before: u64, after: u64| {
                if after > before {
                    tracing::warn!(
                        counter = name,
                        new = after - before,
                        total = after,
                        seconds = EVERY.as_secs(),
                        "DCM cycle trouble"
                    );
                }
            };
            grown("overruns", seen.overruns, now.overruns);
            grown("requests_refused", seen.requests_refused, now.requests_refused);
            grown("reports_dropped", seen.reports_dropped, now.reports_dropped);
            grown("hooks_refused", seen.hooks_refused, now.hooks_refused);
            seen = now;
        }
    });
}
