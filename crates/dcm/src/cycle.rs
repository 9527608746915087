//! The DCM's real-time cycle: a dedicated OS thread, outside the actor system.
//!
//! Each cycle: read sensors → preProcess hooks → apply queued requests → interpolate
//! every actuator → write hardware → publish to ALMemory's slots → postProcess hooks →
//! signal the actor side. In steady state the thread does not allocate, lock, log or
//! block: requests arrive through preallocated SPSC queues (`rtrb`), results leave
//! through atomics and a queue, and the actor side is woken by a non-blocking
//! datagram.

mod admission;
mod channel_error;
mod clock;
mod hooks;
mod layout;
mod queued;
mod stats;
mod wakeups;

pub use channel_error::ChannelError;
pub use clock::{make_realtime, monotonic_ns, sleep_until, ClockMode};
pub use hooks::{CycleContext, Hook, HookCommands, Phase, MAX_HOOKS};
pub use layout::DcmSlots;
pub use stats::{CycleReport, CycleStats, HookSnapshot, StatsSnapshot, LATENESS_BUCKETS_US};
pub use wakeups::Wakeups;

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle, Thread};

use naobroker_rtslots::{timestamp_now, RtSlots};

use crate::core::{DcmCore, LengthChange, Overflow, Request, TimedCommand, UpdateType};
use crate::device::{Conversion, DeviceIndex, DeviceModel};
use crate::hardware::Hardware;
use crate::time::DcmTime;

/// `[dcm]` settings the cycle thread uses.
#[derive(Debug, Clone)]
pub struct CycleConfig {
    pub period_us: u32,
    /// SCHED_FIFO priority (1–99); 0 keeps the normal scheduler.
    pub priority: u8,
    pub cpu: Option<usize>,
    pub mlock: bool,
    pub clock: ClockMode,
    pub start_time_ms: DcmTime,
    pub buffer_capacity: usize,
    /// A hook taking longer than this is reported.
    pub hook_budget_us: u32,
    /// Messages each request queue holds.
    pub queue_capacity: usize,
    /// Request queues to create (one per producing thread).
    pub producers: usize,
}

