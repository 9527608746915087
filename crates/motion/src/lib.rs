//! ALMotion: a motion cycle synchronized to the DCM (every 2nd DCM cycle at 10 ms)
//! that turns tasks (angles, key frames, stiffness) into timed DCM commands, with its
//! reflexes: smart stiffness, the fall manager, collision protection of the arms.
#![deny(unsafe_code, unreachable_pub)]

pub mod body;
pub mod cartesian;
pub mod collision;
pub mod engine;
mod events;
pub mod fall;
mod module;
pub mod reflexes;
pub mod runner;
pub mod self_collision;
mod shapes;
pub mod trajectory;

use std::sync::Arc;

use naobroker_dcm::cycle::{ChannelError, ClockMode, RequestChannel};
use naobroker_dcm_module::DcmHandle;
use naobroker_framework::Broker;
use naobroker_rtslots::NotRealTimeKey;
use serde::Deserialize;

pub use fall::FallManagerConfig;
pub use module::ALMotion;

/// `[motion]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MotionConfig {
    /// Motion cycle period; a multiple of the DCM period. Under a robot that clocks the DCM
    /// (LoLA) ALMotion runs every cycle of the robot's (12 ms) instead: the walk switches its
    /// support foot on the foot sensors of every cycle.
    pub period_ms: u32,
    /// `[motion.fall_manager]`.
    pub fall_manager: FallManagerConfig,
}

impl Default for MotionConfig {
    fn default() -> Self {
        MotionConfig { period_ms: 20, fall_manager: FallManagerConfig::default() }
    }
}

/// Why ALMotion did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("[motion] period_ms = {period_ms} is not a multiple of the DCM period ({dcm_period_us} µs)")]
    Period { period_ms: u32, dcm_period_us: u32 },
    #[error("[motion.fall_manager] tilt_rad = {0}: a positive angle in rad")]
    Tilt(f64),
    /// The robot lacks a device a joint needs, or its kinematic model is wrong.
    #[error(transparent)]
    Body(#[from] body::BodyError),
    /// A joint's key is not among the DCM's real-time keys.
    #[error(transparent)]
    Slots(#[from] NotRealTimeKey),
    #[error("cannot start the motion thread: {0}")]
    Thread(#[from] std::io::Error),
    /// The DCM did not take the hook that drives the motion thread.
    #[error(transparent)]
    Hook(#[from] ChannelError),
}

/// Start the motion thread and its DCM hook; the module to add to the broker, and the thread's
/// counters (for a watch that logs their growth).
/// `dcm_priority` is the DCM's SCHED_FIFO priority: the motion thread runs just below.
pub fn start(
    config: &MotionConfig,
    dcm: &DcmHandle,
    channel: RequestChannel,
    broker: Broker,
    dcm_priority: u8,
) -> Result<(ALMotion, Arc<runner::MotionShared>), StartError> {
    let shared = Arc::clone(dcm.shared());
    let dcm_period_us = shared.period_us;
    let motion_us = config.period_ms * 1000;
    let hardware_clock = shared.clock == ClockMode::Hardware;
    if motion_us == 0 || !(hardware_clock || motion_us.is_multiple_of(dcm_period_us)) {
        return Err(StartError::Period { period_ms: config.period_ms, dcm_period_us });
    }
    // The robot's own period cannot be chosen (LoLA: 12 ms), and a walk that skipped every
    // second of its sensor readings would feel its feet land late: every robot cycle.
    let ratio = if hardware_clock { 1 } else { motion_us / dcm_period_us };
    let period_ms = ratio * dcm_period_us / 1000;
    if hardware_clock {
        tracing::info!(
            asked_ms = config.period_ms,
            period_ms,
            "the robot clocks the DCM every {dcm_period_us} µs: ALMotion runs every cycle of it"
        );
    }
    let tilt = config.fall_manager.tilt_rad;
    if !(tilt.is_finite() && tilt > 0.0) {
        return Err(StartError::Tilt(tilt));
    }
    let ratio = u64::from(ratio);
    let body = Arc::new(body::Body::new(dcm.model())?);
    let engine =
        engine::Engine::new(Arc::clone(&body), &shared.slots, period_ms as i32, &config.fall_manager)?;
    if config.fall_manager.enabled && !engine.switches().fall_available() {
        tracing::warn!("the robot has no InertialSensor/AngleX and AngleY: ALMotion's fall manager is off");
    }
    // Just below the DCM, but not with the manual clock: it runs in lockstep.
    let priority = dcm_priority.saturating_sub(1);
    let priority = (shared.clock != ClockMode::Manual && priority > 0).then_some(priority);
    let (cycle, ports) = runner::prepare(engine, channel)?;
    let thread = runner::spawn(cycle, priority)?;
    let lockstep = shared.clock == ClockMode::Manual;
    let hook = dcm.at_post_process("ALMotion", ports.dcm_hook(Arc::clone(thread.pace()), ratio, lockstep))?;
    let started = runner::Started {
        thread,
        commands: ports.commands,
        reports: ports.reports.queue,
        wake: ports.reports.wake,
        shared: ports.shared,
    };
    broker.reserve_keys("ALMotion", events::UNPREFIXED_NAMES);
    let counters = Arc::clone(&started.shared);
    let motion = ALMotion::new(body, started, hook, Arc::clone(&shared.slots), broker, period_ms as i32);
    Ok((motion, counters))
}
