//! The DCM postProcess hook: reads the sensors every cycle, detects their edges and
//! queues records for the module's actor. It never allocates, locks, logs or blocks.

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_dcm::time::DcmTime;
use naobroker_dcm_module::{DcmHandle, HookConnection};
use naobroker_robot::device::SUBDEVICE_PREFIX;
use naobroker_rtslots::FastAccess;

use crate::catalog::{Key, Reading, Record};
use crate::detect::{Band, Clicks, Debounce, Percentage};
use crate::error::WatchError;
use crate::signals::{self, Combine, Effect, SignalSpec, SIGNALS};

/// Records waiting for the actor; a burst larger than this (the actor stalled) is
/// dropped and counted.
pub const QUEUE_CAPACITY: usize = 256;

/// Counters the hook keeps for `ALSensors.stats`.
#[derive(Debug, Default)]
pub struct WatchStats {
    pub dropped: AtomicU64,
}

/// A signal as the hook runs it: where its sensors are in the cycle's readings.
struct Signal {
    first: usize,
    count: usize,
    combine: Combine,
    band: Band,
    hold_ms: i32,
    debounce: Debounce,
    effect: Effect,
}

/// The queue to the actor, and whether this cycle pushed to it.
struct Outbox {
    records: rtrb::Producer<Record>,
    pushed: bool,
    stats: Arc<WatchStats>,
}

