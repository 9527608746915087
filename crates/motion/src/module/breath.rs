//! ALMotion's breath methods: `setBreathEnabled`/`getBreathEnabled` per chain ("Body",
//! "Legs", "Arms", "LArm", "RArm", "Head") and `setBreathConfig`/`getBreathConfig` (NAOqi's
//! `[["Bpm", 12], ["Amplitude", 0.5]]` by default). The animation runs on the motion thread
//! (`engine/breath.rs`); the API keeps what the calls set, to answer the getters at once.

use std::cell::Cell;

use naobroker_framework::{CallError, Methods, ModuleContext, Value};
use naobroker_protocol::value_excerpt;

use super::ALMotion;
use crate::engine::breath::{clipped_amplitude, BPM_RANGE};
use crate::engine::ToEngine;

/// The chains NAOqi breathes on.
const CHAINS: [&str; 6] = ["Body", "Legs", "Arms", "LArm", "RArm", "Head"];

/// What the breath calls set: the motors breath is on, its rate and amplitude.
pub(super) struct BreathSettings {
    enabled: Cell<u64>,
    config: Cell<(f64, f64)>,
}

impl Default for BreathSettings {
    fn default() -> BreathSettings {
        BreathSettings { enabled: Cell::new(0), config: Cell::new((12.0, 0.5)) }
    }
}

pub(super) fn add_to(m: &mut Methods<ALMotion>) {
    m.add(
        "setBreathEnabled",
        "setBreathEnabled(chainName, enable): the idle breath animation on Body, Legs, Arms, LArm, RArm or \
         Head; any task on a joint takes it over.",
        set_breath_enabled,
    )
    .add("getBreathEnabled", "getBreathEnabled(chainName): whether the chain breathes.", get_breath_enabled)
    .add(
        "setBreathConfig",
        "setBreathConfig([[\"Bpm\", 5..30], [\"Amplitude\", 0..1]]): the breath's rate and amplitude \
         (the amplitude clipped: only 0 at 30 Bpm).",
        set_breath_config,
    )
    .add("getBreathConfig", "[[\"Bpm\", bpm], [\"Amplitude\", amplitude]].", get_breath_config);
}

/// The motors of a breath chain.
fn chain_motors(this: &ALMotion, chain: &str) -> Result<u64, CallError> {
    if !CHAINS.contains(&chain) {
        return Err(CallError::bad_argument(format!(
            "chainName: expected one of {}, got {:?}",
            CHAINS.join(", "),
            value_excerpt(&Value::from(chain))
        )));
    }
    let joints = this.client.body.expand(chain)?;
    Ok(this.client.body.motor_mask(&joints))
}

fn set_breath_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain, on): (String, bool),
) -> Result<(), CallError> {
    let motors = chain_motors(this, &chain)?;
    this.client.send(ToEngine::Breath { motors, on })?;
    let settings = &this.client.breath;
    let enabled = settings.enabled.get();
    settings.enabled.set(if on { enabled | motors } else { enabled & !motors });
    Ok(())
}

fn get_breath_enabled(
    this: &mut ALMotion,
    _: &ModuleContext,
    (chain,): (String,),
) -> Result<bool, CallError> {
    let motors = chain_motors(this, &chain)?;
    Ok(motors != 0 && this.client.breath.enabled.get() & motors == motors)
}

fn set_breath_config(this: &mut ALMotion, _: &ModuleContext, (config,): (Value,)) -> Result<(), CallError> {
    let bad = |what: &Value| {
        CallError::bad_argument(format!(
            "expected [[\"Bpm\", {} to {}], [\"Amplitude\", 0 to 1]] (either or both), got {}",
            BPM_RANGE.0,
            BPM_RANGE.1,
            value_excerpt(what)
        ))
    };
    let (mut bpm, mut amplitude) = this.client.breath.config.get();
    for pair in config.as_array().ok_or_else(|| bad(&config))? {
        let (name, value) = match pair.as_array().map(Vec::as_slice) {
            Some([name, value]) => (name.as_str(), value.as_f64().filter(|v| v.is_finite())),
            _ => return Err(bad(pair)),
        };
        match (name, value) {
            (Some("Bpm"), Some(value)) if (BPM_RANGE.0..=BPM_RANGE.1).contains(&value) => bpm = value,
            (Some("Amplitude"), Some(value)) if (0.0..=1.0).contains(&value) => amplitude = value,
            _ => return Err(bad(pair)),
        }
    }
    let amplitude = clipped_amplitude(bpm, amplitude);
    this.client.send(ToEngine::BreathConfig { bpm, amplitude })?;
    this.client.breath.config.set((bpm, amplitude));
    Ok(())
}

fn get_breath_config(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Value, CallError> {
    let (bpm, amplitude) = this.client.breath.config.get();
    let pair = |name: &str, value: f64| Value::Array(vec![name.into(), value.into()]);
    Ok(Value::Array(vec![pair("Bpm", bpm), pair("Amplitude", amplitude)]))
}
