//! The DCM's method handlers: timed commands and aliases, the clock, `special`,
//! statistics, simulated sensors, and the preferences and calibration its settings keep.

use std::future::Future;
use std::sync::Arc;

use naobroker_dcm::cycle::ClockMode;
use naobroker_dcm::time::DcmTime;
use naobroker_framework::{CallError, ModuleContext, Value};
use naobroker_robot::device::{DEVICE_PREFIX, SUBDEVICE_PREFIX};
use tokio::sync::oneshot;

use crate::cycle_events::StepWaiter;
use crate::dcm::Dcm;
use crate::error::DcmError;
use crate::link;
use crate::parse;

/// `set([name, update, [[value, time(, importance)], ...]])`.
pub(crate) fn set(dcm: &mut Dcm, (request,): (Value,)) -> Result<(), DcmError> {
    let request = dcm.parser().set(&request)?;
    Ok(dcm.handle.channel().send(request)?)
}

/// `setAlias` in the time-mixed or time-separate format.
pub(crate) fn set_alias(dcm: &mut Dcm, (request,): (Value,)) -> Result<(), DcmError> {
    let request = dcm.parser().set_alias(&request)?;
    Ok(dcm.handle.channel().send(request)?)
}

pub(crate) fn create_alias(dcm: &mut Dcm, (alias,): (Value,)) -> Result<Value, DcmError> {
    Ok(parse::create_alias(&mut dcm.aliases, dcm.handle.model(), &alias)?)
}

/// DCM time plus an offset, rolling over as the int32 clock does.
pub(crate) fn get_time(dcm: &mut Dcm, (offset,): (Option<i64>,)) -> Result<DcmTime, DcmError> {
    Ok(dcm.handle.shared().now().wrapping_add(offset.unwrap_or(0) as i32))
}

pub(crate) fn get_prefix(
    _dcm: &mut Dcm,
    (_ignored,): (Option<Value>,),
) -> Result<Vec<&'static str>, DcmError> {
    Ok(vec![SUBDEVICE_PREFIX, DEVICE_PREFIX])
}

pub(crate) fn special(dcm: &mut Dcm, (what,): (String,)) -> Result<Value, DcmError> {
    match what.as_str() {
        "Version" => Ok(Value::from(env!("CARGO_PKG_VERSION"))),
        "Reset" => {
            dcm.handle.channel().reset()?;
            Ok(Value::from(true))
        }
        "Config" => Ok(config(dcm)),
        "Chain" => Ok(chains(dcm)),
        "Diagnostic" => Ok(dcm.handle.cycle_stats()),
        _ => Err(DcmError::UnknownSpecial(what)),
    }
}

/// `special("Config")`: the robot and the cycle's settings.
fn config(dcm: &Dcm) -> Value {
    let (model, shared) = (dcm.handle.model(), dcm.handle.shared());
    Value::Map(vec![
        ("robot".into(), model.robot.as_str().into()),
        ("period_us".into(), shared.period_us.into()),
        ("clock".into(), format!("{:?}", shared.clock).to_lowercase().into()),
        ("buffer_capacity".into(), (shared.capacity as u64).into()),
        ("actuators".into(), (model.actuators.len() as u64).into()),
        ("sensors".into(), (model.sensors.len() as u64).into()),
    ])
}

/// `special("Chain")`: `[[chain, [joint, ...]], ...]` in the description's order.
fn chains(dcm: &Dcm) -> Value {
    let mut chains: Vec<(&str, Vec<Value>)> = Vec::new();
    for joint in &dcm.handle.model().joints {
        let name = Value::from(joint.name.as_str());
        match chains.iter_mut().find(|(chain, _)| *chain == joint.chain) {
            Some((_, joints)) => joints.push(name),
            None => chains.push((&joint.chain, vec![name])),
        }
    }
    let chains =
        chains.into_iter().map(|(chain, joints)| Value::Array(vec![chain.into(), Value::Array(joints)]));
    Value::Array(chains.collect())
}

/// Manual clock only: run `n` cycles, answer the new DCM time once they ran.
pub(crate) fn step(
    dcm: &mut Dcm,
    _context: &ModuleContext,
    (n,): (u64,),
) -> impl Future<Output = Result<DcmTime, CallError>> {
    let shared = Arc::clone(dcm.handle.shared());
    let manual = shared.clock == ClockMode::Manual;
    let waiter = (manual && n > 0).then(|| {
        let (done, finished) = oneshot::channel();
        let cycle = shared.grant(n);
        dcm.waiters.borrow_mut().push(StepWaiter { cycle, done });
        finished
    });
    async move {
        if !manual {
            let hardware = shared.clock == ClockMode::Hardware;
            return Err(if hardware { DcmError::HardwareClock } else { DcmError::NotManualClock }.into());
        }
        if let Some(finished) = waiter {
            finished.await.map_err(|_| DcmError::CycleStopped)?;
        }
        Ok(shared.now())
    }
}

/// The cycle's statistics and whether the cycle runs real-time.
pub(crate) fn stats(dcm: &mut Dcm, (): ()) -> Result<Value, DcmError> {
    let mut stats = match dcm.handle.cycle_stats() {
        Value::Map(entries) => entries,
        _ => Vec::new(),
    };
    let shared = dcm.handle.shared();
    let realtime = shared.slots.get(shared.dcm_slots.realtime) != 0.0;
    stats.push(("realtime".into(), realtime.into()));
    stats.push(("period_us".into(), shared.period_us.into()));
    if let Some(link) = &shared.link {
        stats.push(("link".into(), link::stats_value(link)));
    }
    Ok(Value::Map(stats))
}

/// Simulation only: force a sensor to `value`; `None` gives it back to the simulation.
pub(crate) fn simulate_sensor(dcm: &mut Dcm, (name, value): (String, Option<f64>)) -> Result<(), DcmError> {
    let sensor = dcm.handle.model().sensor(&name).ok_or(DcmError::UnknownSensor(name))?;
    let shared = dcm.handle.shared();
    if shared.slots.get(shared.dcm_slots.simulation) == 0.0 {
        return Err(DcmError::NotSimulated);
    }
    Ok(dcm.handle.channel().force_sensor(sensor, value)?)
}

pub(crate) fn get_buffer_size(dcm: &mut Dcm, (name,): (String,)) -> Result<u64, DcmError> {
    let actuator = dcm.handle.actuator(&name)?;
    Ok(dcm.handle.shared().buffer_len(actuator) as u64)
}

/// `preferences(action, target, key, value)`: `Add`, `Save` or `Load` preferences.
pub(crate) fn preferences(
    dcm: &mut Dcm,
    request: (String, String, Option<String>, Option<Value>),
) -> Result<u64, DcmError> {
    dcm.settings.preferences(&dcm.handle, dcm.broker.limits(), request)
}

/// `calibration([joint position actuator, "Manual", "InPosition", reference])`.
pub(crate) fn calibration(dcm: &mut Dcm, (input,): (Value,)) -> Result<(), DcmError> {
    dcm.settings.calibration(&dcm.handle, &input)
}
