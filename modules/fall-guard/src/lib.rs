//! FallGuard: an example of a module compiled into a broker of your own, with a
//! real-time `atPostProcess` hook (docs/modules.md). naobroker does not run it: ALMotion's
//! fall manager protects the robot (docs/motion.md); this is the smallest hook to copy.
//! `tests/in_process.rs` starts a broker in-process and adds it, as your own binary would.
//!
//! Each DCM cycle the hook reads the inertial unit's angles through ALMemory's fast
//! access; past the tilt threshold it queues stiffness 0 for every joint on the cycle
//! thread itself (applied by the next cycle, before anything else can run) and keeps
//! them off until `reset`. The event `FallGuard/Triggered` is raised off the real-time
//! thread, by the module's actor, when it sees the latch.
#![deny(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use naobroker_dcm::cycle::ChannelError;
use naobroker_dcm_module::{DcmHandle, HookConnection, UnknownActuator};
use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext, Value};
use naobroker_rtslots::NotRealTimeKey;
use serde::Deserialize;

/// The module's settings (a broker of your own reads them where it likes). There is no
/// on/off switch: a broker that does not want FallGuard does not add it.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FallGuardConfig {
    /// Tilt (rad, |AngleX| or |AngleY|) past which the robot is falling.
    pub tilt_rad: f64,
}

impl Default for FallGuardConfig {
    fn default() -> Self {
        FallGuardConfig { tilt_rad: 0.6 }
    }
}

/// What the hook and the actor share: atomics only.
#[derive(Default)]
struct Latch {
    triggered: AtomicBool,
    /// DCM time of the cycle that saw the tilt.
    at_time: AtomicI32,
    reported: AtomicBool,
}

/// Why FallGuard cannot watch this robot: what its hook needs is missing, or the DCM
/// refused the hook.
#[derive(Debug, thiserror::Error)]
pub enum FallGuardError {
    /// The robot has no inertial unit's angles to read.
    #[error(transparent)]
    NoAngles(#[from] NotRealTimeKey),
    /// A joint without a stiffness actuator.
    #[error(transparent)]
    NoStiffness(#[from] UnknownActuator),
    #[error(transparent)]
    Hook(#[from] ChannelError),
}

pub struct FallGuard {
    latch: Arc<Latch>,
    tilt_rad: f64,
    broker: Broker,
    _hook: HookConnection,
}

impl FallGuard {
    /// Resolve everything the hook needs, then register it on the DCM cycle.
    pub fn new(
        dcm: &DcmHandle,
        broker: Broker,
        config: &FallGuardConfig,
    ) -> Result<FallGuard, FallGuardError> {
        let angles = dcm.fast_access(&[
            "Device/SubDeviceList/InertialSensor/AngleX/Sensor/Value",
            "Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value",
        ])?;
        let stiffness: Vec<usize> = dcm
            .model()
            .joints
            .iter()
            .map(|joint| dcm.actuator(&format!("{}/Hardness/Actuator/Value", joint.name)))
            .collect::<Result<_, _>>()?;
        let latch = Arc::new(Latch::default());
        let hook_latch = Arc::clone(&latch);
        let tilt = config.tilt_rad;
        // Runs on the DCM thread: reads atomics, writes to preallocated queues, nothing else.
        let hook = dcm.at_post_process("FallGuard", move |cycle| {
            let falling = angles.get(0).abs() > tilt || angles.get(1).abs() > tilt;
            if falling && !hook_latch.triggered.load(Ordering::Acquire) {
                hook_latch.at_time.store(cycle.time, Ordering::Release);
                hook_latch.triggered.store(true, Ordering::Release);
            }
            if hook_latch.triggered.load(Ordering::Acquire) {
                for &actuator in &stiffness {
                    cycle.set(actuator, 0.0);
                }
            }
        })?;
        Ok(FallGuard { latch, tilt_rad: config.tilt_rad, broker, _hook: hook })
    }
}

impl Module for FallGuard {
    fn name(&self) -> String {
        "FallGuard".into()
    }

    fn description(&self) -> String {
        "Cuts every joint's stiffness when the robot tilts past a threshold, from the DCM cycle itself."
            .into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("isTriggered", "Whether a fall was detected (until reset).", |this, _, ()| {
            Ok(this.latch.triggered.load(Ordering::Acquire))
        })
        .add("getThreshold", "Tilt threshold in rad.", |this, _, ()| Ok(this.tilt_rad))
        .add("reset", "Re-arm after a fall; stiffness stays where it is.", |this, _, ()| {
            this.latch.reported.store(false, Ordering::Release);
            this.latch.triggered.store(false, Ordering::Release);
            Ok::<(), CallError>(())
        });
    }

    fn started(&mut self, _context: &ModuleContext) {
        let latch = Arc::clone(&self.latch);
        let broker = self.broker.clone();
        let mut cycles = broker.subscribe_local("DCM/PostProcess");
        actix_rt::spawn(async move {
            while cycles.next().await.is_some() {
                if latch.triggered.load(Ordering::Acquire) && !latch.reported.swap(true, Ordering::AcqRel) {
                    let time = latch.at_time.load(Ordering::Acquire);
                    tracing::warn!(time, "fall detected: stiffness off");
                    if let Err(error) = broker.raise_event("FallGuard/Triggered", Value::from(time)) {
                        tracing::error!(%error, "could not raise FallGuard/Triggered");
                    }
                }
            }
        });
    }
}
