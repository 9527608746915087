//! ALMotion takes its arguments in every shape NAOqi scripts use (docs/motion.md, "Accepted
//! argument shapes"), checked against the real broker under the manual clock: each call
//! succeeds and its joints reach their values when the call says; a malformed call fails at
//! once with its error, posted or not.

use std::time::{Duration, Instant};

use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Session;
use naobroker_framework::{from_value, Value};

/// The DCM rounds positions to 1/4096 rad.
const PRECISION: f64 = 1.0 / 4096.0;

struct Robot {
    broker: TestBroker,
    session: Session,
}

/// What some ALMemory keys held after each DCM cycle: (DCM time, values).
struct Trace {
    /// DCM time when the call started its task.
    start: i64,
    samples: Vec<(i64, Vec<f64>)>,
}

impl Trace {
    /// The first time key `index` is within `PRECISION` of `target` and stays there.
    fn reached(&self, index: usize, target: f64) -> i64 {
        let after = self.samples.iter().rposition(|(_, values)| (values[index] - target).abs() > PRECISION);
        let first = after.map_or(0, |last_off| last_off + 1);
        assert!(
            first < self.samples.len(),
            "key {index} never settled on {target}: {:?}",
            self.samples.last()
        );
        self.samples[first].0
    }

    fn at(&self, time: i64, index: usize) -> f64 {
        let sample = self.samples.iter().find(|(t, _)| *t == time);
        sample.unwrap_or_else(|| panic!("no sample at {time}")).1[index]
    }

    /// Key `index` reaches `target` `seconds` after the call, to the motion cycle, and
    /// not early: a tenth of a second before it is still clearly on its way.
    fn assert_arrives(&self, index: usize, target: f64, seconds: f64) {
        let due = self.start + (seconds * 1000.0).round() as i64;
        let reached = self.reached(index, target);
        assert!(
            (due - 20..=due + 40).contains(&reached),
            "key {index} reached {target} at {reached}, due at {due} (call at {})",
            self.start
        );
        let early = self.at(due - 100, index);
        assert!((early - target).abs() > 1e-3, "key {index} was at {early} already 100 ms early");
    }
}

impl Robot {
    fn new() -> Robot {
        let broker = TestBroker::start("start_time_ms = 0\n");
        let session = Session::connect(&broker.url).unwrap();
        Robot { broker, session }
    }

    fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Value {
        self.session.call(module, method, args).unwrap_or_else(|e| panic!("{module}.{method}: {e}"))
    }

    fn step(&self) -> i64 {
        self.call("DCM", "step", vec![1.into()]).as_i64().unwrap()
    }

    fn values(&self, keys: &[String]) -> Vec<f64> {
        let keys = Value::Array(keys.iter().map(|key| key.as_str().into()).collect());
        from_value(self.call("ALMemory", "getListData", vec![keys])).unwrap()
    }

    fn tasks(&self) -> usize {
        self.call("ALMotion", "getTaskList", vec![]).as_array().unwrap().len()
    }

    /// Make a blocking ALMotion call from another client, as a script would, and step the
    /// DCM one cycle at a time until it returns and a little beyond; what `keys` held after
    /// each cycle.
    fn run(&self, method: &str, args: Vec<Value>, keys: &[String]) -> Trace {
        let caller = Session::connect(&self.broker.url).unwrap();
        let before = self.tasks();
        std::thread::scope(|scope| {
            let call = scope.spawn(move || caller.call("ALMotion", method, args));
            // The call starts its task before anything else: wait for it, the clock stopped.
            let asked = Instant::now();
            while self.tasks() == before && !call.is_finished() {
                assert!(asked.elapsed() < Duration::from_secs(20), "{method} never started its task");
                std::thread::sleep(Duration::from_millis(5));
            }
            let start = self.call("DCM", "getTime", vec![0.into()]).as_i64().unwrap();
            let mut samples = Vec::new();
            while !call.is_finished() {
                assert!(samples.len() < 2000, "{method} still running after 2000 DCM cycles");
                let time = self.step();
                samples.push((time, self.values(keys)));
            }
            // The call ends once its last command is sent, for the next motion cycle or two.
            for _ in 0..6 {
                let time = self.step();
                samples.push((time, self.values(keys)));
            }
            let answer = call.join().unwrap();
            assert_eq!(answer.unwrap_or_else(|e| panic!("{method}: {e}")), Value::Nil);
            Trace { start, samples }
        })
    }
}

