//! The pure DCM core: timed-command buffers and the seed's interpolation algorithm.
//! No I/O, no clock, no allocation per cycle: the cycle thread and the tests drive it.

mod actuator;
mod alias;
mod capacity;
mod request;

pub use actuator::{Actuator, Buffer, TimedCommand};
pub use alias::{AliasError, AliasTooLong, Aliases, MAX_ALIASES, MAX_ALIAS_MEMBERS_PER_ACTUATOR};
pub use capacity::LengthChange;
pub use request::{ActuatorCommands, Request, UnknownTarget, UnknownUpdateType, UpdateType};

use std::sync::Arc;

use naobroker_robot::device::{Conversion, DeviceKind, DeviceModel};

use crate::conversions::Conversions;
use crate::time::DcmTime;

/// Refusal of a request that would overflow an actuator's buffer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("request refused: {actuator} would hold {would_hold} timed commands, the limit is {capacity}")]
pub struct Overflow {
    /// Shared, so that a producer on a real-time thread is refused without allocating.
    pub actuator: Arc<str>,
    pub would_hold: usize,
    pub capacity: usize,
}

/// A request the core refused, without naming it (naming allocates: the cycle thread
/// only counts refusals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub actuator: usize,
    pub would_hold: usize,
}

/// Marks an actuator no group of the request being checked has touched yet.
const UNTOUCHED: usize = usize::MAX;

/// Every actuator's buffer and interpolation state, and the values last sent.
pub struct DcmCore {
    /// What a cycle reads and writes for every actuator, dense; the buffers apart, read
    /// when a command falls due.
    actuators: Vec<Actuator>,
    buffers: Vec<Buffer>,
    conversions: Conversions,
    capacity: usize,
    /// While a request is checked: each actuator's length after the groups seen so far,
    /// at most (`UNTOUCHED` otherwise). Preallocated: checking does not allocate.
    lengths: Vec<usize>,
    /// What each actuator was sent at the last cycle, after rounding to precision.
    sent: Vec<f64>,
    raw: Vec<i64>,
    fired: Vec<bool>,
    /// The actuators that applied a command at the last cycle: their buffers shrank.
    /// Preallocated to one entry per actuator.
    applied: Vec<usize>,
    /// `lastCycleTime`: the time of the last cycle, the same for every actuator.
    last_cycle: DcmTime,
}

impl DcmCore {
    /// Build the core with every buffer preallocated to `capacity` commands.
    pub fn new(model: &DeviceModel, capacity: usize, start: DcmTime) -> DcmCore {
        let actuators: Vec<Actuator> = model
            .actuators
            .iter()
            .map(|spec| {
                let initial = spec.clamp(spec.initial);
                Actuator::new(spec.kind == DeviceKind::Trigger, initial, start)
            })
            .collect();
        let buffers =
            model.actuators.iter().map(|spec| Buffer::new(capacity, spec.clamp(spec.initial))).collect();
        let conversions =
            Conversions::new((0..model.actuators.len()).map(|index| model.actuator_conversion(index)));
        let raw: Vec<i64> = model
            .actuators
            .iter()
            .zip(conversions.iter())
            .map(|(spec, conversion)| conversion.to_hardware(spec.clamp(spec.initial)))
            .collect();
        let sent = raw
            .iter()
            .zip(conversions.iter())
            .map(|(&raw, conversion)| conversion.from_hardware(raw))
            .collect();
        let count = actuators.len();
        DcmCore {
            actuators,
            buffers,
            conversions,
            capacity,
            lengths: vec![UNTOUCHED; count],
            sent,
            raw,
            fired: vec![false; count],
            applied: Vec::with_capacity(count),
            last_cycle: start,
        }
    }

    pub fn buffer_len(&self, index: usize) -> usize {
        self.buffers[index].len()
    }

    /// Apply a whole request, or nothing when any buffer would overflow.
    pub fn apply(&mut self, request: &Request, model: &DeviceModel) -> Result<(), Overflow> {
        self.apply_checked(request).map_err(|refusal| Overflow {
            actuator: model.actuators[refusal.actuator].full_name().into(),
            would_hold: refusal.would_hold,
            capacity: self.capacity,
        })
    }

    /// [`DcmCore::apply`] without naming the refused actuator: it does not allocate.
    pub fn apply_checked(&mut self, request: &Request) -> Result<(), Refusal> {
        let checked = self.check(request);
        for group in request.groups() {
            self.lengths[group.actuator] = UNTOUCHED;
        }
        checked?;
        for group in request.groups() {
            self.buffers[group.actuator].apply(group.update, &group.commands);
            self.actuators[group.actuator].follow(&self.buffers[group.actuator]);
        }
        Ok(())
    }

    /// Every group in order: the first group for an actuator is counted exactly against
    /// its buffer, later ones for the same actuator (an alias naming it twice, a
    /// producer's request) are bounded from the length before them.
    fn check(&mut self, request: &Request) -> Result<(), Refusal> {
        for group in request.groups() {
            let would_hold = match self.lengths[group.actuator] {
                UNTOUCHED => self.buffers[group.actuator].len_after(group.update, &group.commands),
                before => LengthChange::of(group.update, group.commands.len()).after(before),
            };
            if would_hold > self.capacity {
                return Err(Refusal { actuator: group.actuator, would_hold });
            }
            self.lengths[group.actuator] = would_hold;
        }
        Ok(())
    }

