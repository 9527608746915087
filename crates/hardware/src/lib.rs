//! The robot's hardware as the DCM cycle sees it, behind a tiny trait: read sensors, write
//! actuators, and, for a robot that clocks the DCM itself (`lola`: one cycle per sensor
//! map), the hardware's own clock. Each robot is a crate implementing [`Hardware`]
//! (`naobroker-backend-sim`, `-serial`, `-lola`); the DCM (`naobroker-dcm`) runs any of
//! them and knows none.
#![deny(unsafe_code, unreachable_pub)]

mod answers;
pub mod link;
pub mod time;

pub use answers::{AnswerChanges, AnswerCounts};

use std::sync::Arc;
use std::time::Duration;

use crate::time::DcmTime;
use link::LinkHealth;

/// The hardware's next cycle, ready to run ([`Hardware::wait_cycle`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HardwareCycle {
    /// The hardware's cycles that passed unrun just before this one (the thread was late;
    /// the hardware had its answer meanwhile).
    pub missed: u64,
    /// The hardware asks the DCM to put [`Hardware::takeover`]'s commands in place of its
    /// buffers this cycle (the link came back: `[dcm.lola] on_link_loss = "relax"`).
    pub take_over: bool,
}

/// A command the hardware puts in place of an actuator's buffered commands (`ClearAll`)
/// when the link to the robot comes back ([`HardwareCycle::take_over`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Takeover {
    /// Hold `actuator` at what `sensor` reads this cycle (a joint where it is).
    Hold { actuator: usize, sensor: usize },
    /// Take `actuator` from `from` now to `to` in `ramp_ms` (a stiffness to 0).
    Ramp { actuator: usize, from: f64, to: f64, ramp_ms: u32 },
}

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

    /// Count the devices' answers received since the last call: what every actuator's
    /// device answered alike ([`AnswerCounts::add_to_every`], once for all), what one
    /// answered on its own ([`AnswerCounts::add`]). Called once per cycle, after
    /// `write_actuators`. By default every write is acknowledged at once: a backend whose
    /// writes cannot fail, as the simulation.
    fn count_answers(&mut self, answers: &mut AnswerCounts) {
        answers.add_to_every(1, 0);
    }

    /// Force a sensor to a value (`None` releases it). Only a simulation can.
    fn force_sensor(&mut self, _sensor: usize, _value: Option<f64>) -> bool {
        false
    }

    fn is_simulation(&self) -> bool {
        false
    }

    /// The hardware's own cycle, in µs, when it clocks the DCM (LoLA: 12 000): the cycle
    /// thread then runs one cycle per [`Hardware::wait_cycle`] that says one is ready, and
    /// DCM time advances by this period per hardware cycle. `None` (the default): the
    /// DCM's clock runs the cycle.
    fn clock_period_us(&self) -> Option<u32> {
        None
    }

    /// A hardware that clocks the DCM: wait at most `timeout` for its next cycle, `None`
    /// when none came. Returns within `timeout` without allocating, locking or logging.
    fn wait_cycle(&mut self, timeout: Duration) -> Option<HardwareCycle> {
        std::thread::park_timeout(timeout);
        None
    }

    /// The commands to put in place of the DCM's buffers when a cycle says
    /// [`HardwareCycle::take_over`].
    fn takeover(&self) -> &[Takeover] {
        &[]
    }

    /// The health of a link to the robot that can drop and come back, shared with the
    /// actor side (`DCM.stats`, ALMemory's `HAL/Link/*`, the log). Asked once, at start.
    fn link_health(&self) -> Option<Arc<LinkHealth>> {
        None
    }
}