impl Default for CycleConfig {
    fn default() -> Self {
        CycleConfig {
            period_us: 10_000,
            priority: 80,
            cpu: None,
            mlock: false,
            clock: ClockMode::Real,
            start_time_ms: 0,
            buffer_capacity: 4096,
            hook_budget_us: 1000,
            queue_capacity: 1024,
            producers: 2,
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

/// State shared between the cycle thread and everyone else, all atomics.
pub struct Shared {
    pub slots: Arc<RtSlots>,
    pub dcm_slots: DcmSlots,
    pub stats: CycleStats,
    buffer_len: Box<[AtomicU32]>,
    /// Per producer and actuator (`producer * actuators + actuator`): the commands of
    /// that producer's requests not applied yet, whatever their update type.
    queued: Box<[AtomicU32]>,
    /// Per producer: how many of its requests the cycle applied.
    applied: Box<[AtomicU64]>,
    /// Per sensor: what the hardware read at the last cycle, before its conversion
    /// (`f64` bits).
    readings: Box<[AtomicU64]>,
    pub capacity: usize,
    pub period_us: u32,
    pub clock: ClockMode,
    start_time_ms: DcmTime,
    start_ns: i64,
    /// Manual clock: cycles asked for so far.
    granted: AtomicU64,
    now_ms: AtomicI32,
    stop: AtomicBool,
    thread: OnceLock<Thread>,
}

impl Shared {
    /// DCM time now: with the real clock, derived from the monotonic clock; with the
    /// manual clock, the time of the last cycle.
    pub fn now(&self) -> DcmTime {
        match self.clock {
            ClockMode::Manual => self.now_ms.load(Ordering::Acquire),
            ClockMode::Real => {
                let elapsed_ms = (monotonic_ns() - self.start_ns) / 1_000_000;
                self.start_time_ms.wrapping_add(elapsed_ms as i32)
            }
        }
    }

    /// The time of cycle number `cycle` (cycle 0 is the start).
    fn cycle_time(&self, cycle: u64) -> DcmTime {
        let elapsed_ms = cycle * u64::from(self.period_us) / 1000;
        self.start_time_ms.wrapping_add(elapsed_ms as i32)
    }

    pub fn cycles(&self) -> u64 {
        self.stats.cycles.load(Ordering::Acquire)
    }

    /// Manual clock: run `n` more cycles. Returns the cycle number to wait for.
    pub fn grant(&self, n: u64) -> u64 {
        let target = self.granted.fetch_add(n, Ordering::AcqRel) + n;
        self.wake();
        target
    }

    fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }

    fn queued_slot(&self, producer: usize, actuator: usize) -> &AtomicU32 {
        &self.queued[producer * self.buffer_len.len() + actuator]
    }

    /// Commands for `actuator` that producers other than `producer` queued.
    fn queued_by_others(&self, producer: usize, actuator: usize) -> usize {
        (0..self.applied.len())
            .filter(|&other| other != producer)
            .map(|other| self.queued_slot(other, actuator).load(Ordering::SeqCst) as usize)
            .sum()
    }

    pub fn buffer_len(&self, actuator: usize) -> usize {
        self.buffer_len[actuator].load(Ordering::Acquire) as usize
    }

    /// What the hardware read for `sensor` at the last cycle, before its conversion: with
    /// the conversion in effect, the sensor's value whether or not the cycle already took
    /// a new one.
    pub fn sensor_reading(&self, sensor: usize) -> f64 {
        f64::from_bits(self.readings[sensor].load(Ordering::Acquire))
    }
}

/// One producer's queue into the cycle thread. Owned by one thread at a time.
pub struct RequestChannel {
    producer: usize,
    to_cycle: rtrb::Producer<ToCycle>,
    returned: rtrb::Consumer<Returned>,
    /// This producer's requests the cycle has not applied yet.
    queued: queued::Queued,
    /// Per-actuator counts for checking a request, allocated once.
    admission: admission::Admission,
    /// A request's length changes while it is sent, allocated once.
    changes: Vec<(usize, LengthChange)>,
    /// Requests the cycle gave back, emptied, for [`RequestChannel::reusable_request`]: at
    /// most as many as [`RequestChannel::keep_requests`] asked for; the others are freed.
    /// Boxed on purpose: the boxes travel to the cycle and back, never reallocated.
    #[allow(clippy::vec_box)]
    spare_requests: Vec<Box<Request>>,
    shared: Arc<Shared>,
    model: Arc<DeviceModel>,
    next_hook_id: u32,
    /// Names of the hooks added through this channel, by id, for `DCM.stats`.
    hook_names: Vec<(u32, String)>,
}

impl RequestChannel {
    /// Take back what the cycle returned: requests to reuse while there is room for them,
    /// the rest freed here.
    fn take_returned(&mut self) {
        while let Ok(returned) = self.returned.pop() {
            match returned {
                Returned::Request(mut request)
                    if self.spare_requests.len() < self.spare_requests.capacity() =>
                {
                    request.clear();
                    self.spare_requests.push(request);
                }
                _ => {}
            }
        }
    }

    /// Keep up to `count` of the requests the cycle gives back for
    /// [`RequestChannel::reusable_request`], and make them now, each with room for `groups`
    /// one-command groups: a producer sending one such request per cycle (the motion thread)
    /// then allocates nothing while the cycle keeps up.
    pub fn keep_requests(&mut self, count: usize, groups: usize) {
        self.spare_requests = Vec::with_capacity(count);
        self.spare_requests.extend((0..count).map(|_| Box::new(Request::with_capacity(groups))));
    }

    /// An empty request to fill and send: one the cycle gave back when there is one
    /// ([`RequestChannel::keep_requests`]), a new one otherwise.
    pub fn reusable_request(&mut self) -> Box<Request> {
        self.take_returned();
        self.spare_requests.pop().unwrap_or_default()
    }

    fn push(&mut self, message: ToCycle) -> Result<(), ChannelError> {
        // Taking back what the cycle returned first keeps queue + returns within capacity,
        // so the cycle thread can always hand its boxes back.
        self.take_returned();
        self.to_cycle.push(message).map_err(|_| ChannelError::QueueFull)?;
        if self.shared.clock == ClockMode::Manual {
            self.shared.wake();
        }
        Ok(())
    }

    /// Queue a validated request; refused whole when a buffer could overflow at any step
    /// of applying it. The bound counts the buffer as last published, this producer's
    /// queued requests in order (a queued `ClearAll` empties it), the request's own
    /// groups in order (its `ClearAll` counts only what it brings), and other producers'
    /// queued commands as if they came after: never fewer than the cycle will hold.
    /// Accepted, it allocates nothing (its length changes go into storage reserved at
    /// start); refused, the request is freed and the error says why.
    pub fn send(&mut self, request: impl Into<Box<Request>>) -> Result<(), ChannelError> {
        let request = request.into();
        let actuators = self.model.actuators.len();
        if let Some(group) = request.groups().iter().find(|group| group.actuator >= actuators) {
            return Err(ChannelError::NoActuator { actuator: group.actuator, actuators });
        }
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        changes.extend(
            request
                .groups()
                .iter()
                .map(|group| (group.actuator, LengthChange::of(group.update, group.commands.len()))),
        );
        // Reserved before checking (sequentially consistent): of two producers checking at
        // once, at least one sees the other's commands.
        self.reserve(&changes, true);
        let checked = self.check(&changes).and_then(|()| self.push(ToCycle::Apply(request)));
        match checked {
            Ok(()) => self.queued.push(&changes),
            Err(_) => self.reserve(&changes, false),
        }
        self.changes = changes;
        checked
    }

    /// Add (or take back) this producer's queued counts for other producers to see.
    fn reserve(&self, changes: &[(usize, LengthChange)], add: bool) {
        for &(actuator, change) in changes {
            let slot = self.shared.queued_slot(self.producer, actuator);
            let count = change.count() as u32;
            if add {
                slot.fetch_add(count, Ordering::SeqCst);
            } else {
                slot.fetch_sub(count, Ordering::SeqCst);
            }
        }
    }

    fn check(&mut self, changes: &[(usize, LengthChange)]) -> Result<(), ChannelError> {
        self.queued.forget_applied(self.shared.applied[self.producer].load(Ordering::SeqCst));
        self.admission.check(&self.shared, self.producer, &self.queued, changes).map_err(|refusal| {
            ChannelError::Overflow(Overflow {
                actuator: self.model.actuators[refusal.actuator].full_name(),
                would_hold: refusal.would_hold,
                capacity: self.shared.capacity,
            })
        })
    }

    pub fn force_sensor(&mut self, sensor: usize, value: Option<f64>) -> Result<(), ChannelError> {
        let sensors = self.model.sensors.len();
        if sensor >= sensors {
            return Err(ChannelError::NoSensor { sensor, sensors });
        }
        self.push(ToCycle::ForceSensor { sensor, value })
    }

    /// Change devices' gains and offsets in the cycle: ALMemory's `.../Gain`, `.../Offset`
    /// and a sensor's `.../Value` change together when the cycle takes them, at its next
    /// cycle at the latest.
    pub fn set_conversions(
        &mut self,
        conversions: Vec<(DeviceIndex, Conversion)>,
    ) -> Result<(), ChannelError> {
        let (actuators, sensors) = (self.model.actuators.len(), self.model.sensors.len());
        let unknown = conversions.iter().find(|(device, _)| match *device {
            DeviceIndex::Actuator(index) => index >= actuators,
            DeviceIndex::Sensor(index) => index >= sensors,
        });
        if let Some(&(device, _)) = unknown {
            return Err(ChannelError::NoDevice(device));
        }
        self.push(ToCycle::Conversions(conversions.into_boxed_slice()))
    }

    pub fn reset(&mut self) -> Result<(), ChannelError> {
        self.push(ToCycle::Reset)
    }

    /// Run `callback` on the cycle thread at every cycle. Returns the hook's id.
    pub fn add_hook(
        &mut self,
        phase: Phase,
        name: &str,
        callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>,
    ) -> Result<u32, ChannelError> {
        self.next_hook_id += 1;
        let id = self.next_hook_id;
        self.push(ToCycle::AddHook(Box::new(Hook::new(id, phase, callback))))?;
        self.hook_names.push((id, name.to_owned()));
        Ok(id)
    }

    pub fn remove_hook(&mut self, id: u32) -> Result<(), ChannelError> {
        self.push(ToCycle::RemoveHook(id))?;
        self.hook_names.retain(|(hook, _)| *hook != id);
        Ok(())
    }

    /// `(id, name)` of the hooks added through this channel and still connected.
    pub fn hook_names(&self) -> &[(u32, String)] {
        &self.hook_names
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub fn model(&self) -> &Arc<DeviceModel> {
        &self.model
    }
}

/// The running cycle thread.
pub struct CycleThread {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl CycleThread {
    /// Start the thread. Returns it, one request channel per producer, the consumer of
    /// cycle reports and the socket that becomes readable after each cycle.
    pub fn start(
        model: Arc<DeviceModel>,
        hardware: Box<dyn Hardware>,
        slots: Arc<RtSlots>,
        dcm_slots: DcmSlots,
        config: &CycleConfig,
    ) -> std::io::Result<(CycleThread, Vec<RequestChannel>, rtrb::Consumer<CycleReport>, UnixDatagram)> {
        let actuators = model.actuators.len();
        let shared = Arc::new(Shared {
            slots,
            dcm_slots,
            stats: CycleStats::default(),
            buffer_len: (0..actuators).map(|_| AtomicU32::new(0)).collect(),
            queued: (0..actuators * config.producers).map(|_| AtomicU32::new(0)).collect(),
            applied: (0..config.producers).map(|_| AtomicU64::new(0)).collect(),
            readings: (0..model.sensors.len()).map(|_| AtomicU64::new(0f64.to_bits())).collect(),
            capacity: config.buffer_capacity,
            period_us: config.period_us.max(100),
            clock: config.clock,
            start_time_ms: config.start_time_ms,
            start_ns: monotonic_ns(),
            granted: AtomicU64::new(0),
            now_ms: AtomicI32::new(config.start_time_ms),
            stop: AtomicBool::new(false),
            thread: OnceLock::new(),
        });
        let mut channels = Vec::with_capacity(config.producers);
        let mut inbound = Vec::with_capacity(config.producers);
        for producer in 0..config.producers {
            let (to_cycle, from_producer) = rtrb::RingBuffer::new(config.queue_capacity);
            let (to_producer, returned) = rtrb::RingBuffer::new(config.queue_capacity);
            channels.push(RequestChannel {
                producer,
                to_cycle,
                returned,
                queued: queued::Queued::with_capacity(config.queue_capacity, 4 * actuators),
                admission: admission::Admission::new(actuators),
                // A client's request names an actuator at most 4 times (aliases).
                changes: Vec::with_capacity(4 * actuators),
                spare_requests: Vec::new(),
                shared: Arc::clone(&shared),
                model: Arc::clone(&model),
                next_hook_id: 0,
                hook_names: Vec::new(),
            });
            inbound.push((from_producer, to_producer));
        }
        let (reports, report_consumer) = rtrb::RingBuffer::new(8192);
        let (wake_sender, wake_receiver) = UnixDatagram::pair()?;
        wake_sender.set_nonblocking(true)?;
        wake_receiver.set_nonblocking(true)?;
        let core = DcmCore::new(&model, config.buffer_capacity, config.start_time_ms);
        let mut cycle = Cycle {
            hooks: Vec::with_capacity(MAX_HOOKS),
            hook_commands: HookCommands::with_capacity(actuators * 2),
            sensors: (0..model.sensors.len())
                .map(|index| model.sensor_conversion(index).sensor_reading(model.sensors[index].initial))
                .collect(),
            sensor_conversions: (0..model.sensors.len())
                .map(|index| model.sensor_conversion(index))
                .collect(),
            acks: vec![0; actuators],
            nacks: vec![0; actuators],
            core,
            model,
            hardware,
            shared: Arc::clone(&shared),
            inbound,
            reports,
            wake: wake_sender,
            hook_budget_ns: i64::from(config.hook_budget_us) * 1000,
        };
        cycle.publish_static();
        let rt = config.clone();
        let handle = thread::Builder::new().name("dcm-cycle".into()).spawn(move || {
            let realtime = clock::make_realtime(rt.priority, rt.cpu, rt.mlock);
            cycle.shared.slots.set(cycle.shared.dcm_slots.realtime, f64::from(u8::from(realtime)));
            cycle.run();
        })?;
        let _ = shared.thread.set(handle.thread().clone());
        Ok((CycleThread { shared, handle: Some(handle) }, channels, report_consumer, wake_receiver))
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for CycleThread {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.wake();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

struct Cycle {
    core: DcmCore,
    model: Arc<DeviceModel>,
    hardware: Box<dyn Hardware>,
    shared: Arc<Shared>,
    inbound: Vec<(rtrb::Consumer<ToCycle>, rtrb::Producer<Returned>)>,
    // Boxed on purpose: unboxing would free the box on this thread.
    #[allow(clippy::vec_box)]
    hooks: Vec<Box<Hook>>,
    hook_commands: HookCommands,
    /// What the hardware read this cycle, before each sensor's conversion.
    sensors: Vec<f64>,
    sensor_conversions: Vec<Conversion>,
    /// Each actuator's answers so far (`.../Ack`, `.../Nack`).
    acks: Vec<u64>,
    nacks: Vec<u64>,
    reports: rtrb::Producer<CycleReport>,
    wake: UnixDatagram,
    hook_budget_ns: i64,
}

impl Cycle {
    fn run(&mut self) {
        match self.shared.clock {
            ClockMode::Real => self.run_real(),
            ClockMode::Manual => self.run_manual(),
        }
    }

    fn run_real(&mut self) {
        let period_ns = i64::from(self.shared.period_us) * 1000;
        let mut cycle: u64 = 0;
        let mut deadline = self.shared.start_ns;
        while !self.shared.stop.load(Ordering::Acquire) {
            cycle += 1;
            deadline += period_ns;
            clock::sleep_until(deadline);
            let woke = monotonic_ns();
            let time = self.shared.cycle_time(cycle);
            self.cycle(cycle, time, woke - deadline, woke);
            let finished = monotonic_ns();
            if finished > deadline + period_ns {
                // Overrun: count it and continue from the present instead of bursting
                // through the missed deadlines.
                self.shared.stats.overruns.fetch_add(1, Ordering::Relaxed);
                let missed = (finished - deadline) / period_ns;
                cycle += missed as u64;
                deadline += missed * period_ns;
            }
        }
    }

    fn run_manual(&mut self) {
        let mut cycle: u64 = 0;
        while !self.shared.stop.load(Ordering::Acquire) {
            self.drain_inbound();
            if self.shared.granted.load(Ordering::Acquire) > cycle {
                cycle += 1;
                let time = self.shared.cycle_time(cycle);
                let now = monotonic_ns();
                self.cycle(cycle, time, 0, now);
            } else {
                thread::park();
            }
        }
    }

    fn cycle(&mut self, cycle: u64, time: DcmTime, lateness_ns: i64, woke_ns: i64) {
        self.hardware.read_sensors(time, &mut self.sensors);
        self.run_hooks(Phase::Pre, cycle, time);
        self.drain_inbound();
        self.apply_hook_commands(time);
        self.core.cycle(time);
        self.hardware.write_actuators(time, self.core.sent(), self.core.raw(), self.core.fired());
        self.hardware.count_answers(&mut self.acks, &mut self.nacks);
        let compute_ns = monotonic_ns() - woke_ns;
        self.publish(cycle, time, compute_ns, lateness_ns);
        self.run_hooks(Phase::Post, cycle, time);
        let compute_us = ((monotonic_ns() - woke_ns) / 1000) as u32;
        let report = CycleReport { cycle, time, lateness_us: lateness_ns / 1000, compute_us };
        self.shared.stats.record(&report);
        self.shared.now_ms.store(time, Ordering::Release);
        self.shared.stats.cycles.store(cycle, Ordering::Release);
        if self.reports.push(report).is_err() {
            self.shared.stats.reports_dropped.fetch_add(1, Ordering::Relaxed);
        }
        // Non-blocking: a full socket means the actor side has a wake-up pending anyway.
        let _ = self.wake.send(&[0]);
    }

    fn give_back(&mut self, producer: usize, returned: Returned) {
        if let Err(rtrb::PushError::Full(returned)) = self.inbound[producer].1.push(returned) {
            // Cannot happen while producers free returns before pushing (see
            // RequestChannel::push); leaking beats freeing on this thread.
            self.shared.stats.leaked.fetch_add(1, Ordering::Relaxed);
            std::mem::forget(returned);
        }
    }

    fn drain_inbound(&mut self) {
        for producer in 0..self.inbound.len() {
            while let Ok(message) = self.inbound[producer].0.pop() {
                match message {
                    ToCycle::Apply(request) => {
                        if self.core.apply_checked(&request).is_err() {
                            self.shared.stats.refused.fetch_add(1, Ordering::Relaxed);
                        }
                        // The new lengths before the queued counts drop: a producer reading
                        // in between counts the request twice, never zero times.
                        for group in request.groups() {
                            let len = self.core.buffer_len(group.actuator) as u32;
                            self.shared.buffer_len[group.actuator].store(len, Ordering::Release);
                            self.shared
                                .queued_slot(producer, group.actuator)
                                .fetch_sub(group.commands.len() as u32, Ordering::AcqRel);
                        }
                        self.shared.applied[producer].fetch_add(1, Ordering::AcqRel);
                        self.give_back(producer, Returned::Request(request));
                    }
                    ToCycle::ForceSensor { sensor, value } => {
                        let conversion = self.sensor_conversions[sensor];
                        self.hardware
                            .force_sensor(sensor, value.map(|value| conversion.sensor_reading(value)));
                    }
                    ToCycle::Conversions(conversions) => {
                        for &(device, conversion) in conversions.iter() {
                            self.set_conversion(device, conversion);
                        }
                        self.give_back(producer, Returned::Conversions(conversions));
                    }
                    ToCycle::AddHook(hook) => {
                        let free = self.shared.stats.hooks.iter().find(|s| s.id() == 0);
                        if let (true, Some(stats)) = (self.hooks.len() < MAX_HOOKS, free) {
                            stats.attach(hook.id);
                            self.hooks.push(hook);
                        } else {
                            self.shared.stats.hooks_refused.fetch_add(1, Ordering::Relaxed);
                            self.give_back(producer, Returned::Hook(hook));
                        }
                    }
                    ToCycle::RemoveHook(id) => {
                        if let Some(position) = self.hooks.iter().position(|h| h.id == id) {
                            let hook = self.hooks.swap_remove(position);
                            for stats in self.shared.stats.hooks.iter() {
                                stats.detach(id);
                            }
                            self.give_back(producer, Returned::Hook(hook));
                        }
                    }
                    ToCycle::Reset => {
                        self.core.clear_all_buffers();
                        for length in self.shared.buffer_len.iter() {
                            length.store(0, Ordering::Release);
                        }
                    }
                }
            }
        }
    }

    fn run_hooks(&mut self, phase: Phase, cycle: u64, time: DcmTime) {
        for hook in self.hooks.iter_mut().filter(|h| h.phase == phase) {
            let started = monotonic_ns();
            let mut context =
                CycleContext { time, cycle, slots: &self.shared.slots, commands: &mut self.hook_commands };
            (hook.callback)(&mut context);
            let spent = monotonic_ns() - started;
            if let Some(stats) = self.shared.stats.hooks.iter().find(|s| s.id() == hook.id) {
                stats.record(spent, spent > self.hook_budget_ns);
            }
        }
    }

    fn apply_hook_commands(&mut self, time: DcmTime) {
        for &(actuator, value) in self.hook_commands.pending() {
            // A hook naming no actuator is ignored: nothing on this thread may panic.
            let Some(spec) = self.model.actuators.get(actuator) else { continue };
            self.core.apply_one(
                actuator,
                UpdateType::ClearAll,
                TimedCommand { time, value: spec.clamp(value) },
            );
            self.shared.buffer_len[actuator].store(self.core.buffer_len(actuator) as u32, Ordering::Release);
        }
        self.hook_commands.clear();
    }

    /// Use a device's new conversion and show its gain and offset in ALMemory.
    fn set_conversion(&mut self, device: DeviceIndex, conversion: Conversion) {
        let slots = &self.shared.slots;
        let keys = &self.shared.dcm_slots;
        match device {
            DeviceIndex::Actuator(index) => {
                self.core.set_conversion(index, conversion);
                slots.set(keys.actuator_gain + index, conversion.gain);
                slots.set(keys.actuator_offset + index, conversion.offset);
            }
            DeviceIndex::Sensor(index) => {
                self.sensor_conversions[index] = conversion;
                slots.set(keys.sensor_gain + index, conversion.gain);
                slots.set(keys.sensor_offset + index, conversion.offset);
                // The value of what was last published, in the new conversion: the three
                // keys never disagree for a whole cycle.
                let reading = f64::from_bits(self.shared.readings[index].load(Ordering::Acquire));
                slots.set(keys.sensors + index, conversion.sensor_value(reading));
            }
        }
    }

    fn publish_static(&self) {
        let slots = &self.shared.slots;
        let keys = &self.shared.dcm_slots;
        for index in 0..self.model.actuators.len() {
            let conversion = self.model.actuator_conversion(index);
            slots.set(keys.actuator_gain + index, conversion.gain);
            slots.set(keys.actuator_offset + index, conversion.offset);
            slots.set(keys.actuators + index, self.core.sent()[index]);
        }
        for (index, (reading, conversion)) in self.sensors.iter().zip(&self.sensor_conversions).enumerate() {
            slots.set(keys.sensor_gain + index, conversion.gain);
            slots.set(keys.sensor_offset + index, conversion.offset);
            slots.set(keys.sensors + index, conversion.sensor_value(*reading));
            self.shared.readings[index].store(reading.to_bits(), Ordering::Release);
        }
        slots.set(keys.target_cycle_time, f64::from(self.shared.period_us));
        slots.set(keys.simulation, f64::from(u8::from(self.hardware.is_simulation())));
        slots.set(keys.time, f64::from(self.shared.start_time_ms));
        slots.publish(timestamp_now());
    }

    fn publish(&mut self, cycle: u64, time: DcmTime, compute_ns: i64, lateness_ns: i64) {
        let slots = &self.shared.slots;
        let keys = &self.shared.dcm_slots;
        for (index, value) in self.core.sent().iter().enumerate() {
            slots.set(keys.actuators + index, *value);
            slots.set(keys.actuator_ack + index, self.acks[index] as f64);
            slots.set(keys.actuator_nack + index, self.nacks[index] as f64);
            self.shared.buffer_len[index].store(self.core.buffer_len(index) as u32, Ordering::Release);
        }
        for (index, (reading, conversion)) in self.sensors.iter().zip(&self.sensor_conversions).enumerate() {
            slots.set(keys.sensors + index, conversion.sensor_value(*reading));
            self.shared.readings[index].store(reading.to_bits(), Ordering::Release);
        }
        let link = self.hardware.link();
        slots.set(keys.time, f64::from(time));
        slots.set(keys.cycle, cycle as f64);
        slots.set(keys.cycle_time, (compute_ns / 1000) as f64);
        slots.set(keys.lateness, (lateness_ns / 1000) as f64);
        slots.set(keys.overruns, self.shared.stats.overruns.load(Ordering::Relaxed) as f64);
        slots.set(keys.hal_ack, link.ack as f64);
        slots.set(keys.hal_nack, link.nack as f64);
        slots.set(keys.hal_error, link.errors as f64);
        slots.publish(timestamp_now());
    }
}
