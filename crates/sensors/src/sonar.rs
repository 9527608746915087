//! ALSonar, NAOqi's sonar extractor: the sonar measures while at least one client is
//! subscribed, under a name of its own (`subscribe("myApplication")`), and stops when the
//! last one unsubscribes. It drives the DCM's `US/Actuator/Value` as NAOqi does: 68 (both
//! sides, continuous) on the first subscription, 0 after the last. The distances reach
//! ALMemory as the DCM's `US/Left/Sensor/Value` and `US/Right/Sensor/Value`; ALSensors
//! raises the sonar events from them (docs/sensors.md).

use std::future::Future;

use naobroker_framework::{CallError, Methods, Module, ModuleContext, Value};

/// The DCM's sonar actuator: the device, and its ALMemory key for `DCM.set`.
pub const SONAR_DEVICE: &str = "US/Actuator/Value";
const SONAR_ACTUATOR: &str = "Device/SubDeviceList/US/Actuator/Value";
/// NAOqi's mode for both sonars measuring continuously (64 and above is continuous).
const CONTINUOUS: f64 = 68.0;
const STOPPED: f64 = 0.0;
/// The sonar's own measuring period, what a subscriber gets unless it asks for another.
const DEFAULT_PERIOD_MS: i32 = 100;
const DEFAULT_PRECISION: f64 = 1.0;
/// Subscribers at once, all clients together, and the longest name: a client cannot make
/// the module hold more than this.
const MAX_SUBSCRIBERS: usize = 64;
const MAX_NAME_BYTES: usize = 256;
/// When the DCM applies a mode change: one of its cycles ahead, so that it is not late.
const AHEAD_MS: i32 = 10;

const OUTPUTS: [&str; 2] =
    ["Device/SubDeviceList/US/Left/Sensor/Value", "Device/SubDeviceList/US/Right/Sensor/Value"];
const EVENTS: [&str; 4] =
    ["SonarLeftDetected", "SonarRightDetected", "SonarLeftNothingDetected", "SonarRightNothingDetected"];

struct Subscriber {
    name: String,
    period_ms: i32,
    precision: f64,
}

/// The ALSonar module.
#[derive(Default)]
pub struct ALSonar {
    subscribers: Vec<Subscriber>,
}

impl ALSonar {
    fn find(&self, name: &str) -> Option<usize> {
        self.subscribers.iter().position(|subscriber| subscriber.name == name)
    }

    fn subscriber(&self, name: &str) -> Result<&Subscriber, CallError> {
        self.find(name).map(|index| &self.subscribers[index]).ok_or_else(|| not_subscribed(name))
    }

    fn current_period(&self) -> i32 {
        self.subscribers.iter().map(|s| s.period_ms).min().unwrap_or(DEFAULT_PERIOD_MS)
    }

    fn current_precision(&self) -> f64 {
        self.subscribers.iter().map(|s| s.precision).reduce(f64::max).unwrap_or(DEFAULT_PRECISION)
    }
}

fn not_subscribed(name: &str) -> CallError {
    CallError::not_found(format!("\"{}\" is not subscribed", quoted(name)))
}

