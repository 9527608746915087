//! ALSensors end to end: the real broker with the simulated NAO and the manual clock.
//! Each kind of sensor is pressed and released with `DCM.simulateSensor`; every edge
//! must raise its NAOqi event once, with NAOqi's value, to a `subscribeToEvent`
//! callback and to an event stream alike (docs/sensors.md).

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Session;
use naobroker_framework::{Methods, Module, ModuleContext, Value};

const EVENTS: &[&str] = &[
    "FrontTactilTouched",
    "MiddleTactilTouched",
    "RearTactilTouched",
    "HandLeftBackTouched",
    "HandLeftLeftTouched",
    "HandLeftRightTouched",
    "HandRightBackTouched",
    "HandRightLeftTouched",
    "HandRightRightTouched",
    "LeftBumperPressed",
    "RightBumperPressed",
    "ChestButtonPressed",
    "ALChestButton/SimpleClickOccurred",
    "ALChestButton/DoubleClickOccurred",
    "ALChestButton/TripleClickOccurred",
    "footContactChanged",
    "SonarLeftDetected",
    "SonarRightDetected",
    "SonarLeftNothingDetected",
    "SonarRightNothingDetected",
    "BatteryChargeChanged",
    "BatteryLowDetected",
    "BatteryNearlyEmpty",
    "BatteryPowerPluggedChanged",
    "BatteryChargingFlagChanged",
];

type Received = (String, Value);

/// A module process's view: every event as a NAOqi callback (`onEvent`) and as a stream.
struct Watcher {
    callbacks: mpsc::Sender<Received>,
    streamed: mpsc::Sender<Received>,
    ready: mpsc::Sender<()>,
}

impl Module for Watcher {
    fn name(&self) -> String {
        "SensorWatcher".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("onEvent", "The ALMemory callback.", on_event);
    }

    fn started(&mut self, context: &ModuleContext) {
        let memory = context.proxy("ALMemory");
        let session = context.session().clone();
        let (streamed, ready) = (self.streamed.clone(), self.ready.clone());
        tokio::task::spawn_local(async move {
            for &event in EVENTS {
                // The broker refuses a callback for a module it is still registering.
                while memory.call("subscribeToEvent", (event, "SensorWatcher", "onEvent")).await.is_err() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                let mut stream = session.subscribe(event).await.expect("stream subscription");
                let streamed = streamed.clone();
                tokio::task::spawn_local(async move {
                    while let Some(event) = stream.next().await {
                        let _ = streamed.send((event.name, event.value));
                    }
                });
            }
            let _ = ready.send(());
        });
    }
}

fn on_event(
    watcher: &mut Watcher,
    _: &ModuleContext,
    (event, value, _message): (String, Value, Value),
) -> Result<(), naobroker_framework::CallError> {
    let _ = watcher.callbacks.send((event, value));
    Ok(())
}

struct Robot {
    _broker: TestBroker,
    session: Session,
    callbacks: mpsc::Receiver<Received>,
    streamed: mpsc::Receiver<Received>,
    /// Every event expected so far, by name, for the final check of ALMemory's history.
    history: BTreeMap<String, Vec<Value>>,
}

impl Robot {
    fn new() -> Robot {
        let broker = TestBroker::start("start_time_ms = 0\n");
        let session = Session::connect(&broker.url).unwrap();
        let (callback_sender, callbacks) = mpsc::channel();
        let (stream_sender, streamed) = mpsc::channel();
        let (ready_sender, ready) = mpsc::channel();
        let watcher = Watcher { callbacks: callback_sender, streamed: stream_sender, ready: ready_sender };
        let url = broker.url.clone();
        // Only the watcher's own client may make it exit: it ends with the test process.
        std::thread::spawn(move || naobroker_framework::remote::run(&url, watcher).unwrap());
        ready.recv_timeout(Duration::from_secs(20)).expect("the watcher subscribed to every event");
        Robot { _broker: broker, session, callbacks, streamed, history: BTreeMap::new() }
    }

    fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Value {
        self.session.call(module, method, args).unwrap_or_else(|e| panic!("{module}.{method}: {e}"))
    }