fn position(joint: &str) -> String {
    format!("Device/SubDeviceList/{joint}/Position/Actuator/Value")
}

fn stiffness(joint: &str) -> String {
    format!("Device/SubDeviceList/{joint}/Hardness/Actuator/Value")
}

fn n(x: f64) -> Value {
    Value::F64(x)
}

fn list(items: impl IntoIterator<Item = Value>) -> Value {
    Value::Array(items.into_iter().collect())
}

fn numbers(xs: &[f64]) -> Value {
    list(xs.iter().map(|&x| n(x)))
}

/// A Bezier key as Choregraphe exports it: flat handles `d_time` either side.
fn key(angle: f64, d_time: f64) -> Value {
    list([n(angle), list([3.into(), n(-d_time), n(0.0)]), list([3.into(), n(d_time), n(0.0)])])
}

#[test]
fn stiffness_interpolation_of_the_body_with_one_number_and_one_time() {
    let robot = Robot::new();
    let names: Vec<String> = from_value(robot.call("ALMotion", "getBodyNames", vec!["Body".into()])).unwrap();
    // RHipYawPitch has no actuators of its own: LHipYawPitch's motor drives both.
    let keys: Vec<String> = names.iter().filter(|n| *n != "RHipYawPitch").map(|n| stiffness(n)).collect();
    assert_eq!(keys.len(), 25);
    // Smart stiffness would lower these idle joints as soon as the call ends.
    robot.call("ALMotion", "setSmartStiffnessEnabled", vec![false.into()]);
    robot.step();
    robot.step();
    let trace = robot.run("stiffnessInterpolation", vec!["Body".into(), n(1.0), n(1.0)], &keys);
    for index in 0..keys.len() {
        trace.assert_arrives(index, 1.0, 1.0);
    }
}

#[test]
fn angle_interpolation_choregraphe_one_joint_and_one_angle_one_time_per_joint() {
    let robot = Robot::new();
    let keys = [position("HeadYaw"), position("HeadPitch")];
    let choregraphe =
        vec![list(["HeadYaw".into()]), list([numbers(&[0.5])]), list([numbers(&[1.0])]), true.into()];
    robot.run("angleInterpolation", choregraphe, &keys).assert_arrives(0, 0.5, 1.0);

    let names = list(["HeadYaw".into(), "HeadPitch".into()]);
    let each = vec![names, numbers(&[0.2, 0.1]), numbers(&[1.0, 1.2]), true.into()];
    let trace = robot.run("angleInterpolation", each, &keys);
    trace.assert_arrives(0, 0.2, 1.0);
    trace.assert_arrives(1, 0.1, 1.2);
}

#[test]
fn angle_interpolation_lists_per_joint_and_one_time_list_shared() {
    let robot = Robot::new();
    let keys = [position("HeadYaw"), position("HeadPitch")];
    // Two numbers for two joints with two key frames each: the times both joints share.
    let angles = list([numbers(&[0.3, 0.1]), numbers(&[0.2, -0.1])]);
    let shared = vec!["Head".into(), angles, numbers(&[1.0, 2.0]), true.into()];
    let trace = robot.run("angleInterpolation", shared, &keys);
    trace.assert_arrives(0, 0.1, 2.0);
    trace.assert_arrives(1, -0.1, 2.0);
    let due = trace.start + 1000;
    assert!((trace.at(due + 20, 0) - 0.3).abs() < 0.01, "HeadYaw passes its first key frame");
}

