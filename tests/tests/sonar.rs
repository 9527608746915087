//! ALSonar against the real broker under the manual clock: subscribing starts the sonar
//! through the DCM's `US/Actuator/Value` (the simulated NAO then echoes 0.8 m), the last
//! unsubscription stops it, and the bounds on subscribers hold.

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};

const MODE: &str = "Device/SubDeviceList/US/Actuator/Value";
const LEFT: &str = "Device/SubDeviceList/US/Left/Sensor/Value";
const RIGHT: &str = "Device/SubDeviceList/US/Right/Sensor/Value";

fn sonar(robot: &Robot, method: &str, args: Vec<Value>) -> Value {
    robot.call("ALSonar", method, args)
}

fn refused(robot: &Robot, method: &str, args: Vec<Value>) -> String {
    robot.session.call("ALSonar", method, args).expect_err(method).message
}

#[test]
fn subscribers_start_and_stop_the_sonar() {
    let robot = Robot::start();
    robot.step(2);
    assert_eq!((robot.memory(LEFT), robot.memory(RIGHT)), (5.0, 5.0), "nothing measured yet");
    sonar(&robot, "subscribe", vec!["myApplication".into()]);
    robot.step(2);
    assert_eq!(robot.memory(MODE), 68.0, "both sides, continuous");
    assert_eq!((robot.memory(LEFT), robot.memory(RIGHT)), (0.8, 0.8), "the simulated echo");
    sonar(&robot, "subscribe", vec!["other".into(), 200.into(), Value::F64(0.5)]);
    let info: Vec<(String, i32, f64)> = from_value(sonar(&robot, "getSubscribersInfo", vec![])).unwrap();
    assert_eq!(info, [("myApplication".to_owned(), 100, 1.0), ("other".to_owned(), 200, 0.5)]);
    assert_eq!(sonar(&robot, "getCurrentPeriod", vec![]), Value::from(100));
    assert_eq!(sonar(&robot, "getMyPeriod", vec!["other".into()]), Value::from(200));
    // One subscriber left: the sonar goes on.
    sonar(&robot, "unsubscribe", vec!["myApplication".into()]);
    robot.step(2);
    assert_eq!(robot.memory(MODE), 68.0);
    sonar(&robot, "unsubscribe", vec!["other".into()]);
    robot.step(2);
    assert_eq!(robot.memory(MODE), 0.0, "stopped with the last subscriber");
    let error = refused(&robot, "unsubscribe", vec!["other".into()]);
    assert_eq!(error, "ALSonar.unsubscribe: \"other\" is not subscribed");
    let outputs: Vec<String> = from_value(sonar(&robot, "getOutputNames", vec![])).unwrap();
    assert_eq!(outputs, [LEFT, RIGHT]);
}

/// The documented bounds: 64 subscribers, all clients together; names up to 256 bytes.
#[test]
fn subscribers_are_bounded_in_number_and_name() {
    let robot = Robot::start();
    for index in 0..64 {
        sonar(&robot, "subscribe", vec![format!("subscriber {index}").into()]);
    }
    let error = refused(&robot, "subscribe", vec!["one more".into()]);
    assert_eq!(error, "ALSonar.subscribe: 64 subscribers already (the limit); unsubscribe one first");
    // A name already subscribed is no new subscriber.
    sonar(&robot, "subscribe", vec!["subscriber 0".into()]);
    sonar(&robot, "unsubscribe", vec!["subscriber 0".into()]);
    sonar(&robot, "subscribe", vec!["one more".into()]);
    let error = refused(&robot, "subscribe", vec!["x".repeat(257).into()]);
    assert_eq!(error, "ALSonar.subscribe: name: expected 1 to 256 bytes, got 257");
    let error = refused(&robot, "subscribe", vec!["late".into(), 0.into()]);
    assert_eq!(error, "ALSonar.subscribe: period: expected a positive number of ms, got 0");
}
