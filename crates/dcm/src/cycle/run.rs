//! The cycle itself, on its thread (run by the real-time scaffold, `naobroker-rt`): read
//! sensors, run the preProcess hooks, apply what the producers queued (and, when the link
//! to the robot came back, the hardware's takeover), interpolate every actuator, write the
//! hardware, publish to ALMemory's slots, run the postProcess hooks, report.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use naobroker_hardware::{AnswerCounts, Hardware, Takeover};
use naobroker_robot::device::{Conversion, DeviceIndex, DeviceModel};
use naobroker_rt::{Reporter, Tick};
use naobroker_rtslots::timestamp_now;

use super::channel::Inbound;
use super::{
    monotonic_ns, CycleConfig, CycleContext, CycleReport, Hook, HookCommands, Phase, Returned, Shared,
    ToCycle, MAX_HOOKS,
};
use crate::conversions::Conversions;
use crate::core::{DcmCore, TimedCommand, UpdateType};
use crate::time::DcmTime;

/// The cycle thread's state and work.
pub(super) struct Cycle {
    core: DcmCore,
    model: Arc<DeviceModel>,
    hardware: Box<dyn Hardware>,
    shared: Arc<Shared>,
    inbound: Vec<Inbound>,
    // Boxed on purpose: unboxing would free the box on this thread.
    #[allow(clippy::vec_box)]
    hooks: Vec<Box<Hook>>,
    hook_commands: HookCommands,
    /// What the hardware read this cycle, before each sensor's conversion.
    sensors: Vec<f64>,
    sensor_conversions: Conversions,
    /// Each actuator's answers so far (`.../Ack`, `.../Nack`).
    answers: AnswerCounts,
    reports: Reporter<CycleReport>,
    hook_budget_ns: i64,
    /// The hardware asked for its takeover at the next cycle.
    take_over: bool,
}

impl Cycle {
    /// Everything the cycle uses, allocated here; ALMemory gets the values that never
    /// change (and the initial ones) before the thread starts.
    pub(super) fn new(
        model: Arc<DeviceModel>,
        hardware: Box<dyn Hardware>,
        shared: Arc<Shared>,
        inbound: Vec<Inbound>,
        reports: Reporter<CycleReport>,
        config: &CycleConfig,
    ) -> Cycle {
        let actuators = model.actuators.len();
        let sensors = model.sensors.len();
        let cycle = Cycle {
            core: DcmCore::new(&model, config.buffer_capacity, config.start_time_ms),
            hooks: Vec::with_capacity(MAX_HOOKS),
            hook_commands: HookCommands::with_capacity(actuators * 2),
            sensors: (0..sensors)
                .map(|index| model.sensor_conversion(index).sensor_reading(model.sensors[index].initial))
                .collect(),
            sensor_conversions: Conversions::new((0..sensors).map(|index| model.sensor_conversion(index))),
            answers: AnswerCounts::new(actuators),
            model,
            hardware,
            shared,
            inbound,
            reports,
            hook_budget_ns: i64::from(config.hook_budget_us) * 1000,
            take_over: false,
        };
        cycle.publish_static();
        cycle
    }