#[test]
fn angle_interpolation_bezier_one_joint_keys_flat_or_bare_angles() {
    let robot = Robot::new();
    let keys = [position("HeadYaw")];
    let flat = vec!["HeadYaw".into(), numbers(&[1.0, 2.0]), list([key(0.5, 0.3), key(0.0, 0.3)])];
    let trace = robot.run("angleInterpolationBezier", flat, &keys);
    let (peak_time, peak) = trace
        .samples
        .iter()
        .map(|(time, values)| (*time, values[0]))
        .fold((0, f64::MIN), |best, sample| if sample.1 > best.1 { sample } else { best });
    assert!((peak - 0.5).abs() < 1e-3, "passes its first key: {peak}");
    assert!((trace.start + 980..=trace.start + 1040).contains(&peak_time), "at 1 s: {peak_time}");
    trace.assert_arrives(0, 0.0, 2.0);

    // NAOqi's own example: one list per joint, the keys bare angles.
    let bare = vec![list(["HeadYaw".into()]), list([numbers(&[1.0])]), list([numbers(&[0.4])])];
    robot.run("angleInterpolationBezier", bare, &keys).assert_arrives(0, 0.4, 1.0);
}

#[test]
fn names_mixing_a_chain_and_a_joint_with_one_value_each() {
    let robot = Robot::new();
    let names = list(["Head".into(), "LHand".into()]);
    robot.call("ALMotion", "setAngles", vec![names.clone(), numbers(&[0.2, 0.1, 0.5]), n(1.0)]);
    for _ in 0..40 {
        robot.step();
    }
    let angles: Vec<f64> =
        from_value(robot.call("ALMotion", "getAngles", vec![names, false.into()])).unwrap();
    assert_eq!(angles, [0.2, 0.1, 0.5]);
    let hands: Vec<String> =
        from_value(robot.call("ALMotion", "getBodyNames", vec!["Actuators".into()])).unwrap();
    assert_eq!(hands, ["LHand", "RHand"]);
}

#[test]
fn a_malformed_call_fails_at_once_posted_or_not() {
    let robot = Robot::new();
    let malformed: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "angleInterpolation",
            vec!["HeadYaw".into(), numbers(&[0.1, 0.2]), numbers(&[1.0]), true.into()],
            "ALMotion.angleInterpolation: angleLists and timeLists: HeadYaw has 2 angles but 1 time; \
             expected one time per key frame",
        ),
        (
            "angleInterpolation",
            vec!["Head".into(), numbers(&[0.1, 0.2, 0.3]), n(1.0), true.into()],
            "angleLists: 3 numbers for 2 joints (HeadYaw, HeadPitch)",
        ),
        (
            "stiffnessInterpolation",
            vec!["HeadYaw".into(), numbers(&[1.0, 0.5]), numbers(&[1.0, 0.5])],
            "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s, \
             got [1, 0.5]",
        ),
        (
            "angleInterpolationBezier",
            vec!["HeadYaw".into(), n(1.0), list([n(0.5), list([3.into(), n(0.3), n(0.0)]), list([])])],
            "controlPoints: HeadYaw: expected an in handle [type, dTime <= 0 back to the previous key \
             at most, dAngle within ±100 rad], got [3, 0.3, 0]",
        ),
        (
            "angleInterpolationWithSpeed",
            vec![list(["HeadYaw".into(), "Wing".into()]), n(0.1), n(0.5)],
            "unknown joint or chain \"Wing\"",
        ),
    ];
    for (method, args, expected) in malformed {
        let posted = robot.session.post("ALMotion", method, args.clone());
        let error = posted.expect_err(&format!("{method} was posted: {expected}")).message;
        assert!(error.contains(expected), "posted {method}: {error}");
        let called = robot.session.call("ALMotion", method, args).unwrap_err().message;
        assert_eq!(called, error, "{method}: the same error called or posted");
    }
    assert_eq!(robot.tasks(), 0, "no task started");
    // The refused posts took no task ids: the next post is the first.
    let id = robot.session.post(
        "ALMotion",
        "angleInterpolation",
        vec!["HeadYaw".into(), n(0.1), n(0.1), true.into()],
    );
    assert_eq!(id.unwrap(), 1);
}

