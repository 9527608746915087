//! LedBreather: the chest and eye LEDs breathe. The whole choreography for the next
//! seconds goes to the DCM in one `setAlias` time-separate request (seed 000: "send a
//! whole choreography to many actuators at the same time"); before it runs out, the
//! next part replaces its tail with `ClearAfter`.
#![deny(unsafe_code)]

use std::cell::Cell;
use std::f64::consts::PI;
use std::rc::Rc;
use std::time::Duration;

use naobroker_framework::{CallError, Methods, Module, ModuleContext, Proxy, Value};

pub const ALIAS: &str = "BreathingLeds";
/// Time between two key frames of the choreography.
pub const KEY_MS: i32 = 100;
/// Length of one request.
pub const CHUNK_MS: i32 = 4000;
/// Send the next part when this much of the current one is left.
pub const REFRESH_MS: i32 = 2000;

/// Intensity at `t` ms after the start: 0 → 1 → 0 every `period_ms`.
pub fn breath(t: i32, period_ms: i32) -> f64 {
    0.5 - 0.5 * (2.0 * PI * f64::from(t) / f64::from(period_ms)).cos()
}

pub fn led_names() -> Vec<String> {
    let mut names: Vec<String> =
        ["Red", "Green", "Blue"].iter().map(|c| format!("ChestBoard/Led/{c}/Actuator/Value")).collect();
    for colour in ["Red", "Green", "Blue"] {
        for side in ["Left", "Right"] {
            for angle in (0..360).step_by(45) {
                names.push(format!("Face/Led/{colour}/{side}/{angle}Deg/Actuator/Value"));
            }
        }
    }
    names
}

#[derive(Default)]
struct State {
    start: Cell<i32>,
    sent_until: Cell<i32>,
    refreshes: Cell<u64>,
}

pub struct LedBreather {
    period_ms: i32,
    state: Rc<State>,
}

impl LedBreather {
    pub fn new(period_ms: i32) -> LedBreather {
        LedBreather { period_ms, state: Rc::default() }
    }
}

/// `setAlias` time-separate for the key frames in `[from, until)`.
fn choreography(start: i32, from: i32, until: i32, period_ms: i32, leds: usize, update: &str) -> Value {
    let times: Vec<i32> = (from..until).step_by(KEY_MS as usize).collect();
    let values: Vec<Value> =
        times.iter().map(|&t| Value::F64(breath(t.wrapping_sub(start), period_ms))).collect();
    Value::Array(vec![
        ALIAS.into(),
        update.into(),
        "time-separate".into(),
        0.into(),
        Value::Array(times.into_iter().map(Value::from).collect()),
        Value::Array(vec![Value::Array(values); leds]),
    ])
}

async fn breathe(dcm: Proxy, state: Rc<State>, period_ms: i32) -> Result<(), CallError> {
    let leds = led_names();
    let alias =
        Value::Array(vec![ALIAS.into(), Value::Array(leds.iter().map(|n| n.as_str().into()).collect())]);
    dcm.call("createAlias", (alias,)).await?;
    let start: i32 = dcm.call_as("getTime", (KEY_MS,)).await?;
    state.start.set(start);
    let until = start.wrapping_add(CHUNK_MS);
    dcm.call("setAlias", (choreography(start, start, until, period_ms, leds.len(), "ClearAll"),)).await?;
    state.sent_until.set(until);
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now: i32 = dcm.call_as("getTime", (0,)).await?;
        let sent_until = state.sent_until.get();
        if sent_until.wrapping_sub(now) > REFRESH_MS {
            continue;
        }
        // The next part starts on the current part's last key frame and replaces what followed.
        let from = sent_until.wrapping_sub(KEY_MS);
        let until = sent_until.wrapping_add(CHUNK_MS - REFRESH_MS);
        dcm.call("setAlias", (choreography(start, from, until, period_ms, leds.len(), "ClearAfter"),))
            .await?;
        state.sent_until.set(until);
        state.refreshes.set(state.refreshes.get() + 1);
    }
}

impl Module for LedBreather {
    fn name(&self) -> String {
        "LedBreather".into()
    }

    fn description(&self) -> String {
        "Chest and eye LEDs breathe: whole choreographies sent ahead with setAlias.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("getStart", "[DCM time the breathing started, period in ms].", |this, _, ()| {
            Ok((this.state.start.get(), this.period_ms))
        })
        .add(
            "getRefreshes",
            "How many times the choreography was extended with ClearAfter.",
            |this, _, ()| Ok(this.state.refreshes.get()),
        );
    }

    fn started(&mut self, context: &ModuleContext) {
        let dcm = context.proxy("DCM");
        let state = Rc::clone(&self.state);
        let period = self.period_ms;
        actix_rt::spawn(async move {
            if let Err(error) = breathe(dcm, state, period).await {
                tracing::error!(%error, "breathing stopped");
            }
        });
    }
}
