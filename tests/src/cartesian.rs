//! ALMotion's Cartesian tests' calls on the shared robot (positions, transforms, blocking
//! moves) and their checks.

use naobroker_framework::Value;

use crate::robot::Robot;

/// DCM cycles the joints get to settle after a move, before the sensors are read.
const SETTLE_CYCLES: u64 = 100;

/// The Cartesian tests' calls on the shared robot.
impl Robot {
    /// Post a blocking ALMotion call, step until it is done, then let the joints settle.
    pub fn run(&self, method: &str, args: Vec<Value>) {
        self.run_to_end(method, args);
        self.step(SETTLE_CYCLES);
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