    fn cycle(&mut self, cycle: u64, time: DcmTime, lateness_ns: i64, woke_ns: i64) {
        self.hardware.read_sensors(time, &mut self.sensors);
        self.run_hooks(Phase::Pre, cycle, time);
        self.drain_inbound();
        self.apply_hook_commands(time);
        if std::mem::take(&mut self.take_over) {
            self.apply_takeover(time);
        }
        self.core.cycle(time);
        self.hardware.write_actuators(time, self.core.sent(), self.core.raw(), self.core.fired());
        self.hardware.count_answers(&mut self.answers);
        let cycle_time_ns = monotonic_ns() - woke_ns;
        self.publish(cycle, time, cycle_time_ns, lateness_ns);
        self.run_hooks(Phase::Post, cycle, time);
        let compute_ns = monotonic_ns() - woke_ns;
        let report = CycleReport { cycle, time, lateness_ns, compute_ns };
        self.shared.stats.record(&report);
        self.shared.now_ms.store(time, Ordering::Release);
        self.shared.stats.cycles.store(cycle, Ordering::Release);
        if self.reports.push(report).is_err() {
            self.shared.stats.reports_dropped.fetch_add(1, Ordering::Relaxed);
        }
        self.reports.wake();
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
                        let conversion = self.sensor_conversions.get(sensor);
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

    /// The link to the robot came back: the hardware's commands replace the buffers of
    /// the actuators they name (a joint held where its sensor reads it this cycle, a
    /// stiffness ramped to 0).
    fn apply_takeover(&mut self, time: DcmTime) {
        for &command in self.hardware.takeover() {
            let (actuator, now, then) = match command {
                Takeover::Hold { actuator, sensor } => {
                    let Some(&reading) = self.sensors.get(sensor) else { continue };
                    (actuator, self.sensor_conversions.get(sensor).sensor_value(reading), None)
                }
                Takeover::Ramp { actuator, from, to, ramp_ms } => {
                    (actuator, from, Some((time.wrapping_add(ramp_ms as DcmTime), to)))
                }
            };
            // A takeover naming no actuator is ignored: nothing on this thread may panic.
            let Some(spec) = self.model.actuators.get(actuator) else { continue };
            self.core.apply_one(
                actuator,
                UpdateType::ClearAll,
                TimedCommand { time, value: spec.clamp(now) },
            );
            if let Some((time, value)) = then {
                self.core.apply_one(
                    actuator,
                    UpdateType::Merge,
                    TimedCommand { time, value: spec.clamp(value) },
                );
            }
            self.shared.buffer_len[actuator].store(self.core.buffer_len(actuator) as u32, Ordering::Release);
        }
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
                self.sensor_conversions.set(index, conversion);
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
        slots.begin_write();
        for index in 0..self.model.actuators.len() {
            let conversion = self.model.actuator_conversion(index);
            slots.set(keys.actuator_gain + index, conversion.gain);
            slots.set(keys.actuator_offset + index, conversion.offset);
            slots.set(keys.actuators + index, self.core.sent()[index]);
        }
        for (index, (reading, conversion)) in
            self.sensors.iter().zip(self.sensor_conversions.iter()).enumerate()
        {
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

    /// `cycle_time_ns`: the cycle's time up to publishing (ALMemory's cycle time), which the
    /// post hooks that follow do not count in; the report's `compute_ns` does.
    fn publish(&mut self, cycle: u64, time: DcmTime, cycle_time_ns: i64, lateness_ns: i64) {
        let slots = &self.shared.slots;
        let keys = &self.shared.dcm_slots;
        // Readers of several slots retry until `publish` below: they never mix two cycles.
        slots.begin_write();
        // Block by block, each a sequential pass over arrays of the same order.
        slots.set_block(keys.actuators, self.core.sent().iter().copied());
        // The answers' totals when they changed (the simulation's acks every cycle, as one
        // count for every actuator; its nacks never).
        let answers = self.answers.take_changes();
        if answers.acks {
            slots.set_block(keys.actuator_ack, self.answers.acks().map(count_value));
        }
        if answers.nacks {
            slots.set_block(keys.actuator_nack, self.answers.nacks().map(count_value));
        }
        // Requests, hooks and takeovers store the lengths they change as they apply.
        for &index in self.core.applied() {
            self.shared.buffer_len[index].store(self.core.buffer_len(index) as u32, Ordering::Release);
        }
        let sensors = self.sensors.iter().zip(self.sensor_conversions.iter());
        slots.set_block(keys.sensors, sensors.map(|(&reading, conversion)| conversion.sensor_value(reading)));
        for (shared, reading) in self.shared.readings.iter().zip(&self.sensors) {
            shared.store(reading.to_bits(), Ordering::Release);
        }
        let link = self.hardware.link();
        slots.set(keys.time, f64::from(time));
        slots.set(keys.cycle, cycle as f64);
        slots.set(keys.cycle_time, (cycle_time_ns / 1000) as f64);
        slots.set(keys.lateness, (lateness_ns / 1000) as f64);
        slots.set(keys.overruns, self.shared.stats.overruns.load(Ordering::Relaxed) as f64);
        slots.set(keys.hal_ack, link.ack as f64);
        slots.set(keys.hal_nack, link.nack as f64);
        slots.set(keys.hal_error, link.errors as f64);
        slots.publish(timestamp_now());
    }
}

/// A counter as ALMemory shows it. Through `i64`, which x86-64 converts in one
/// instruction (`u64` takes seven): no counter reaches 2^63.
#[inline]
fn count_value(count: u64) -> f64 {
    count as i64 as f64
}

impl naobroker_rt::Cycle for Cycle {
    fn started(&mut self, realtime: bool) {
        self.shared.slots.set(self.shared.dcm_slots.realtime, f64::from(u8::from(realtime)));
    }

    fn run(&mut self, tick: Tick) {
        if tick.skipped > 0 {
            // The previous cycle ended after this one's deadline.
            self.shared.stats.overruns.fetch_add(1, Ordering::Relaxed);
        }
        let time = self.shared.cycle_time(tick.number);
        self.cycle(tick.number, time, tick.lateness_ns, tick.woke_ns);
    }

    /// Manual clock, or waiting for the hardware: take in what producers queued.
    fn idle(&mut self) {
        self.drain_inbound();
    }

    fn wait_hardware(&mut self, timeout: Duration) -> Option<u64> {
        let cycle = self.hardware.wait_cycle(timeout)?;
        self.take_over |= cycle.take_over;
        Some(cycle.missed)
    }
}
