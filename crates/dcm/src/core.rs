//! The pure DCM core: timed-command buffers and the seed's interpolation algorithm.
//! No I/O, no clock, no allocation per cycle: the cycle thread and the tests drive it.

mod actuator;
mod request;

pub use actuator::{Actuator, TimedCommand};
pub use request::{number, ActuatorCommands, Aliases, Request, RequestParser, UpdateType};

use crate::device::{Conversion, DeviceKind, DeviceModel};
use crate::time::DcmTime;

/// Refusal of a request that would overflow an actuator's buffer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("request refused: {actuator} would hold {would_hold} timed commands, the limit is {capacity}")]
pub struct Overflow {
    pub actuator: String,
    pub would_hold: usize,
    pub capacity: usize,
}

/// Every actuator's buffer and interpolation state, and the values last sent.
pub struct DcmCore {
    actuators: Vec<Actuator>,
    conversions: Vec<Conversion>,
    capacity: usize,
    /// What each actuator was sent at the last cycle, after rounding to precision.
    sent: Vec<f64>,
    raw: Vec<i64>,
    fired: Vec<bool>,
}

impl DcmCore {
    /// Build the core with every buffer preallocated to `capacity` commands.
    pub fn new(model: &DeviceModel, capacity: usize, start: DcmTime) -> DcmCore {
        let actuators: Vec<Actuator> = model
            .actuators
            .iter()
            .map(|spec| {
                let initial = spec.clamp(spec.initial);
                Actuator::new(spec.kind == DeviceKind::Trigger, initial, start, capacity)
            })
            .collect();
        let sent: Vec<f64> = model
            .actuators
            .iter()
            .map(|spec| spec.from_hardware(spec.to_hardware(spec.clamp(spec.initial))))
            .collect();
        let raw = model.actuators.iter().map(|spec| spec.to_hardware(spec.clamp(spec.initial))).collect();
        let count = actuators.len();
        let conversions = model.actuators.iter().map(|spec| spec.conversion()).collect();
        DcmCore { actuators, conversions, capacity, sent, raw, fired: vec![false; count] }
    }

    pub fn buffer_len(&self, index: usize) -> usize {
        self.actuators[index].len()
    }

    /// Apply a whole request, or nothing when any buffer would overflow.
    pub fn apply(&mut self, request: &Request, model: &DeviceModel) -> Result<(), Overflow> {
        for group in request.groups() {
            let would_hold = self.actuators[group.actuator].len_after(group.update, &group.commands);
            if would_hold > self.capacity {
                return Err(Overflow {
                    actuator: model.actuators[group.actuator].full_name(),
                    would_hold,
                    capacity: self.capacity,
                });
            }
        }
        // Two groups of one request may target the same actuator (an alias naming it
        // twice); checked one by one above, they are re-checked while applying.
        for group in request.groups() {
            let actuator = &mut self.actuators[group.actuator];
            if actuator.len_after(group.update, &group.commands) <= self.capacity {
                actuator.apply(group.update, &group.commands);
            }
        }
        Ok(())
    }

    /// Run one cycle at `now`: every actuator through the algorithm, values rounded to
    /// the hardware's precision. Returns the values actually sent.
    pub fn cycle(&mut self, now: DcmTime) -> &[f64] {
        for (index, (actuator, conversion)) in self.actuators.iter_mut().zip(&self.conversions).enumerate() {
            let (value, fired) = actuator.cycle(now);
            let raw = conversion.to_hardware(value);
            self.raw[index] = raw;
            self.sent[index] = conversion.from_hardware(raw);
            self.fired[index] = fired;
        }
        &self.sent
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

    /// Apply one command to one actuator (real-time hooks), if it fits.
    pub fn apply_one(&mut self, index: usize, update: UpdateType, command: TimedCommand) {
        let actuator = &mut self.actuators[index];
        let new = [command];
        if actuator.len_after(update, &new) <= self.capacity {
            actuator.apply(update, &new);
        }
    }

    /// `special("Reset")`: empty every buffer, keep the values being sent.
    pub fn clear_all_buffers(&mut self) {
        for actuator in &mut self.actuators {
            actuator.apply(UpdateType::ClearAll, &[]);
        }
    }
}
