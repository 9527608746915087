use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use naobroker_framework::Value;

use super::hooks::MAX_HOOKS;
use crate::time::DcmTime;

/// Upper bounds (µs) of the wake-up lateness histogram's buckets; the last is open.
pub const LATENESS_BUCKETS_US: [i64; 10] = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/// What the cycle thread reports after each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub cycle: u64,
    pub time: DcmTime,
    /// How late the thread woke after its deadline.
    pub lateness_us: i64,
    /// Time from wake-up to the end of the cycle, hooks included.
    pub compute_us: u32,
}

#[derive(Default)]
pub struct HookStats {
    id: AtomicU32,
    calls: AtomicU64,
    over_budget: AtomicU64,
    last_ns: AtomicI64,
    max_ns: AtomicI64,
}

impl HookStats {
    pub(crate) fn attach(&self, id: u32) {
        self.calls.store(0, Ordering::Relaxed);
        self.over_budget.store(0, Ordering::Relaxed);
        self.max_ns.store(0, Ordering::Relaxed);
        self.id.store(id, Ordering::Release);
    }

    pub(crate) fn detach(&self, id: u32) {
        let _ = self.id.compare_exchange(id, 0, Ordering::AcqRel, Ordering::Relaxed);
    }

    pub fn id(&self) -> u32 {
        self.id.load(Ordering::Acquire)
    }

    pub(crate) fn record(&self, spent_ns: i64, over_budget: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.last_ns.store(spent_ns, Ordering::Relaxed);
        self.max_ns.fetch_max(spent_ns, Ordering::Relaxed);
        if over_budget {
            self.over_budget.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn over_budget(&self) -> u64 {
        self.over_budget.load(Ordering::Relaxed)
    }
}

/// Cycle counters, written by the cycle thread, read by `DCM.stats`.
#[derive(Default)]
pub struct CycleStats {
    pub cycles: AtomicU64,
    pub overruns: AtomicU64,
    pub refused: AtomicU64,
    pub reports_dropped: AtomicU64,
    pub hooks_refused: AtomicU64,
    pub leaked: AtomicU64,
    lateness_histogram: [AtomicU64; LATENESS_BUCKETS_US.len() + 1],
    lateness_max_us: AtomicI64,
    compute_last_us: AtomicU32,
    compute_max_us: AtomicU32,
    pub hooks: [HookStats; MAX_HOOKS],
}

impl CycleStats {
    pub(crate) fn record(&self, report: &CycleReport) {
        let bucket = LATENESS_BUCKETS_US
            .iter()
            .position(|&limit| report.lateness_us < limit)
            .unwrap_or(LATENESS_BUCKETS_US.len());
        self.lateness_histogram[bucket].fetch_add(1, Ordering::Relaxed);
        self.lateness_max_us.fetch_max(report.lateness_us, Ordering::Relaxed);
        self.compute_last_us.store(report.compute_us, Ordering::Relaxed);
        self.compute_max_us.fetch_max(report.compute_us, Ordering::Relaxed);
    }

    /// Everything as one map, for `DCM.stats` and `naocli call DCM.stats`; hooks are
    /// named from `hook_names` (`(id, name)`).
    pub fn to_value(&self, hook_names: &[(u32, String)]) -> Value {
        let load = |counter: &AtomicU64| Value::from(counter.load(Ordering::Relaxed));
        let last = LATENESS_BUCKETS_US[LATENESS_BUCKETS_US.len() - 1];
        let histogram = std::iter::once(0)
            .chain(LATENESS_BUCKETS_US)
            .zip(LATENESS_BUCKETS_US)
            .map(|(lower, upper)| format!("{lower}-{upper}us"))
            .chain(std::iter::once(format!(">={last}us")))
            .zip(&self.lateness_histogram)
            .map(|(label, count)| (Value::from(label), load(count)))
            .collect();
        let hooks = self
            .hooks
            .iter()
            .filter(|h| h.id() != 0)
            .map(|h| {
                let name =
                    hook_names.iter().find(|(id, _)| *id == h.id()).map_or("", |(_, name)| name.as_str());
                Value::Map(vec![
                    ("id".into(), h.id().into()),
                    ("name".into(), name.into()),
                    ("calls".into(), load(&h.calls)),
                    ("over_budget".into(), load(&h.over_budget)),
                    ("last_us".into(), (h.last_ns.load(Ordering::Relaxed) / 1000).into()),
                    ("max_us".into(), (h.max_ns.load(Ordering::Relaxed) / 1000).into()),
                ])
            })
            .collect();
        Value::Map(vec![
            ("cycles".into(), load(&self.cycles)),
            ("overruns".into(), load(&self.overruns)),
            ("requests_refused".into(), load(&self.refused)),
            ("reports_dropped".into(), load(&self.reports_dropped)),
            ("hooks_refused".into(), load(&self.hooks_refused)),
            ("compute_last_us".into(), self.compute_last_us.load(Ordering::Relaxed).into()),
            ("compute_max_us".into(), self.compute_max_us.load(Ordering::Relaxed).into()),
            ("lateness_max_us".into(), self.lateness_max_us.load(Ordering::Relaxed).into()),
            ("lateness_histogram".into(), Value::Map(histogram)),
            ("hooks".into(), Value::Array(hooks)),
        ])
    }
}
