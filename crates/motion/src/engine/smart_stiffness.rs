//! Smart stiffness's step within a motion cycle: an idle, unloaded joint whose stiffness
//! ALMotion set is lowered; while the switch is off, or once the joint is driven again,
//! a lowered joint gets its full stiffness back.

use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::time::DcmTime;

use super::{Channel, Engine};

/// Smart stiffness lowers a joint idle this many cycles...
const SMART_IDLE_CYCLES: u32 = 25;
/// ... and holding less than this current (A) ...
const SMART_LOAD_A: f64 = 0.2;
/// ... to this fraction of its stiffness.
const SMART_FACTOR: f64 = 0.6;

impl Engine {
    /// After the tasks: the motors whose positions or stiffness this cycle sent are not
    /// idle.
    pub(super) fn smart_stiffness_step(
        &mut self,
        positions_sent: u64,
        stiffness_sent: u64,
        target_time: DcmTime,
        request: &mut Request,
    ) {
        let on = self.switches.smart_stiffness();
        for motor in 0..self.motors.len() {
            // Off, or the joint moves again (the walk drives legs that stood idle): its
            // full stiffness back.
            let driven = positions_sent & (1 << motor) != 0;
            if (!on || driven) && self.motors[motor].smart_lowered {
                let state = &mut self.motors[motor];
                state.smart_lowered = false;
                state.sent_stiffness = Some(state.stiffness);
                let command = TimedCommand { time: target_time, value: state.stiffness };
                request.push_command(
                    self.body.motors[motor].stiffness_actuator,
                    UpdateType::ClearAll,
                    command,
                );
            }
            if driven {
                continue;
            }
            let stiffness_owned = self.owner(motor, Channel::Stiffness).is_some();
            let state = &mut self.motors[motor];
            state.idle_cycles = state.idle_cycles.saturating_add(1);
            // Only stiffness ALMotion itself set: a module driving it through the DCM
            // is never second-guessed.
            let smart = on
                && state.sent_stiffness.is_some()
                && !state.external_stiffness
                && !state.smart_lowered
                && stiffness_sent & (1 << motor) == 0
                && state.idle_cycles >= SMART_IDLE_CYCLES
                && state.stiffness > 0.0
                && self.currents_read[motor].abs() < SMART_LOAD_A;
            if smart && !stiffness_owned {
                state.smart_lowered = true;
                let value = state.stiffness * SMART_FACTOR;
                state.sent_stiffness = Some(value);
                let command = TimedCommand { time: target_time, value };
                request.push_command(
                    self.body.motors[motor].stiffness_actuator,
                    UpdateType::ClearAll,
                    command,
                );
            }
        }
    }
}
