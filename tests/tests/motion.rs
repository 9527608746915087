//! ALMotion under the manual clock: one motion cycle per two DCM cycles, so every
//! check below is exact and repeatable.

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};

const YAW: &str = "Device/SubDeviceList/HeadYaw/Position/Actuator/Value";
const YAW_STIFFNESS: &str = "Device/SubDeviceList/HeadYaw/Hardness/Actuator/Value";
const PITCH_STIFFNESS: &str = "Device/SubDeviceList/HeadPitch/Hardness/Actuator/Value";
/// One DCM cycle of HeadYaw at its 8 rad/s, plus the 1/4096 rad precision.
const MAX_STEP: f64 = 8.0 * 0.010 + 1.0 / 4096.0;

/// These tests' calls beyond the shared robot's.
trait MotionTestCalls {
    /// What a module driving the robot directly does: `DCM.set` with ClearAll, `value`
    /// reached `in_ms` from now.
    fn dcm_set(&self, actuator: &str, value: f64, in_ms: i64);

    /// Step one DCM cycle at a time while `task` runs: (time, HeadYaw sent) each cycle.
    fn follow(&self, task: u64, limit: usize) -> Vec<(i64, f64)>;
}

impl MotionTestCalls for Robot {
    fn dcm_set(&self, actuator: &str, value: f64, in_ms: i64) {
        let now = self.call("DCM", "getTime", vec![0.into()]).as_i64().unwrap();
        let command = Value::Array(vec![v(value), (now + in_ms).into()]);
        let request = Value::Array(vec![actuator.into(), "ClearAll".into(), Value::Array(vec![command])]);
        self.call("DCM", "set", vec![request]);
    }

    fn follow(&self, task: u64, limit: usize) -> Vec<(i64, f64)> {
        let mut trace = Vec::new();
        while self.is_running(task) {
            assert!(trace.len() < limit, "task {task} still running after {limit} cycles");
            let time = self.step(1);
            trace.push((time, self.memory(YAW)));
        }
        trace
    }
}

fn v(x: f64) -> Value {
    Value::F64(x)
}

fn assert_speed_limited(trace: &[(i64, f64)]) {
    for pair in trace.windows(2) {
        let step = (pair[1].1 - pair[0].1).abs();
        assert!(step <= MAX_STEP, "moved {step} rad in one DCM cycle at t={}", pair[1].0);
    }
}

#[test]
fn angle_interpolation_reaches_its_key_frame_exactly_on_time_within_speed_limits() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(4);
    let task = robot
        .session
        .post("ALMotion", "angleInterpolation", vec!["HeadYaw".into(), v(1.0), v(1.0), true.into()])
        .unwrap();
    let trace = robot.follow(task, 400);
    // Stiffened, HeadYaw was held where its sensor read it: 0 within the simulated noise.
    let held = trace[0].1;
    assert!(held.abs() <= naobroker_simbody::POSITION_NOISE_RAD, "held at {held}");
    let moved = trace.iter().position(|&(_, value)| value != held).expect("HeadYaw moved");
    // The first command targets the next motion cycle; the DCM is half-way one cycle later.
    let start = trace[moved].0 - 10;
    robot.step(4);
    let at = |time: i64| trace.iter().find(|&&(t, _)| t == time).map(|&(_, value)| value);
    let end = robot.memory(YAW);
    assert!((end - 1.0).abs() <= 0.5 / 4096.0 + 1e-12, "ends on the key frame: {end}");
    if let Some(before) = at(start + 990) {
        assert!(before < 1.0 - 1e-4, "not there before its time: {before} at start + 990 ms");
    }
    let last = trace.last().unwrap().0;
    assert!(last <= start + 1000, "the call returned at {last}, the key frame is at {}", start + 1000);
    assert!(trace.iter().all(|&(_, value)| (held.min(0.0)..=1.0 + 1e-9).contains(&value)), "no overshoot");
    assert_speed_limited(&trace);
    // Smooth, not linear: it starts slowly.
    assert!(trace[moved].1 - held < 0.01, "first move {} is gentle", trace[moved].1);
}

#[test]
fn a_joint_driven_by_the_dcm_then_by_almotion_does_not_jump() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.dcm_set("HeadYaw/Position/Actuator/Value", 1.2, 300);
    robot.step(40);
    assert!((robot.memory(YAW) - 1.2).abs() < 1e-3);
    robot.motion("setAngles", vec!["HeadYaw".into(), v(-0.5), v(0.5)]);
    let mut trace = vec![(0, robot.memory(YAW))];
    for _ in 0..80 {
        let time = robot.step(1);
        trace.push((time, robot.memory(YAW)));
    }
    assert_speed_limited(&trace);
    assert!((trace.last().unwrap().1 + 0.5).abs() < 1e-3, "reached -0.5 from where the DCM left it");
}