    fn sense(&self, sensor: &str, value: f64) {
        self.call("DCM", "simulateSensor", vec![format!("{sensor}/Sensor/Value").into(), value.into()]);
    }

    fn step(&self, cycles: u64) {
        self.call("DCM", "step", vec![cycles.into()]);
    }

    fn memory(&self, key: &str) -> Value {
        self.call("ALMemory", "getData", vec![key.into()])
    }

    /// Set `sensor`, run `cycles` DCM cycles, and expect exactly `events` on both paths
    /// (in order for each event; streams of different events may interleave).
    fn press(&mut self, sensor: &str, value: f64, cycles: u64, events: &[(&str, Value)]) {
        self.sense(sensor, value);
        self.step(cycles);
        self.expect(&format!("{sensor} = {value}"), events);
    }

    fn expect(&mut self, what: &str, events: &[(&str, Value)]) {
        let expected = by_name(events.iter().map(|(name, value)| (name.to_string(), value.clone())));
        for (path, receiver) in [("callback", &self.callbacks), ("stream", &self.streamed)] {
            let received: Vec<Received> = (0..events.len())
                .map(|n| {
                    receiver.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| {
                        panic!("{what}: {n} of {} events reached the {path}: {events:?}", events.len())
                    })
                })
                .collect();
            assert_eq!(by_name(received.into_iter()), expected, "{what}: the {path}'s events");
        }
        for (name, value) in events {
            self.history.entry(name.to_string()).or_default().push(value.clone());
        }
    }

    /// Wait (up to 10 s) until `key` holds `value`.
    fn wait_for(&self, key: &str, value: Value) {
        let started = Instant::now();
        while self.memory(key) != value {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{key} = {:?}, not {value:?}",
                self.memory(key)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn by_name(events: impl Iterator<Item = Received>) -> BTreeMap<String, Vec<Value>> {
    let mut grouped: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (name, value) in events {
        grouped.entry(name).or_default().push(value);
    }
    grouped
}

fn on() -> Value {
    Value::from(1.0)
}

fn off() -> Value {
    Value::from(0.0)
}

#[test]
fn every_sensor_edge_raises_its_naoqi_event_once_with_naoqis_value() {
    let mut robot = Robot::new();
    robot.step(1);
    // The first cycle stores the states as they are, raising nothing.
    robot.wait_for("BatteryChargeChanged", Value::from(100));
    for (key, value) in [
        ("FrontTactilTouched", off()),
        ("LeftBumperPressed", off()),
        ("ChestButtonPressed", off()),
        ("footContact", off()),
        ("leftFootContact", off()),
        ("footContactChanged", Value::from(false)),
        ("leftFootTotalWeight", Value::from(0.0)),
        ("rightFootTotalWeight", Value::from(0.0)),
        ("BatteryLowDetected", Value::from(false)),
        ("BatteryPowerPluggedChanged", Value::from(false)),
    ] {
        assert_eq!(robot.memory(key), value, "{key} before any edge");
    }
    let mut listed: Vec<String> =
        naobroker_framework::from_value(robot.call("ALSensors", "getEventList", vec![])).unwrap();
    listed.sort();
    let mut all = EVENTS.to_vec();
    all.sort();
    assert_eq!(listed, all, "the NAO V6 description supports every event");

    touch_sensors(&mut robot);
    bumpers(&mut robot);
    chest_button(&mut robot);
    feet(&mut robot);
    sonars(&mut robot);
    battery(&mut robot);

    // Everything was raised exactly once per edge: ALMemory's history holds nothing else.
    for event in EVENTS {
        let history = robot.call("ALMemory", "getEventHistory", vec![(*event).into()]);
        let expected = robot.history.get(*event).cloned().unwrap_or_default();
        assert_eq!(history, Value::Array(expected), "{event}'s history");
    }
    let stats: BTreeMap<String, u64> =
        naobroker_framework::from_value(robot.call("ALSensors", "stats", vec![])).unwrap();
    assert_eq!((stats["dropped"], stats["failed"]), (0, 0), "{stats:?}");
}

fn touch_sensors(robot: &mut Robot) {
    for (sensor, event) in [
        ("Head/Touch/Front", "FrontTactilTouched"),
        ("Head/Touch/Middle", "MiddleTactilTouched"),
        ("Head/Touch/Rear", "RearTactilTouched"),
        ("LHand/Touch/Back", "HandLeftBackTouched"),
        ("LHand/Touch/Left", "HandLeftLeftTouched"),
        ("LHand/Touch/Right", "HandLeftRightTouched"),
        ("RHand/Touch/Back", "HandRightBackTouched"),
        ("RHand/Touch/Left", "HandRightLeftTouched"),
        ("RHand/Touch/Right", "HandRightRightTouched"),
    ] {
        // Held for 20 cycles: one event, the edge.
        robot.press(sensor, 1.0, 20, &[(event, on())]);
        robot.press(sensor, 0.0, 20, &[(event, off())]);
    }
}

fn bumpers(robot: &mut Robot) {
    // A bounce shorter than the 20 ms debounce raises nothing: the next event is the press.
    robot.sense("LFoot/Bumper/Left", 1.0);
    robot.step(1);
    robot.sense("LFoot/Bumper/Left", 0.0);
    robot.step(5);
    robot.press("LFoot/Bumper/Left", 1.0, 5, &[("LeftBumperPressed", on())]);
    // Either switch of the foot: the bumper stays pressed while one of them is.
    robot.press("LFoot/Bumper/Right", 1.0, 5, &[]);
    robot.press("LFoot/Bumper/Left", 0.0, 5, &[]);
    robot.press("LFoot/Bumper/Right", 0.0, 5, &[("LeftBumperPressed", off())]);
    robot.press("RFoot/Bumper/Right", 1.0, 5, &[("RightBumperPressed", on())]);
    robot.press("RFoot/Bumper/Right", 0.0, 5, &[("RightBumperPressed", off())]);
}

fn chest_button(robot: &mut Robot) {
    for (count, event) in [
        (1, "ALChestButton/SimpleClickOccurred"),
        (2, "ALChestButton/DoubleClickOccurred"),
        (3, "ALChestButton/TripleClickOccurred"),
    ] {
        for _ in 0..count {
            robot.sense("ChestBoard/Button", 1.0);
            robot.step(5);
            robot.sense("ChestBoard/Button", 0.0);
            robot.step(5);
        }
        // The sequence ends 400 ms after the last release.
        robot.step(45);
        let mut events: Vec<(&str, Value)> = Vec::new();
        for _ in 0..count {
            events.extend([("ChestButtonPressed", on()), ("ChestButtonPressed", off())]);
        }
        events.push((event, Value::Nil));
        robot.expect(&format!("{count} clicks"), &events);
    }
    // Held for 1.5 s: pressed and released, no click.
    robot.press("ChestBoard/Button", 1.0, 150, &[("ChestButtonPressed", on())]);
    robot.press("ChestBoard/Button", 0.0, 60, &[("ChestButtonPressed", off())]);
}

fn feet(robot: &mut Robot) {
    // 3 kg on one FSR of the left foot: in contact after the 50 ms debounce.
    robot.press("LFoot/FSR/FrontLeft", 3.0, 8, &[("footContactChanged", Value::from(true))]);
    assert_eq!(robot.memory("footContact"), on(), "written before the event");
    assert_eq!(robot.memory("leftFootContact"), on());
    robot.wait_for("leftFootTotalWeight", Value::from(3.0));
    // The right foot too: still one contact for the robot. Its weight is its four FSRs'.
    robot.press("RFoot/FSR/RearRight", 3.0, 8, &[]);
    robot.press("RFoot/FSR/FrontLeft", 0.5, 8, &[]);
    robot.wait_for("rightFootContact", on());
    robot.wait_for("rightFootTotalWeight", Value::from(3.5));
    robot.press("RFoot/FSR/FrontLeft", 0.0, 8, &[]);
    // 0.7 kg is inside the 0.5–1 kg hysteresis: still in contact.
    robot.press("LFoot/FSR/FrontLeft", 0.7, 8, &[]);
    robot.wait_for("leftFootTotalWeight", Value::from(0.7));
    // Less than the 10 g resolution from the value written: not written again.
    robot.press("LFoot/FSR/FrontLeft", 0.705, 8, &[]);
    assert_eq!(robot.memory("leftFootTotalWeight"), Value::from(0.7));
    robot.press("RFoot/FSR/RearRight", 0.0, 8, &[]);
    robot.wait_for("rightFootContact", off());
    robot.press("LFoot/FSR/FrontLeft", 0.0, 8, &[("footContactChanged", Value::from(false))]);
    assert_eq!(robot.memory("footContact"), off());
    assert_eq!(robot.memory("leftFootContact"), off());
}

fn sonars(robot: &mut Robot) {
    for (side, detected, nothing) in [
        ("Left", "SonarLeftDetected", "SonarLeftNothingDetected"),
        ("Right", "SonarRightDetected", "SonarRightNothingDetected"),
    ] {
        let sensor = format!("US/{side}");
        robot.press(&sensor, 0.3, 3, &[(detected, Value::from(0.3))]);
        robot.press(&sensor, 0.4, 3, &[]);
        // Inside the 0.5–0.55 m hysteresis: still detected.
        robot.press(&sensor, 0.52, 3, &[]);
        robot.press(&sensor, 0.7, 3, &[(nothing, Value::from(0.7))]);
        robot.press(&sensor, 0.6, 3, &[]);
    }
}

fn battery(robot: &mut Robot) {
    let percent = |value: i32| ("BatteryChargeChanged", Value::from(value));
    robot.press("Battery/Charge", 0.5, 2, &[percent(50)]);
    // 0.55 points from 50 %: no change yet.
    robot.press("Battery/Charge", 0.4945, 2, &[]);
    robot.press("Battery/Charge", 0.15, 2, &[("BatteryLowDetected", Value::from(true)), percent(15)]);
    robot.press("Battery/Charge", 0.05, 2, &[("BatteryNearlyEmpty", Value::from(true)), percent(5)]);
    robot.press(
        "Battery/Charge",
        0.9,
        2,
        &[
            ("BatteryLowDetected", Value::from(false)),
            ("BatteryNearlyEmpty", Value::from(false)),
            percent(90),
        ],
    );
    // The current's flags hold 1 s before they count.
    robot.press("Battery/Current", 0.5, 50, &[]);
    robot.press(
        "Battery/Current",
        0.5,
        60,
        &[
            ("BatteryPowerPluggedChanged", Value::from(true)),
            ("BatteryChargingFlagChanged", Value::from(true)),
        ],
    );
    robot.press("Battery/Current", 0.0, 110, &[("BatteryChargingFlagChanged", Value::from(false))]);
    robot.press("Battery/Current", -1.0, 110, &[("BatteryPowerPluggedChanged", Value::from(false))]);
}

/// A sonar without a measurement and a battery board that has not answered read 0 at the
/// first cycle: neither is taken as a state, so their first real readings raise nothing.
#[test]
fn readings_of_0_at_start_are_no_measurement() {
    let mut robot = Robot::new();
    robot.sense("US/Left", 0.0);
    robot.sense("Battery/Charge", 0.0);
    robot.step(2);
    assert_eq!(robot.memory("BatteryChargeChanged"), Value::Nil, "no battery reading yet");
    // The board answers: the battery's values are stored, not raised.
    robot.press("Battery/Charge", 0.9, 2, &[]);
    robot.wait_for("BatteryChargeChanged", Value::from(90));
    assert_eq!(robot.memory("BatteryLowDetected"), Value::from(false));
    robot.press("US/Left", 0.8, 3, &[]);
    // Later edges are raised; the records before them were written first.
    robot.press("US/Left", 0.3, 3, &[("SonarLeftDetected", Value::from(0.3))]);
    robot.press(
        "Battery/Charge",
        0.15,
        2,
        &[("BatteryLowDetected", Value::from(true)), ("BatteryChargeChanged", Value::from(15))],
    );
    for event in
        ["SonarLeftNothingDetected", "SonarLeftDetected", "BatteryLowDetected", "BatteryChargeChanged"]
    {
        let history = robot.call("ALMemory", "getEventHistory", vec![event.into()]);
        let expected = robot.history.get(event).cloned().unwrap_or_default();
        assert_eq!(history, Value::Array(expected), "{event}'s history");
    }
}
