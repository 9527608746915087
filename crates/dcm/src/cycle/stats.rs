//! The cycle's counters, written by the cycle thread with relaxed atomics and read, as a
//! [`StatsSnapshot`], by `DCM.stats` and in-process users.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use super::hooks::MAX_HOOKS;
use crate::time::DcmTime;

/// Upper bounds (µs) of the wake-up lateness histogram's buckets; the last is open.
pub const LATENESS_BUCKETS_US: [i64; 10] = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/// What the cycle thread reports after each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub cycle: u64,
    pub time: DcmTime,
    /// How late the thread woke after its deadline, in ns (the statistics keep µs; a
    /// benchmark's medians want better than whole µs).
    pub lateness_ns: i64,
    /// Time from wake-up to the end of the cycle, hooks included, in ns.
    pub compute_ns: i64,
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
        let lateness_us = report.lateness_ns / 1000;
        let compute_us = (report.compute_ns / 1000).clamp(0, i64::from(u32::MAX)) as u32;
        let bucket = LATENESS_BUCKETS_US
            .iter()
            .position(|&limit| lateness_us < limit)
            .unwrap_or(LATENESS_BUCKETS_US.len());
        self.lateness_histogram[bucket].fetch_add(1, Ordering::Relaxed);
        self.lateness_max_us.fetch_max(lateness_us, Ordering::Relaxed);
        self.compute_last_us.store(compute_us, Ordering::Relaxed);
        self.compute_max_us.fetch_max(compute_us, Ordering::Relaxed);
    }

    /// Every counter now, and the hooks connected (their ids; `DCM.stats` names them).
    pub fn snapshot(&self) -> StatsSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let hooks = self
            .hooks
            .iter()
            .filter(|hook| hook.id() != 0)
            .map(|hook| HookSnapshot {
                id: hook.id(),
                calls: load(&hook.calls),
                over_budget: load(&hook.over_budget),
                last_us: hook.last_ns.load(Ordering::Relaxed) / 1000,
                max_us: hook.max_ns.load(Ordering::Relaxed) / 1000,
            })
            .collect();
        StatsSnapshot {
            cycles: load(&self.cycles),
            overruns: load(&self.overruns),
            requests_refused: load(&self.refused),
            reports_dropped: load(&self.reports_dropped),
            hooks_refused: load(&self.hooks_refused),
            compute_last_us: self.compute_last_us.load(Ordering::Relaxed),
            compute_max_us: self.compute_max_us.load(Ordering::Relaxed),
            lateness_max_us: self.lateness_max_us.load(Ordering::Relaxed),
            lateness_histogram: std::array::from_fn(|bucket| load(&self.lateness_histogram[bucket])),
            hooks,
        }
    }
}

/// The cycle's counters at one moment ([`CycleStats::snapshot`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsSnapshot {
    pub cycles: u64,
    pub overruns: u64,
    /// Requests the cycle itself refused (a producer's check lets none through).
    pub requests_refused: u64,
    pub reports_dropped: u64,
    pub hooks_refused: u64,
    pub compute_last_us: u32,
    pub compute_max_us: u32,
    pub lateness_max_us: i64,
    /// Wake-ups per lateness bucket: below each of [`LATENESS_BUCKETS_US`], then the rest.
    pub lateness_histogram: [u64; LATENESS_BUCKETS_US.len() + 1],
    pub hooks: Vec<HookSnapshot>,
}

/// One connected hook's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSnapshot {
    pub id: u32,
    pub calls: u64,
    /// Calls that took longer than the hook budget.
    pub over_budget: u64,
    pub last_us: i64,
    pub max_us: i64,
}
