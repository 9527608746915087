//! ALMotion's methods that describe the robot and the module: joint angles, names and
//! limits, the cycle period and the counters.

use std::sync::atomic::{AtomicU64, Ordering};

use naobroker_framework::{CallError, ModuleContext, Value};

use super::ALMotion;

/// The commanded angles of the joints, or the measured ones (`useSensors`).
pub(super) fn get_angles(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names, use_sensors): (Value, bool),
) -> Result<Vec<f64>, CallError> {
    let body = &this.client.body;
    this.joints(&names)?
        .iter()
        .map(|&joint| {
            let motor = body.joints[joint].motor;
            if use_sensors {
                let index = this
                    .slots
                    .layout()
                    .index_of(&body.motors[motor].sensor_key)
                    .ok_or_else(|| CallError::new("no position sensor"))?;
                Ok(this.slots.get(index))
            } else {
                Ok(this.client.shared.position(motor))
            }
        })
        .collect()
}

pub(super) fn get_body_names(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name,): (String,),
) -> Result<Vec<String>, CallError> {
    Ok(this.client.body.body_names(&name)?)
}

/// `[min, max, maxVelocity, maxTorque]` of each joint.
pub(super) fn get_limits(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names,): (Value,),
) -> Result<Vec<Vec<f64>>, CallError> {
    Ok(this
        .joints(&names)?
        .iter()
        .map(|&joint| {
            let spec = &this.client.body.joints[joint].spec;
            vec![spec.min, spec.max, spec.max_velocity, spec.max_torque]
        })
        .collect())
}

pub(super) fn get_sensor_names(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> Result<Vec<String>, CallError> {
    Ok(this.client.body.joints.iter().map(|joint| joint.name.clone()).collect())
}

pub(super) fn get_motion_cycle_time(
    this: &mut ALMotion,
    _: &ModuleContext,
    (): (),
) -> Result<i32, CallError> {
    Ok(this.period_ms)
}

/// The motion thread's counters, as a map.
pub(super) fn stats(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Value, CallError> {
    let shared = &this.client.shared;
    let load = |counter: &AtomicU64| Value::from(counter.load(Ordering::Relaxed));
    Ok(Value::Map(vec![
        ("cycles".into(), load(&shared.cycles)),
        ("skipped".into(), load(&shared.skipped)),
        ("refused".into(), load(&shared.refused)),
        ("collision_stops".into(), load(&shared.collision_stops)),
        ("reports_dropped".into(), load(&shared.reports_dropped)),
    ]))
}
