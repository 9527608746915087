//! The DCM's real-time cycle: a dedicated OS thread, outside the actor system, on the
//! real-time scaffold (`naobroker-rt`: priority, CPU, deadlines or `DCM.step`, overruns).
//!
//! Each cycle: read sensors → preProcess hooks → apply queued requests → interpolate
//! every actuator → write hardware → publish to ALMemory's slots → postProcess hooks →
//! signal the actor side. In steady state the thread does not allocate, lock, log or
//! block: requests arrive through preallocated SPSC queues (`rtrb`), results leave
//! through atomics and a queue, and the actor side is woken by a non-blocking
//! datagram.

mod admission;
mod channel;
mod channel_error;
mod clock;
mod hooks;
mod layout;
mod queued;
mod run;
mod shared;
mod stats;

pub use channel::{RequestChannel, RequestChannels, UnknownProducer};
pub use channel_error::ChannelError;
pub use clock::ClockMode;
pub use hooks::{CycleContext, Hook, HookCommands, Phase, MAX_HOOKS};
pub use layout::DcmSlots;
pub use naobroker_rt::monotonic_ns;
pub use shared::Shared;
pub use stats::{CycleReport, CycleStats, HookSnapshot, StatsSnapshot, LATENESS_BUCKETS_US};

use std::os::unix::net::UnixDatagram;
use std::sync::Arc;

use naobroker_hardware::Hardware;
use naobroker_robot::device::{Conversion, DeviceIndex, DeviceModel};
use naobroker_rt::{report_queue, Cadence, ReportReader, RtThread, ThreadSpec};
use naobroker_rtslots::RtSlots;

use crate::core::Request;
use crate::time::DcmTime;
use run::Cycle;

/// `[dcm]` settings the cycle thread uses.
#[derive(Debug, Clone)]
pub struct CycleConfig {
    pub period_us: u32,
    /// SCHED_FIFO priority (1–99); 0 keeps the normal scheduler.
    pub priority: u8,
    pub cpu: Option<usize>,
    /// Keep `cpu` out of idle states while the cycle runs (`naobroker_rt::ThreadSpec`).
    pub keep_cpu_awake: bool,
    pub mlock: bool,
    pub clock: ClockMode,
    pub start_time_ms: DcmTime,
    pub buffer_capacity: usize,
    /// A hook taking longer than this is reported.
    pub hook_budget_us: u32,
    /// Messages each request queue holds.
    pub queue_capacity: usize,
    /// The producers, by name: each gets a request channel of its own
    /// ([`StartedCycle::channels`]), which one thread at a time may use.
    pub producers: &'static [&'static str],
}

impl Default for CycleConfig {
    fn default() -> Self {
        CycleConfig {
            period_us: 10_000,
            priority: 80,
            cpu: None,
            keep_cpu_awake: false,
            mlock: false,
            clock: ClockMode::Real,
            start_time_ms: 0,
            buffer_capacity: 4096,
            hook_budget_us: 1000,
            queue_capacity: 1024,
            producers: &["DCM"],
        }
    }
}

/// What crosses into the cycle thread.
pub(crate) enum ToCycle {
    Apply(Box<Request>),
    /// `value` is what the sensor shall read, converted to the hardware's reading here.
    ForceSensor {
        sensor: usize,
        value: Option<f64>,
    },
    /// New gains and offsets (calibration, preferences), used from the next cycle on.
    Conversions(Box<[(DeviceIndex, Conversion)]>),
    AddHook(Box<Hook>),
    RemoveHook(u32),
    Reset,
}

/// What the cycle thread hands back so that it is freed elsewhere: never read,
/// only dropped by the producer.
#[allow(dead_code)]
pub(crate) enum Returned {
    Request(Box<Request>),
    Hook(Box<Hook>),
    Conversions(Box<[(DeviceIndex, Conversion)]>),
}

/// What [`CycleThread::start`] gives: the thread, the producers' request channels, and
/// the actor side's ends of its reports (a queue, and a socket readable after each cycle).
pub struct StartedCycle {
    pub thread: CycleThread,
    pub channels: RequestChannels,
    pub reports: rtrb::Consumer<CycleReport>,
    pub wake: UnixDatagram,
}

/// The running cycle thread; dropped, it stops and is joined.
pub struct CycleThread {
    shared: Arc<Shared>,
    _thread: RtThread,
}

impl CycleThread {
    /// Start the thread, with a request channel for each producer the config names.
    pub fn start(
        model: Arc<DeviceModel>,
        hardware: Box<dyn Hardware>,
        slots: Arc<RtSlots>,
        dcm_slots: DcmSlots,
        config: &CycleConfig,
    ) -> std::io::Result<StartedCycle> {
        let config = &clocked_by(hardware.as_ref(), config)?;
        let (actuators, sensors) = (model.actuators.len(), model.sensors.len());
        let link = hardware.link_health();
        let shared = Arc::new(Shared::new(slots, dcm_slots, actuators, sensors, config, link));
        let mut channels = Vec::with_capacity(config.producers.len());
        let mut inbound = Vec::with_capacity(config.producers.len());
        for (producer, &name) in config.producers.iter().enumerate() {
            let (channel, from_channel) =
                RequestChannel::new(producer, config.queue_capacity, &shared, &model);
            channels.push((name, channel));
            inbound.push(from_channel);
        }
        let (reports, ReportReader { queue: report_consumer, wake }) = report_queue(8192)?;
        let cycle = Cycle::new(model, hardware, Arc::clone(&shared), inbound, reports, config);
        let priority = match config.priority {
            0 => {
                tracing::warn!(
                    "DCM real-time priority disabled by config (priority = 0): DCM/Realtime = false"
                );
                None
            }
            priority => Some(priority),
        };
        let spec = ThreadSpec {
            name: "dcm-cycle",
            role: "DCM cycle",
            priority,
            cpu: config.cpu,
            keep_cpu_awake: config.keep_cpu_awake,
            mlock: config.mlock,
        };
        let cadence = match config.clock {
            ClockMode::Real => {
                Cadence::Periodic { start_ns: shared.start_ns, period_ns: i64::from(shared.period_us) * 1000 }
            }
            ClockMode::Manual => Cadence::Granted,
            ClockMode::Hardware => Cadence::Hardware,
        };
        let thread = RtThread::spawn(spec, cadence, Arc::clone(&shared.pace), cycle)?;
        Ok(StartedCycle {
            thread: CycleThread { shared, _thread: thread },
            channels: RequestChannels::new(channels),
            reports: report_consumer,
            wake,
        })
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// `config` as the hardware has it: a hardware that clocks the DCM sets the clock and the
/// period (a manual clock cannot make it cycle: refused).
fn clocked_by(hardware: &dyn Hardware, config: &CycleConfig) -> std::io::Result<CycleConfig> {
    let Some(period_us) = hardware.clock_period_us() else { return Ok(config.clone()) };
    if config.clock == ClockMode::Manual {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the manual clock cannot drive a hardware that clocks the DCM itself (DCM.step cannot make \
             the robot cycle)",
        ));
    }
    Ok(CycleConfig { clock: ClockMode::Hardware, period_us, ..config.clone() })
}