    /// Run one cycle at `now`: every actuator through the algorithm, values rounded to
    /// the hardware's precision. Returns the values actually sent. A settled actuator (no
    /// command, no new conversion) is skipped: its outputs stay what they were.
    pub fn cycle(&mut self, now: DcmTime) -> &[f64] {
        self.applied.clear();
        let outputs = self.raw.iter_mut().zip(self.sent.iter_mut()).zip(self.fired.iter_mut());
        let conversions = &self.conversions;
        let inputs = self.actuators.iter_mut().zip(self.buffers.iter_mut()).zip(conversions.codes());
        for (index, (((actuator, buffer), &code), ((raw, sent), fired))) in inputs.zip(outputs).enumerate() {
            if actuator.is_settled() {
                continue;
            }
            let (value, applied) = actuator.cycle(self.last_cycle, now, buffer);
            if applied {
                self.applied.push(index);
            }
            *fired = applied && actuator.is_trigger();
            let conversion = conversions.of_code(code);
            *raw = conversion.to_hardware(value);
            *sent = conversion.from_hardware(*raw);
        }
        self.last_cycle = now;
        &self.sent
    }

    /// The actuators that applied a command at the last cycle, whose buffers shrank: the
    /// only lengths a cycle changes.
    pub fn applied(&self) -> &[usize] {
        &self.applied
    }

    pub fn sent(&self) -> &[f64] {
        &self.sent
    }

    /// The integers the hardware receives.
    pub fn raw(&self) -> &[i64] {
        &self.raw
    }

    /// Trigger actuators that applied a command this cycle.
    pub fn fired(&self) -> &[bool] {
        &self.fired
    }

    /// An actuator's conversion, changed by calibration; used from the next cycle on.
    pub fn set_conversion(&mut self, index: usize, conversion: Conversion) {
        self.conversions.set(index, conversion);
        self.actuators[index].unsettle();
    }

    /// Apply one command to one actuator (real-time hooks), if it fits.
    pub fn apply_one(&mut self, index: usize, update: UpdateType, command: TimedCommand) {
        let buffer = &mut self.buffers[index];
        let new = [command];
        if buffer.len_after(update, &new) <= self.capacity {
            buffer.apply(update, &new);
            self.actuators[index].follow(buffer);
        }
    }

    /// `special("Reset")`: empty every buffer, keep the values being sent.
    pub fn clear_all_buffers(&mut self) {
        for (actuator, buffer) in self.actuators.iter_mut().zip(&mut self.buffers) {
            buffer.apply(UpdateType::ClearAll, &[]);
            actuator.follow(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_robot::device::RobotDescription;

    fn commands(times: std::ops::Range<i32>) -> Vec<TimedCommand> {
        times.map(|time| TimedCommand { time, value: 0.0 }).collect()
    }

    #[test]
    fn groups_for_one_actuator_are_checked_in_order() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let mut core = DcmCore::new(&model, 4, 0);
        let mut full = Request::default();
        full.push(0, UpdateType::Merge, commands(10..14));
        core.apply(&full, &model).unwrap();
        // Cleared by its own first group, the second then fits.
        let mut request = Request::default();
        request.push(0, UpdateType::ClearAll, commands(20..21));
        request.push(0, UpdateType::Merge, commands(30..33));
        core.apply(&request, &model).unwrap();
        assert_eq!(core.buffer_len(0), 4);
        // A Merge before the clear overflows first: refused whole, nothing applied.
        let mut request = Request::default();
        request.push(0, UpdateType::Merge, commands(40..41));
        request.push(0, UpdateType::ClearAll, commands(50..51));
        assert_eq!(core.apply_checked(&request), Err(Refusal { actuator: 0, would_hold: 5 }));
        assert_eq!(core.buffer_len(0), 4);
        let error = core.apply(&request, &model).unwrap_err();
        assert!(error.to_string().contains("would hold 5 timed commands, the limit is 4"), "{error}");
    }

    #[test]
    fn a_settled_actuator_keeps_its_outputs_until_a_command_or_a_conversion_comes() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let conversion = model.actuator_conversion(0);
        let mut core = DcmCore::new(&model, 16, 0);
        for now in (10..=100).step_by(10) {
            core.cycle(now);
        }
        assert!(core.actuators[0].is_settled());
        let (raw, sent) = (core.raw()[0], core.sent()[0]);
        // Idle for ten cycles, it still interpolates from the last cycle's time and value.
        let mut request = Request::default();
        request.push(0, UpdateType::Merge, vec![TimedCommand { time: 200, value: sent + 1.0 }]);
        core.apply(&request, &model).unwrap();
        let expected = sent + 1.0 * 10.0 / 100.0;
        assert_eq!(core.cycle(110)[0], conversion.from_hardware(conversion.to_hardware(expected)));
        for now in (120..=210).step_by(10) {
            core.cycle(now);
        }
        assert!(core.actuators[0].is_settled());
        assert_eq!(core.raw()[0], conversion.to_hardware(sent + 1.0));
        // A new conversion is used at the next cycle, settled or not.
        let doubled = Conversion { gain: conversion.gain * 2.0, ..conversion };
        core.set_conversion(0, doubled);
        core.cycle(220);
        assert_eq!(core.raw()[0], doubled.to_hardware(sent + 1.0));
        assert_ne!(core.raw()[0], raw);
    }
}