#[test]
fn angle_interpolation_with_speed_to_an_out_of_range_target_is_timed_to_the_limit() {
    let robot = Robot::new();
    let keys = [position("HeadPitch")];
    let limit = 0.5149;
    let to_the_limit =
        robot.run("angleInterpolationWithSpeed", vec!["HeadPitch".into(), n(limit), n(0.5)], &keys);
    robot.run("angleInterpolationWithSpeed", vec!["HeadPitch".into(), n(0.0), n(1.0)], &keys);
    // Clamped to the limit: the same move, at the same peak speed.
    let beyond = robot.run("angleInterpolationWithSpeed", vec!["HeadPitch".into(), n(3.0), n(0.5)], &keys);
    // From the first move (the calls may start at different phases of the motion cycle).
    let duration = |trace: &Trace| {
        let moved = trace.samples.iter().find(|(_, values)| values[0].abs() > PRECISION).expect("moved");
        trace.reached(0, limit) - moved.0
    };
    assert_eq!(duration(&beyond), duration(&to_the_limit), "3 rad is clamped to {limit} before it is timed");
}

/// A handle `[type, dTime, dAngle]`.
fn handle(d_time: f64, d_angle: f64) -> Value {
    list([3.into(), n(d_time), n(d_angle)])
}

/// Finite numbers so large or so small that the trajectories computed from them would
/// not be numbers: each call is refused, naming its argument, or clamped harmlessly; the
/// motion thread lives on, and ALMotion keeps answering and moving.
#[test]
fn hostile_numbers_are_refused_or_clamped_and_the_motion_thread_lives_on() {
    let mut robot = Robot::new();
    let yaw = || Value::from("HeadYaw");
    let refused: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "angleInterpolationWithSpeed",
            vec![yaw(), n(1.0), n(1e-320)],
            "fractionMaxSpeed: expected a number in [0.001, 1], got 0.0000",
        ),
        ("setAngles", vec![yaw(), n(1.0), n(1e-320)], "fractionMaxSpeed: expected a number in [0.001, 1]"),
        (
            "angleInterpolation",
            vec![yaw(), numbers(&[1e308, -1e308]), numbers(&[0.02, 0.04]), false.into()],
            "angleLists: HeadYaw key frame 1: expected a number within ±100 rad",
        ),
        (
            "changeAngles",
            vec![yaw(), n(1.7e308), n(1.0)],
            "changes: HeadYaw: expected a number within ±100 rad",
        ),
        (
            "angleInterpolation",
            vec![yaw(), numbers(&[0.3, -0.3]), numbers(&[1e-300, 2e-300]), true.into()],
            "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s",
        ),
        (
            "stiffnessInterpolation",
            vec![yaw(), n(1.0), n(1e300)],
            "timeLists: HeadYaw: expected a number of seconds up to 3600",
        ),
        (
            "angleInterpolationBezier",
            vec![yaw(), n(1.0), list([n(1e308), handle(-0.3, 0.0), handle(0.3, 0.0)])],
            "controlPoints: HeadYaw: expected a number within ±100 rad",
        ),
        (
            "angleInterpolationBezier",
            vec![yaw(), n(1.0), list([n(0.5), handle(-0.3, 1e308), handle(0.3, -1e308)])],
            "controlPoints: HeadYaw: expected an in handle",
        ),
        (
            "angleInterpolationBezier",
            vec![yaw(), numbers(&[0.02, 0.04]), list([key(0.5, 1e300), key(0.0, 0.01)])],
            "controlPoints: HeadYaw key frame 1: expected an in handle",
        ),
    ];
    for (method, args, expected) in refused {
        let error = robot.session.post("ALMotion", method, args).expect_err(expected).message;
        assert!(error.contains(expected), "{method}: {error}");
    }
    assert_eq!(robot.tasks(), 0, "no task started");
    // Clamped: stiffness to 1, an absolute angle to the joint's range.
    robot.call("ALMotion", "setStiffnesses", vec![yaw(), n(1e308)]);
    robot.call("ALMotion", "setAngles", vec![yaw(), n(99.0), n(1.0)]);
    robot.step();
    robot.step();
    let stiffness: Vec<f64> = from_value(robot.call("ALMotion", "getStiffnesses", vec![yaw()])).unwrap();
    assert_eq!(stiffness, [1.0]);
    let keys = [position("HeadYaw")];
    robot
        .run("angleInterpolation", vec![yaw(), n(-0.5), n(0.5), true.into()], &keys)
        .assert_arrives(0, -0.5, 0.5);
    assert!(robot.broker.is_running(), "the broker runs");
    let log = robot.broker.log();
    assert!(!log.contains("panicked"), "no thread died: {log}");
}