#[test]
fn kill_all_stops_motion_within_one_cycle() {
    let robot = Robot::start();
    robot.motion("setAngles", vec!["HeadYaw".into(), v(2.0), v(0.5)]);
    robot.step(20);
    let moving = robot.memory(YAW);
    assert!(moving > 0.3 && moving < 1.5, "{moving}");
    robot.motion("killAll", vec![]);
    robot.step(2);
    let stopped = robot.memory(YAW);
    assert!(
        (stopped - moving).abs() <= 2.0 * 4.0 * 0.020,
        "at most one motion cycle more: {moving} → {stopped}"
    );
    robot.step(20);
    assert_eq!(robot.memory(YAW), stopped);
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]));
}

#[test]
fn smart_stiffness_lowers_idle_joints_restores_them_first_and_leaves_dcm_users_alone() {
    let robot = Robot::start();
    assert_eq!(robot.motion("getSmartStiffnessEnabled", vec![]), Value::from(true));
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(70);
    let lowered = robot.memory(YAW_STIFFNESS);
    assert!(lowered < 0.9, "an idle, unloaded joint is lowered: {lowered}");
    robot
        .session
        .post("ALMotion", "angleInterpolation", vec!["HeadYaw".into(), v(0.5), v(0.5), true.into()])
        .unwrap();
    robot.step(2);
    let yaw_before = robot.memory(YAW);
    robot.step(2);
    assert_eq!(robot.memory(YAW_STIFFNESS), 1.0, "restored before the motion");
    assert_eq!(robot.memory(YAW), yaw_before, "the motion starts one cycle after the stiffness");
    // A module driving stiffness through the DCM is never second-guessed.
    robot.dcm_set("HeadPitch/Hardness/Actuator/Value", 0.3, 20);
    robot.step(120);
    assert!((robot.memory(PITCH_STIFFNESS) - 0.3).abs() < 1e-3);
    robot.motion("setSmartStiffnessEnabled", vec![false.into()]);
    robot.step(2);
    assert_eq!(robot.motion("getSmartStiffnessEnabled", vec![]), Value::from(false));
}

#[test]
fn posted_blocking_calls_can_be_waited_for_and_stopped() {
    let robot = Robot::start();
    let task = robot
        .session
        .post("ALMotion", "angleInterpolation", vec!["HeadYaw".into(), v(1.0), v(5.0), true.into()])
        .unwrap();
    robot.step(10);
    let tasks: Vec<(String, u64, Vec<String>)> = from_value(robot.motion("getTaskList", vec![])).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!((tasks[0].0.as_str(), tasks[0].2.clone()), ("angleInterpolation", vec!["HeadYaw".to_owned()]));
    assert_eq!(robot.motion("areResourcesAvailable", vec!["HeadYaw".into()]), Value::from(false));
    assert_eq!(robot.motion("stop", vec![task.into()]), Value::from(true));
    robot.step(2);
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]));
    assert_eq!(robot.motion("areResourcesAvailable", vec!["Head".into()]), Value::from(true));
    let held = robot.memory(YAW);
    robot.step(10);
    assert_eq!(robot.memory(YAW), held);
}

#[test]
fn wake_up_and_rest() {
    let robot = Robot::start();
    assert_eq!(robot.motion("robotIsWakeUp", vec![]), Value::from(false));
    let task = robot.session.post("ALMotion", "wakeUp", vec![]).unwrap();
    robot.follow(task, 1000);
    assert_eq!(robot.motion("robotIsWakeUp", vec![]), Value::from(true));
    let knees: Vec<f64> = from_value(robot.motion(
        "getAngles",
        vec![Value::Array(vec!["LKneePitch".into(), "RKneePitch".into()]), false.into()],
    ))
    .unwrap();
    assert!(knees.iter().all(|k| (k - 0.70).abs() < 1e-6), "StandInit knees: {knees:?}");
    let stiffness: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["Body".into()])).unwrap();
    assert!(stiffness.iter().all(|&s| s == 1.0));
    robot.step(20);
    let sensed: Vec<f64> =
        from_value(robot.motion("getAngles", vec!["LKneePitch".into(), true.into()])).unwrap();
    assert!((sensed[0] - 0.70).abs() < 0.02, "the simulated knee followed: {sensed:?}");
    let task = robot.session.post("ALMotion", "rest", vec![]).unwrap();
    robot.follow(task, 1000);
    assert_eq!(robot.motion("robotIsWakeUp", vec![]), Value::from(false));
    let stiffness: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["Body".into()])).unwrap();
    assert!(stiffness.iter().all(|&s| s == 0.0));
}

