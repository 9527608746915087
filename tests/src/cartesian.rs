//! ALMotion's Cartesian tests' robot: the real broker under the manual clock and one
//! session, with the calls those tests make (positions, transforms, blocking moves).

use naobroker_framework::blocking::Session;
use naobroker_framework::Value;

use crate::TestBroker;

/// A broker under the manual clock, and a session to it.
pub struct Robot {
    _broker: TestBroker,
    pub session: Session,
}

impl Robot {
    pub fn start() -> Robot {
        let broker = TestBroker::start("start_time_ms = 0\n");
        let session = Session::connect(&broker.url).unwrap();
        Robot { _broker: broker, session }
    }

    pub fn motion(&self, method: &str, args: Vec<Value>) -> Value {
        self.session.call("ALMotion", method, args).unwrap_or_else(|e| panic!("ALMotion.{method}: {e}"))
    }

    pub fn error(&self, method: &str, args: Vec<Value>) -> String {
        match self.session.call("ALMotion", method, args) {
            Ok(value) => panic!("ALMotion.{method} answered {value}"),
            Err(error) => error.message,
        }
    }

    pub fn step(&self, n: u64) {
        self.session.call("DCM", "step", vec![n.into()]).unwrap();
    }

    /// Post a blocking ALMotion call and step until it is done, then let the joints settle.
    pub fn run(&self, method: &str, args: Vec<Value>) {
        let task = self.session.post("ALMotion", method, args).unwrap_or_else(|e| panic!("{method}: {e}"));
        for _ in 0..2000 {
            if self.motion("isRunning", vec![task.into()]) != Value::from(true) {
                self.step(100);
                return;
            }
            self.step(2);
        }
        panic!("{method} still running after 2000 motion cycles");
    }

    pub fn floats(&self, method: &str, args: Vec<Value>) -> Vec<f64> {
        let value = self.motion(method, args);
        let Value::Array(items) = &value else { panic!("{method}: {value}") };
        items.iter().map(|item| item.as_f64().unwrap_or_else(|| panic!("{method}: {value}"))).collect()
    }

    pub fn position(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getPosition", vec![name.into(), frame.into(), sensors.into()])
    }

    pub fn transform(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getTransform", vec![name.into(), frame.into(), sensors.into()])
    }

    pub fn com(&self, name: &str, frame: i64, sensors: bool) -> Vec<f64> {
        self.floats("getCOM", vec![name.into(), frame.into(), sensors.into()])
    }

    pub fn angles(&self, names: &str, sensors: bool) -> Vec<f64> {
        self.floats("getAngles", vec![names.into(), sensors.into()])
    }

    /// Stiff, every joint at 0 (or the nearest limit: the elbows' roll): StandZero.
    pub fn stand_zero(&self) {
        self.motion("setStiffnesses", vec!["Body".into(), 1.0.into()]);
        self.run("angleInterpolation", vec!["Body".into(), 0.0.into(), 1.0.into(), true.into()]);
    }
}

/// Each axis of `got` within `tolerance` of `expected`.
pub fn assert_close(got: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: {got:?}");
    for (axis, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!((g - e).abs() <= tolerance, "{what}, axis {axis}: {got:?}, expected {expected:?}");
    }
}

/// A Position6D (or any floats) as a call's argument.
pub fn position_value(p: &[f64]) -> Value {
    Value::Array(p.iter().map(|&x| Value::from(x)).collect())
}

/// The distance between two points (their first three values).
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).take(3).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt()
}
