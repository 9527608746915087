//! The DCM module: NAOqi's DCM API over the real-time cycle, its state on the broker's
//! thread and its method table. The handlers live in `methods.rs` and `settings.rs`.

use std::cell::RefCell;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm::core::Aliases;
use naobroker_dcm::cycle::CycleReport;
use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext};
use naobroker_memory::Store;

use crate::cycle_events::{follow_cycles, StepWaiter};
use crate::error::DcmError;
use crate::handle::DcmHandle;
use crate::methods;
use crate::parse::RequestParser;
use crate::settings::{self, Settings};

/// The DCM module: NAOqi's DCM API over the real-time cycle.
pub struct Dcm {
    pub(crate) handle: DcmHandle,
    pub(crate) aliases: Aliases,
    pub(crate) waiters: Rc<RefCell<Vec<StepWaiter>>>,
    /// The cycle's reports and wake-ups, until `started` follows them.
    signal: Option<(rtrb::Consumer<CycleReport>, UnixDatagram)>,
    pub(crate) broker: Broker,
    event_decimation: u64,
    pub(crate) settings: Settings,
}

impl Dcm {
    pub fn new(
        handle: DcmHandle,
        reports: rtrb::Consumer<CycleReport>,
        wake: UnixDatagram,
        broker: Broker,
        event_decimation: u32,
    ) -> Dcm {
        let settings = Settings::new(handle.model());
        Dcm {
            handle,
            settings,
            aliases: Aliases::default(),
            waiters: Rc::default(),
            signal: Some((reports, wake)),
            broker,
            event_decimation: u64::from(event_decimation.max(1)),
        }
    }

    /// Show the preferences in ALMemory's `store`, and save them into `description` (the
    /// robot description file the broker started with, if any).
    pub fn with_preferences(mut self, store: Arc<Store>, description: Option<PathBuf>) -> Dcm {
        self.settings.attach(store, description);
        self
    }

    pub(crate) fn parser(&self) -> RequestParser<'_> {
        RequestParser { model: self.handle.model(), aliases: &self.aliases }
    }
}

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
            answered(settings::preferences),
        )
        .add(
            "calibration",
            "calibration([joint position actuator, \"Manual\", \"InPosition\", reference]): the joint, \
             held at reference, is calibrated there.",
            answered(settings::calibration),
        )
        .add(
            "getBufferSize",
            "Timed commands buffered for an actuator (as of the last cycle).",
            answered(methods::get_buffer_size),
        );
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.settings.publish_all(&self.handle);
        if let Some((reports, wake)) = self.signal.take() {
            follow_cycles(self, reports, wake, self.event_decimation);
        }
    }
}