#[test]
fn bad_input_is_named() {
    let robot = Robot::start();
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        ("setAngles", vec!["Tail".into(), v(0.0), v(0.5)], "unknown joint or chain \"Tail\""),
        ("setAngles", vec!["Head".into(), Value::Array(vec![v(0.1)]), v(0.5)], "1 number for 2 joints"),
        (
            "setAngles",
            vec!["HeadYaw".into(), v(0.1), v(1.5)],
            "fractionMaxSpeed: expected a number in [0.001, 1], got 1.5",
        ),
        (
            "setAngles",
            vec!["HeadYaw".into(), v(0.1), v(0.0)],
            "fractionMaxSpeed: expected a number in [0.001, 1], got 0",
        ),
        (
            "setAngles",
            vec!["HeadYaw".into(), v(f64::NAN), v(0.5)],
            "HeadYaw: expected a number within ±100 rad",
        ),
        (
            "angleInterpolation",
            vec![
                "HeadYaw".into(),
                Value::Array(vec![v(0.1), v(0.2)]),
                Value::Array(vec![v(1.0), v(1.0)]),
                true.into(),
            ],
            "key-frame times must be positive and increasing",
        ),
        (
            "angleInterpolation",
            vec![
                "HeadYaw".into(),
                Value::Array(vec![v(0.1), v(0.2)]),
                Value::Array(vec![v(1.0)]),
                true.into(),
            ],
            "HeadYaw has 2 angles but 1 time",
        ),
        (
            "angleInterpolation",
            vec!["HeadYaw".into(), Value::Array(vec![v(f64::NAN)]), Value::Array(vec![v(1.0)]), true.into()],
            "angleLists: HeadYaw: expected a number within ±100 rad, got NaN",
        ),
        (
            "angleInterpolationWithSpeed",
            vec!["HeadYaw".into(), v(0.1), v(-0.5)],
            "fractionMaxSpeed: expected a number in [0.001, 1]",
        ),
        ("getLimits", vec!["Wing".into()], "unknown joint or chain \"Wing\""),
    ];
    for (method, args, expected) in cases {
        let error = robot.error(method, args);
        assert!(error.contains(expected), "{method}: {error}");
    }
    let limits: Vec<Vec<f64>> = from_value(robot.motion("getLimits", vec!["HeadPitch".into()])).unwrap();
    assert_eq!(limits, vec![vec![-0.672, 0.5149, 8.0, 1.5]]);
    assert_eq!(robot.motion("getMotionCycleTime", vec![]), Value::from(20));
    // Out of range: clamped, not refused.
    robot.motion("setAngles", vec!["HeadPitch".into(), v(3.0), v(1.0)]);
    robot.step(60);
    let pitch: Vec<f64> =
        from_value(robot.motion("getAngles", vec!["HeadPitch".into(), false.into()])).unwrap();
    assert_eq!(pitch, vec![0.5149]);
}

#[test]
fn motion_cycle_events_arrive_once_per_cycle_pre_before_post() {
    use naobroker_protocol::Envelope;
    use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

    let robot = Robot::start();
    let url = robot.broker.url.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut socket = runtime.block_on(async {
        let mut socket = zeromq::DealerSocket::new();
        socket.connect(&url).await.unwrap();
        for (id, event) in [(1, "ALMotion/PreProcess"), (2, "ALMotion/PostProcess")] {
            socket
                .send(ZmqMessage::from(Envelope::Subscribe { id, event: event.into() }.encode()))
                .await
                .unwrap();
        }
        let mut replies = 0;
        while replies < 2 {
            let message = socket.recv().await.unwrap();
            if let Ok(Envelope::Reply { .. }) = Envelope::decode(message.get(0).unwrap(), usize::MAX) {
                replies += 1;
            }
        }
        socket
    });
    robot.step(10);
    let events = runtime.block_on(async {
        let mut events = Vec::new();
        while events.len() < 10 {
            let message = tokio::time::timeout(std::time::Duration::from_secs(5), socket.recv())
                .await
                .unwrap()
                .unwrap();
            if let Ok(Envelope::Event { name, value, .. }) =
                Envelope::decode(message.get(0).unwrap(), usize::MAX)
            {
                events.push((name, from_value::<(u64, i64)>(value).unwrap()));
            }
        }
        events
    });
    for (pair, cycle) in events.chunks(2).zip(1u64..) {
        assert_eq!(pair[0].0, "ALMotion/PreProcess");
        assert_eq!(pair[1].0, "ALMotion/PostProcess");
        assert_eq!(pair[0].1, pair[1].1);
        assert_eq!(pair[0].1 .0, cycle, "consecutive motion cycles");
        assert_eq!(pair[0].1 .1, 20 * cycle as i64, "every second DCM cycle");
    }
}
