//! `[dcm]` in `broker.toml`: the cycle's period, priority and clock, the robot description,
//! the hardware backend and its own section; every default runs unprivileged. Kept by the
//! broker, which picks the backend: the DCM knows none.

use std::path::PathBuf;

use naobroker_backend_lola::LolaConfig;
use naobroker_backend_serial::SerialConfig;
use naobroker_dcm::cycle::{monotonic_ns, ClockMode, CycleConfig};
use naobroker_dcm::time::DcmTime;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sim,
    Serial,
    /// A NAO V6 through LoLA (`[dcm.lola]`): the robot clocks the DCM.
    Lola,
}

/// A `[dcm]` section that cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DcmConfigError {
    #[error(
        "[dcm] clock = \"manual\" cannot drive backend = \"lola\": LoLA clocks the DCM (one cycle per \
         sensor map, every 12 ms) and DCM.step cannot make the robot send one; use clock = \"real\""
    )]
    ManualClockWithLola,
    #[error("[dcm.lola] {key} = {value}: {expected}")]
    Lola { key: &'static str, value: u32, expected: &'static str },
}

/// `[dcm]` in `broker.toml`. Every field has a default that runs unprivileged.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DcmConfig {
    /// Cycle period; 10 000 µs as on NAO, 1 000 works too. The `sim` and `serial` backends
    /// only: under `lola` the cycle is LoLA's, 12 000 µs.
    pub period_us: u32,
    /// SCHED_FIFO priority of the cycle thread; 0 disables the request.
    pub priority: u8,
    /// CPU to pin the cycle thread to.
    pub cpu: Option<usize>,
    /// Keep `cpu` out of idle states while the broker runs: a cycle after the 10 ms sleep
    /// finds the CPU running, with its caches, for the CPU's idle power (docs/realtime.md).
    pub keep_cpu_awake: bool,
    /// Lock the process's memory (`mlockall`).
    pub mlock: bool,
    pub clock: ClockMode,
    /// DCM time of the first cycle; by default milliseconds since boot, as NAOqi.
    pub start_time_ms: Option<DcmTime>,
    /// Timed commands one actuator holds at most.
    pub buffer_capacity: usize,
    /// Robot description; the shipped NAO V6 when absent.
    pub robot: Option<PathBuf>,
    pub backend: Backend,
    /// Raise `DCM/PreProcess` and `DCM/PostProcess` every this many cycles.
    pub event_decimation: u32,
    /// A real-time hook taking longer than this is reported.
    pub hook_budget_us: u32,
    /// The `serial` backend's port.
    pub serial: SerialConfig,
    /// The `lola` backend's socket and link policy.
    pub lola: LolaConfig,
}

impl Default for DcmConfig {
    fn default() -> Self {
        let cycle = CycleConfig::default();
        DcmConfig {
            period_us: cycle.period_us,
            priority: cycle.priority,
            cpu: None,
            keep_cpu_awake: false,
            mlock: false,
            clock: ClockMode::Real,
            start_time_ms: None,
            buffer_capacity: cycle.buffer_capacity,
            robot: None,
            backend: Backend::Sim,
            event_decimation: 1,
            hook_budget_us: cycle.hook_budget_us,
            serial: SerialConfig::default(),
            lola: LolaConfig::default(),
        }
    }
}

impl DcmConfig {
    /// Refuse what cannot run, with what to change.
    pub fn check(&self) -> Result<(), DcmConfigError> {
        if self.backend != Backend::Lola {
            return Ok(());
        }
        if self.clock == ClockMode::Manual {
            return Err(DcmConfigError::ManualClockWithLola);
        }
        let lola = &self.lola;
        let within = |key, value: u32, range: std::ops::RangeInclusive<u32>, expected| {
            if range.contains(&value) {
                Ok(())
            } else {
                Err(DcmConfigError::Lola { key, value, expected })
            }
        };
        within("relax_ms", lola.relax_ms, 0..=60_000, "0 to 60 000 ms")?;
        within("stall_ms", lola.stall_ms, 24..=3_600_000, "24 ms (two LoLA cycles) to an hour")?;
        within("reconnect_ms", lola.reconnect_ms, 10..=60_000, "10 to 60 000 ms")
    }

    /// The cycle's settings, with a request channel for each of `producers`.
    pub fn cycle_config(&self, producers: &'static [&'static str]) -> CycleConfig {
        let start_time_ms = self.start_time_ms.unwrap_or_else(|| (monotonic_ns() / 1_000_000) as DcmTime);
        CycleConfig {
            period_us: self.period_us,
            priority: self.priority,
            cpu: self.cpu,
            keep_cpu_awake: self.keep_cpu_awake,
            mlock: self.mlock,
            clock: self.clock,
            start_time_ms,
            buffer_capacity: self.buffer_capacity,
            hook_budget_us: self.hook_budget_us,
            queue_capacity: 1024,
            producers,
        }
    }
}
