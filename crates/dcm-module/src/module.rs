//! The DCM's face as a broker module: its name, its method table (the handlers live in
//! `methods.rs`) and, once started, its preferences shown and the cycle followed.

use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{CallError, Methods, Module, ModuleContext};

use crate::cycle_events::follow_cycles;
use crate::dcm::Dcm;
use crate::error::DcmError;
use crate::link::follow_link;
use crate::methods;
use crate::recording;

/// A handler that answers at once, with the DCM's typed errors put into words.
fn answered<A, R>(
    handler: fn(&mut Dcm, A) -> Result<R, DcmError>,
) -> impl Fn(&mut Dcm, &ModuleContext, A) -> Result<R, CallError> {
    move |dcm, _context, arguments| Ok(handler(dcm, arguments)?)
}

impl Module for Dcm {
    fn name(&self) -> String {
        "DCM".into()
    }

    fn description(&self) -> String {
        "Device Communication Manager: timed commands to every actuator, interpolated each cycle.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "set",
            "set([name, update, [[value, time(, importance)], ...]]): timed commands for an actuator or \
             alias.",
            answered(methods::set),
        )
        .add(
            "setAlias",
            "setAlias([alias, update, \"time-mixed\", [[[v, t], ...] per actuator]]) or ([alias, update, \
             \"time-separate\", 0, [times], [[values] per actuator]]).",
            answered(methods::set_alias),
        )
        .add(
            "createAlias",
            "createAlias([alias, [actuator, ...]]): answers the input with unknown names replaced by \"\".",
            answered(methods::create_alias),
        )
        .add("getTime", "DCM time in ms plus an offset (int32, rolls over).", answered(methods::get_time))
        .add(
            "getPrefix",
            "[\"Device/SubDeviceList/\", \"Device/DeviceList/\"].",
            answered(methods::get_prefix),
        )
        .add(
            "special",
            "special(\"Version\" | \"Reset\" | \"Config\" | \"Chain\" | \"Diagnostic\").",
            answered(methods::special),
        )
        .add_async("step", "Manual clock only: run n cycles, answer the new DCM time.", methods::step)
        .add(
            "stats",
            "Cycle statistics: cycles, overruns, lateness histogram, compute time, hooks.",
            answered(methods::stats),
        )
        .add(
            "simulateSensor",
            "Simulation only: force a sensor to a value (nil releases it).",
            answered(methods::simulate_sensor),
        )
        .add(
            "preferences",
            "preferences(action, target, key, value): \"Add\" a key to the target \"Chest\", \"Head\" or \
             \"Local\"; \"Save\" or \"Load\" a target (or \"All\") to or from the robot description. Answers \
             the keys added, saved or loaded.",
            answered(methods::preferences),
        )
        .add(
            "calibration",
            "calibration([joint position actuator, \"Manual\", \"InPosition\", reference]): the joint, \
             held at reference, is calibrated there.",
            answered(methods::calibration),
        )
        .add(
            "getBufferSize",
            "Timed commands buffered for an actuator (as of the last cycle).",
            answered(methods::get_buffer_size),
        )
        .add(
            "record",
            "record([key, ...]): record real-time keys every cycle; answers the id. Rows arrive as the \
             event DCM/Record/<id> while someone subscribes to it (docs/recording.md).",
            |dcm, _context, keys| Ok(recording::record(&mut dcm.recordings, &dcm.handle, &dcm.broker, keys)?),
        )
        .add(
            "stopRecord",
            "stopRecord(id): end a recording (the rows already recorded are still sent).",
            |dcm, _context, id| Ok(recording::stop_record(&mut dcm.recordings, id)?),
        );
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.settings.publish_all(&self.handle);
        if let Some(signal) = self.signal.take() {
            let (waiters, shared) = (Rc::clone(&self.waiters), Arc::clone(self.handle.shared()));
            follow_cycles(signal, waiters, shared, self.broker.clone(), self.event_decimation);
        }
        if let Some(link) = &self.handle.shared().link {
            follow_link(Arc::clone(link), self.settings.store().cloned());
        }
    }
}