impl Outbox {
    fn push(&mut self, key: Key, value: Reading, raise: bool) {
        match self.records.push(Record { key, value, raise }) {
            Ok(()) => self.pushed = true,
            Err(_) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// What outlives one signal's change: the clicks under way and the feet.
struct Body {
    clicks: Clicks,
    feet: [bool; 2],
    /// Each foot's total weight as last written.
    weights: [Option<f64>; 2],
    foot_contact: bool,
    has_feet: bool,
}

/// Everything the hook owns, allocated before the first cycle.
pub struct SensorWatch {
    fast: FastAccess,
    values: Vec<f64>,
    signals: Vec<Signal>,
    /// The charge sensor's place in `values`, and the percentage reported.
    charge: Option<(usize, Percentage)>,
    body: Body,
    outbox: Outbox,
    wake: UnixDatagram,
    started: bool,
    /// The battery's signals start once its board answered (`battery_answered`).
    battery_started: bool,
}

/// The hook installed on the DCM, and the actor's ends of it.
pub struct Installed {
    pub hook: HookConnection,
    pub actor: ActorEnds,
}

/// What the module's actor reads.
pub struct ActorEnds {
    pub records: rtrb::Consumer<Record>,
    /// Readable (one byte, non-blocking) after each cycle that queued records.
    pub wake: UnixDatagram,
    /// The events and keys this robot's sensors support, in the table's order.
    pub keys: Vec<Key>,
    pub stats: Arc<WatchStats>,
}

fn sensor_key(sensor: &str) -> String {
    format!("{SUBDEVICE_PREFIX}{sensor}/Sensor/Value")
}

impl SensorWatch {
    /// Resolve the sensors the robot description has; the rest of the table is left out.
    fn new(dcm: &DcmHandle) -> Result<(SensorWatch, ActorEnds), WatchError> {
        let model = dcm.model();
        let available = |spec: &SignalSpec| {
            spec.sensors.iter().all(|s| model.sensor(&format!("{s}/Sensor/Value")).is_some())
        };
        let mut keys: Vec<String> = Vec::new();
        let mut supported: Vec<Key> = Vec::new();
        let mut signals = Vec::new();
        for spec in SIGNALS.iter().filter(|spec| available(spec)) {
            signals.push(Signal {
                first: keys.len(),
                count: spec.sensors.len(),
                combine: spec.combine,
                band: spec.band,
                hold_ms: spec.hold_ms,
                debounce: Debounce::new(false, spec.hold_ms),
                effect: spec.effect,
            });
            keys.extend(spec.sensors.iter().map(|s| sensor_key(s)));
            for key in signals::keys_of(spec.effect) {
                if !supported.contains(&key) {
                    supported.push(key);
                }
            }
        }
        let charge = model.sensor(&format!("{}/Sensor/Value", signals::BATTERY_CHARGE)).map(|_| {
            keys.push(sensor_key(signals::BATTERY_CHARGE));
            supported.push(Key::BatteryChargeChanged);
            (keys.len() - 1, Percentage::new(0.0, signals::CHARGE_MARGIN))
        });
        let names: Vec<&str> = keys.iter().map(String::as_str).collect();
        let fast = dcm.fast_access(&names)?;
        let (producer, records) = rtrb::RingBuffer::new(QUEUE_CAPACITY);
        let (wake_sender, wake) = UnixDatagram::pair().map_err(WatchError::WakeSocket)?;
        for socket in [&wake_sender, &wake] {
            socket.set_nonblocking(true).map_err(WatchError::WakeSocket)?;
        }
        let stats = Arc::new(WatchStats::default());
        let watch = SensorWatch {
            fast,
            values: vec![0.0; keys.len()],
            signals,
            charge,
            body: Body {
                clicks: Clicks::new(signals::CLICK_WINDOW_MS, signals::LONG_PRESS_MS),
                feet: [false; 2],
                weights: [None; 2],
                foot_contact: false,
                has_feet: supported.contains(&Key::FootContact),
            },
            outbox: Outbox { records: producer, pushed: false, stats: Arc::clone(&stats) },
            wake: wake_sender,
            started: false,
            battery_started: false,
        };
        Ok((watch, ActorEnds { records, wake, keys: supported, stats }))
    }

    /// One DCM cycle: the first stores every state's initial value, the others raise
    /// the edges. The battery's states start on the first cycle its board answered.
    pub fn cycle(&mut self, time: DcmTime) {
        self.fast.read(&mut self.values);
        if self.started {
            self.detect(time);
        } else {
            self.start();
            self.started = true;
        }
        self.write_weights();
        if !self.battery_started && self.battery_answered() {
            self.start_battery();
            self.battery_started = true;
        }
        if std::mem::take(&mut self.outbox.pushed) {
            // Non-blocking: a full socket means a wake-up is pending anyway.
            let _ = self.wake.send(&[0]);
        }
    }

    /// `leftFootTotalWeight` and `rightFootTotalWeight`, from the first cycle on, again
    /// whenever they moved [`signals::WEIGHT_RESOLUTION_KG`] from the value written last.
    fn write_weights(&mut self) {
        for index in 0..self.signals.len() {
            let Effect::Foot(side) = self.signals[index].effect else { continue };
            let weight = self.reading(&self.signals[index]);
            let last = &mut self.body.weights[side.index()];
            if last.is_none_or(|last| (weight - last).abs() >= signals::WEIGHT_RESOLUTION_KG) {
                *last = Some(weight);
                self.outbox.push(side.weight_key(), Reading::Float(weight), false);
            }
        }
    }

    fn reading(&self, signal: &Signal) -> f64 {
        let values = &self.values[signal.first..signal.first + signal.count];
        match signal.combine {
            Combine::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Combine::Sum => values.iter().sum(),
        }
    }

    /// A board that has not answered yet reads 0, and a robot whose battery is at 0 % does
    /// not run: the battery's values count from its first charge reading above 0 (at once
    /// on a robot without the charge sensor).
    fn battery_answered(&self) -> bool {
        self.charge.as_ref().is_none_or(|&(position, _)| self.values[position] > 0.0)
    }

    /// The battery's signals wait for `battery_started`.
    fn waits(&self, signal: &Signal) -> bool {
        matches!(signal.effect, Effect::BatteryFlag(_)) && !self.battery_started
    }

    /// Every state's initial value but the battery's.
    fn start(&mut self) {
        for index in 0..self.signals.len() {
            if self.waits(&self.signals[index]) {
                continue;
            }
            self.start_signal(index);
        }
        if self.body.has_feet {
            let contact = self.body.feet.contains(&true);
            self.body.foot_contact = contact;
            self.outbox.push(Key::FootContact, Reading::flag(contact), false);
            self.outbox.push(Key::FootContactChanged, Reading::Bool(contact), false);
        }
    }

    fn start_signal(&mut self, index: usize) {
        let value = self.reading(&self.signals[index]);
        let signal = &mut self.signals[index];
        let state = !no_measurement(signal.effect, value) && signal.band.classify(false, value);
        signal.debounce = Debounce::new(state, signal.hold_ms);
        initial(signal.effect, state, &mut self.body, &mut self.outbox);
    }

    /// The battery's initial values.
    fn start_battery(&mut self) {
        for index in 0..self.signals.len() {
            if matches!(self.signals[index].effect, Effect::BatteryFlag(_)) {
                self.start_signal(index);
            }
        }
        if let Some((position, percentage)) = &mut self.charge {
            *percentage = Percentage::new(self.values[*position], signals::CHARGE_MARGIN);
            self.outbox.push(Key::BatteryChargeChanged, Reading::Int(percentage.percent()), false);
        }
    }

    fn detect(&mut self, time: DcmTime) {
        for index in 0..self.signals.len() {
            if self.waits(&self.signals[index]) {
                continue;
            }
            let value = self.reading(&self.signals[index]);
            let signal = &mut self.signals[index];
            if no_measurement(signal.effect, value) {
                continue;
            }
            let reading = signal.band.classify(signal.debounce.state(), value);
            if let Some(state) = signal.debounce.update(reading, time) {
                changed(signal.effect, state, value, time, &mut self.body, &mut self.outbox);
            }
        }
        if let Some(clicks) = self.body.clicks.poll(time) {
            let key = match clicks {
                1 => Some(Key::SimpleClickOccurred),
                2 => Some(Key::DoubleClickOccurred),
                3 => Some(Key::TripleClickOccurred),
                _ => None,
            };
            if let Some(key) = key {
                self.outbox.push(key, Reading::Nil, true);
            }
        }
        if let Some((position, percentage)) = self.charge.as_mut().filter(|_| self.battery_started) {
            if let Some(percent) = percentage.update(self.values[*position]) {
                self.outbox.push(Key::BatteryChargeChanged, Reading::Int(percent), true);
            }
        }
    }
}

/// A sonar reads 0 when it has no measurement: no news about the obstacle, at start too.
fn no_measurement(effect: Effect, value: f64) -> bool {
    matches!(effect, Effect::Sonar { .. }) && value <= 0.0
}

/// The value a state has before any edge (sonar and clicks have none).
fn initial(effect: Effect, state: bool, body: &mut Body, outbox: &mut Outbox) {
    match effect {
        Effect::Flag(key) => outbox.push(key, Reading::flag(state), false),
        Effect::ChestButton => outbox.push(Key::ChestButtonPressed, Reading::flag(state), false),
        Effect::Sonar { .. } => {}
        Effect::Foot(side) => {
            body.feet[side.index()] = state;
            outbox.push(side.key(), Reading::flag(state), false);
        }
        Effect::BatteryFlag(key) => outbox.push(key, Reading::Bool(state), false),
    }
}

/// What a signal's new state raises.
fn changed(effect: Effect, state: bool, value: f64, time: DcmTime, body: &mut Body, outbox: &mut Outbox) {
    match effect {
        Effect::Flag(key) => outbox.push(key, Reading::flag(state), true),
        Effect::ChestButton => {
            outbox.push(Key::ChestButtonPressed, Reading::flag(state), true);
            if state {
                body.clicks.press(time);
            } else {
                body.clicks.release(time);
            }
        }
        Effect::Sonar { detected, nothing } => {
            outbox.push(if state { detected } else { nothing }, Reading::Float(value), true);
        }
        Effect::Foot(side) => {
            body.feet[side.index()] = state;
            outbox.push(side.key(), Reading::flag(state), false);
            let contact = body.feet.contains(&true);
            if contact != body.foot_contact {
                body.foot_contact = contact;
                // Written before the event, so that a callback reading it sees the news.
                outbox.push(Key::FootContact, Reading::flag(contact), false);
                outbox.push(Key::FootContactChanged, Reading::Bool(contact), true);
            }
        }
        Effect::BatteryFlag(key) => outbox.push(key, Reading::Bool(state), true),
    }
}

/// Install the hook on the DCM's postProcess.
pub fn install(dcm: &DcmHandle) -> Result<Installed, WatchError> {
    let (mut watch, actor) = SensorWatch::new(dcm)?;
    let hook = dcm.at_post_process("ALSensors", move |context| watch.cycle(context.time))?;
    Ok(Installed { hook, actor })
}