/// At most 64 bytes of a name, for messages.
fn quoted(name: &str) -> &str {
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

fn checked_period(period_ms: i32) -> Result<i32, CallError> {
    if period_ms > 0 {
        Ok(period_ms)
    } else {
        Err(CallError::bad_argument(format!("period: expected a positive number of ms, got {period_ms}")))
    }
}

fn checked_precision(precision: f64) -> Result<f64, CallError> {
    if (0.0..=1.0).contains(&precision) {
        Ok(precision)
    } else {
        Err(CallError::bad_argument(format!("precision: expected a number in [0, 1], got {precision}")))
    }
}

/// Set the sonar's mode through the DCM, one DCM cycle ahead, when `mode` is given; the
/// call answers once the DCM took it.
fn drive(context: &ModuleContext, mode: Option<f64>) -> impl Future<Output = Result<(), CallError>> {
    let dcm = context.proxy("DCM");
    async move {
        let Some(mode) = mode else { return Ok(()) };
        let at = dcm.call_as::<i64, _>("getTime", (AHEAD_MS,)).await?;
        let command = Value::Array(vec![Value::from(mode), Value::from(at)]);
        let request =
            Value::Array(vec![SONAR_ACTUATOR.into(), "ClearAll".into(), Value::Array(vec![command])]);
        dcm.call("set", (request,)).await.map(drop)
    }
}

/// `subscribe(name, period, precision)`: the first subscriber starts the sonar. A name
/// already subscribed stays subscribed, with the period and precision given now.
fn subscribe(
    this: &mut ALSonar,
    context: &ModuleContext,
    (name, period_ms, precision): (String, Option<i32>, Option<f64>),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(CallError::bad_argument(format!(
            "name: expected 1 to {MAX_NAME_BYTES} bytes, got {}",
            name.len()
        )));
    }
    let period_ms = checked_period(period_ms.unwrap_or(DEFAULT_PERIOD_MS))?;
    let precision = checked_precision(precision.unwrap_or(DEFAULT_PRECISION))?;
    if let Some(index) = this.find(&name) {
        let subscriber = &mut this.subscribers[index];
        (subscriber.period_ms, subscriber.precision) = (period_ms, precision);
        return Ok(drive(context, None));
    }
    if this.subscribers.len() >= MAX_SUBSCRIBERS {
        return Err(CallError::refused(format!(
            "{MAX_SUBSCRIBERS} subscribers already (the limit); unsubscribe one first"
        )));
    }
    let first = this.subscribers.is_empty();
    this.subscribers.push(Subscriber { name, period_ms, precision });
    Ok(drive(context, first.then_some(CONTINUOUS)))
}

/// `unsubscribe(name)`: the last subscriber stops the sonar.
fn unsubscribe(
    this: &mut ALSonar,
    context: &ModuleContext,
    (name,): (String,),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let index = this.find(&name).ok_or_else(|| not_subscribed(&name))?;
    this.subscribers.remove(index);
    Ok(drive(context, this.subscribers.is_empty().then_some(STOPPED)))
}

impl Module for ALSonar {
    fn name(&self) -> String {
        "ALSonar".into()
    }

    fn description(&self) -> String {
        "NAOqi's sonar extractor: the sonars measure while a client is subscribed.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add_async_checked(
            "subscribe",
            "subscribe(name, period, precision): start the sonars for `name` (period in ms and precision in \
             [0, 1] optional).",
            subscribe,
        )
        .add_async_checked("unsubscribe", "unsubscribe(name): the last one stops the sonars.", unsubscribe)
        .add("getSubscribersInfo", "[[name, period, precision], ...] of the subscribers.", |this, _, ()| {
            Ok(this
                .subscribers
                .iter()
                .map(|s| Value::Array(vec![s.name.as_str().into(), s.period_ms.into(), s.precision.into()]))
                .collect::<Vec<Value>>())
        })
        .add("getCurrentPeriod", "The shortest period the subscribers asked for (ms).", |this, _, ()| {
            Ok(this.current_period())
        })
        .add("getCurrentPrecision", "The highest precision the subscribers asked for.", |this, _, ()| {
            Ok(this.current_precision())
        })
        .add(
            "getMyPeriod",
            "getMyPeriod(name): the period `name` asked for (ms).",
            |this, _, (name,): (String,)| Ok(this.subscriber(&name)?.period_ms),
        )
        .add(
            "getMyPrecision",
            "getMyPrecision(name): the precision `name` asked for.",
            |this, _, (name,): (String,)| Ok(this.subscriber(&name)?.precision),
        )
        .add(
            "updatePeriod",
            "updatePeriod(name, period): a new period for `name` (ms).",
            |this, _, (name, period_ms): (String, i32)| {
                let period_ms = checked_period(period_ms)?;
                let index = this.find(&name).ok_or_else(|| not_subscribed(&name))?;
                this.subscribers[index].period_ms = period_ms;
                Ok(())
            },
        )
        .add(
            "updatePrecision",
            "updatePrecision(name, precision): a new precision for `name`.",
            |this, _, (name, precision): (String, f64)| {
                let precision = checked_precision(precision)?;
                let index = this.find(&name).ok_or_else(|| not_subscribed(&name))?;
                this.subscribers[index].precision = precision;
                Ok(())
            },
        )
        .add("getOutputNames", "The ALMemory keys the sonars write.", |_, _, ()| Ok(OUTPUTS.to_vec()))
        .add("getEventList", "The sonar events (ALSensors raises them).", |_, _, ()| Ok(EVENTS.to_vec()))
        .add("getMemoryKeyList", "The ALMemory keys the sonars write.", |_, _, ()| Ok(OUTPUTS.to_vec()));
    }
}
