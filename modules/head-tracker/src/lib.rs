//! HeadTracker: a reactive module. Subscribed (NAOqi style) to `DCM/PostProcess` and
//! `ALMotion/PostProcess`, it reads the target in ALMemory (`Tracking/HeadTarget`, a
//! `[yaw, pitch]` pair that any module may write: a shared key, since keys under
//! `HeadTracker/` could be written by HeadTracker alone) and the head's sensors, and at every
//! motion cycle commands HeadYaw and HeadPitch through `ALMotion.setAngles`.
#![deny(unsafe_code)]

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use naobroker_framework::{CallError, CallbackSubscription, Methods, Module, ModuleContext, Value};

pub const TARGET_KEY: &str = "Tracking/HeadTarget";
const SENSORS: [&str; 2] = [
    "Device/SubDeviceList/HeadYaw/Position/Sensor/Value",
    "Device/SubDeviceList/HeadPitch/Position/Sensor/Value",
];

#[derive(Default)]
struct Counters {
    dcm_cycles: Cell<u64>,
    motion_cycles: Cell<u64>,
    /// |target − measured| at the last motion cycle, yaw + pitch.
    error: Cell<f64>,
}

#[derive(Default)]
pub struct HeadTracker {
    counters: Rc<Counters>,
}

impl Module for HeadTracker {
    fn name(&self) -> String {
        "HeadTracker".into()
    }

    fn description(&self) -> String {
        "The head follows Tracking/HeadTarget, commanded at every motion cycle.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "onDcmCycle",
            "Callback of DCM/PostProcess.",
            |this, _, (_name, _value, _message): (String, Value, Value)| {
                this.counters.dcm_cycles.set(this.counters.dcm_cycles.get() + 1);
                Ok(())
            },
        )
        .add_async(
            "onMotionCycle",
            "Callback of ALMotion/PostProcess: steer the head toward the target.",
            on_motion_cycle,
        )
        .add(
            "stats",
            "[DCM cycles seen, motion cycles seen, last tracking error].",
            |this, _, ()| {
                Ok((
                    this.counters.dcm_cycles.get(),
                    this.counters.motion_cycles.get(),
                    this.counters.error.get(),
                ))
            },
        );
    }

    fn started(&mut self, context: &ModuleContext) {
        let session = context.session().clone();
        let me = context.module_name().to_owned();
        actix_rt::spawn(async move {
            for (event, method) in
                [("DCM/PostProcess", "onDcmCycle"), ("ALMotion/PostProcess", "onMotionCycle")]
            {
                let subscription = CallbackSubscription {
                    event: event.into(),
                    module: me.clone(),
                    method: method.into(),
                    micro_message: None,
                };
                if let Err(error) = session.subscribe_callback(subscription).await {
                    tracing::error!(%error, event, "cannot subscribe");
                }
            }
        });
    }
}

/// At every motion cycle: read the target and the head's sensors, note the tracking error,
/// and command the head toward the target (nothing while no target was written).
fn on_motion_cycle(
    this: &mut HeadTracker,
    context: &ModuleContext,
    (_name, _value, _message): (String, Value, Value),
) -> impl Future<Output = Result<(), CallError>> {
    this.counters.motion_cycles.set(this.counters.motion_cycles.get() + 1);
    let memory = context.proxy("ALMemory");
    let motion = context.proxy("ALMotion");
    let counters = Rc::clone(&this.counters);
    async move {
        let Ok((yaw, pitch)) = memory.call_as::<(f64, f64), _>("getData", (TARGET_KEY,)).await else {
            return Ok(());
        };
        let measured: Vec<f64> = memory.call_as("getListData", (SENSORS,)).await?;
        counters.error.set((yaw - measured[0]).abs() + (pitch - measured[1]).abs());
        motion.call("setAngles", (["HeadYaw", "HeadPitch"], [yaw, pitch], 0.3)).await?;
        Ok(())
    }
}
