//! The robot's hardware behind a tiny trait: read sensors, write actuators.
//! The cycle's time comes from the clock, not from the hardware.

pub mod serial;
pub mod sim;

use crate::time::DcmTime;

/// Health of the link to the boards, published as `HAL/Ack`, `HAL/Nack`, `HAL/Error`
/// (each actuator's own answers are counted apart: [`Hardware::count_answers`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStatus {
    pub ack: u64,
    pub nack: u64,
    pub errors: u64,
}

/// What the DCM cycle needs from a robot. Called on the real-time thread: an
/// implementation must not allocate, lock or block.
pub trait Hardware: Send {
    /// Fill `sensors` (one value per sensor of the device model) for this cycle.
    fn read_sensors(&mut self, time: DcmTime, sensors: &mut [f64]);

    /// Send this cycle's actuator values: `values` as published, `raw` the integers
    /// the boards receive, `fired` the trigger actuators that applied a command.
    fn write_actuators(&mut self, time: DcmTime, values: &[f64], raw: &[i64], fired: &[bool]);

    fn link(&self) -> LinkStatus {
        LinkStatus::default()
    }

    /// Count the devices' answers received since the last call, per actuator: add to
    /// `acks[i]` the writes actuator `i`'s device acknowledged, to `nacks[i]` those it did
    /// not answer. Called once per cycle, after `write_actuators`. By default every write
    /// is acknowledged at once: a backend whose writes cannot fail, as the simulation.
    fn count_answers(&mut self, acks: &mut [u64], _nacks: &mut [u64]) {
        for ack in acks {
            *ack += 1;
        }
    }

    /// Force a sensor to a value (`None` releases it). Only a simulation can.
    fn force_sensor(&mut self, _sensor: usize, _value: Option<f64>) -> bool {
        false
    }

    fn is_simulation(&self) -> bool {
        false
    }
}
