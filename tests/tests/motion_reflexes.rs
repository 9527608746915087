//! ALMotion's reflexes against the real broker under the manual clock: the fall manager
//! (NAOqi's API and events), collision protection of the arms, queries answering what the
//! last call set, and the motion cycle's order (seed 004).

use std::time::{Duration, Instant};

use naobroker_e2e::robot::Robot;
use naobroker_framework::{from_value, Value};
use naobroker_protocol::Envelope;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

const ANGLE_Y: &str = "InertialSensor/AngleY/Sensor/Value";
const GYROSCOPE_Y: &str = "InertialSensor/GyroscopeY/Sensor/Value";
const POST_PROCESS: &str = "ALMotion/PostProcess";
/// The fall manager's events and the cycle's last, which dates them.
const FALL_EVENTS: [&str; 4] = ["robotIsFalling", "ALMotion/RobotIsFalling", "robotHasFallen", POST_PROCESS];
const HEAD_PITCH: &str = "Device/SubDeviceList/HeadPitch/Position/Actuator/Value";
const WRIST: &str = "Device/SubDeviceList/LWristYaw/Position/Actuator/Value";
const ELBOW_ROLL: &str = "Device/SubDeviceList/LElbowRoll/Position/Actuator/Value";
const YAW_STIFFNESS: &str = "Device/SubDeviceList/HeadYaw/Hardness/Actuator/Value";

/// These tests' calls beyond the shared robot's.
trait ReflexTestCalls {
    fn tilt(&self, angle_y: Value);

    /// The gyroscope's rate about y (rad/s): a body turning, or at rest.
    fn turn(&self, rate_y: Value);

    /// Every joint's stiffness as the DCM sends it.
    fn stiffnesses(&self) -> Vec<f64>;

    fn stiffen_body(&self);

    /// Wait (generously) until ALMemory's `key` holds `value`: ALMotion writes it off the
    /// motion thread, after the cycle that decided it.
    fn wait_for(&self, key: &str, value: Value);

    fn stats(&self, name: &str) -> u64;
}

impl ReflexTestCalls for Robot {
    fn tilt(&self, angle_y: Value) {
        self.call("DCM", "simulateSensor", vec![ANGLE_Y.into(), angle_y]);
    }

    fn turn(&self, rate_y: Value) {
        self.call("DCM", "simulateSensor", vec![GYROSCOPE_Y.into(), rate_y]);
    }

    fn stiffnesses(&self) -> Vec<f64> {
        let keys = self.call("ALMemory", "getDataList", vec!["/Hardness/Actuator/Value".into()]);
        from_value(self.call("ALMemory", "getListData", vec![keys])).unwrap()
    }

    fn stiffen_body(&self) {
        self.motion("setStiffnesses", vec!["Body".into(), 1.0.into()]);
        self.step(2);
    }

    fn wait_for(&self, key: &str, value: Value) {
        let started = Instant::now();
        while self.data(key) != value {
            assert!(started.elapsed() < Duration::from_secs(10), "{key} never became {value}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn stats(&self, name: &str) -> u64 {
        let stats = self.motion("stats", vec![]);
        let Value::Map(entries) = stats else { panic!("stats: {stats}") };
        entries.iter().find(|(key, _)| key.as_str() == Some(name)).and_then(|(_, v)| v.as_u64()).unwrap()
    }
}

/// One connection subscribed to several events: they arrive in the order raised.
struct EventTap {
    runtime: tokio::runtime::Runtime,
    socket: zeromq::DealerSocket,
}

impl EventTap {
    fn new(url: &str, events: &[&str]) -> EventTap {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let socket = runtime.block_on(async {
            let mut socket = zeromq::DealerSocket::new();
            socket.connect(url).await.unwrap();
            for (id, event) in (1u64..).zip(events) {
                let subscribe = Envelope::Subscribe { id, event: (*event).into() };
                socket.send(ZmqMessage::from(subscribe.encode())).await.unwrap();
            }
            let mut replies = 0;
            while replies < events.len() {
                let message = socket.recv().await.unwrap();
                if let Ok(Envelope::Reply { .. }) = Envelope::decode(message.get(0).unwrap(), usize::MAX) {
                    replies += 1;
                }
            }
            socket
        });
        EventTap { runtime, socket }
    }

    fn next(&mut self) -> (String, Value) {
        self.runtime.block_on(async {
            loop {
                let message = tokio::time::timeout(Duration::from_secs(10), self.socket.recv())
                    .await
                    .expect("an event within 10 s")
                    .unwrap();
                if let Ok(Envelope::Event { name, value, .. }) =
                    Envelope::decode(message.get(0).unwrap(), usize::MAX)
                {
                    return (name, value);
                }
            }
        })
    }

    /// The fall manager's events up to and including the first named `last` (the cycle
    /// events between them left out), and the DCM time of the motion cycle that raised it
    /// (its postProcess comes right after).
    fn fall_events_until(&mut self, last: &str) -> (Vec<(String, Value)>, i64) {
        let mut events = Vec::new();
        loop {
            let event = self.next();
            if event.0 == POST_PROCESS {
                continue;
            }
            let done = event.0 == last;
            events.push(event);
            if done {
                break;
            }
        }
        let (name, value) = self.next();
        assert_eq!(name, POST_PROCESS, "{value}");
        (events, from_value::<(u64, i64)>(value).unwrap().1)
    }

    /// Events up to and including the first named `last`.
    fn until(&mut self, last: &str) -> Vec<(String, Value)> {
        let mut events = Vec::new();
        loop {
            let event = self.next();
            let done = event.0 == last;
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

#[test]
fn a_fall_kills_the_tasks_protects_cuts_the_stiffness_and_ends_at_rest_with_naoqis_events() {
    let robot = Robot::start();
    let mut tap = EventTap::new(&robot.broker.url, &FALL_EVENTS);
    assert_eq!(robot.motion("getFallManagerEnabled", vec![]), Value::from(true), "on by default");
    // Idle joints keep their stiffness all along: what is checked is the fall manager's.
    robot.motion("setSmartStiffnessEnabled", vec![false.into()]);
    for key in ["robotIsFalling", "ALMotion/RobotIsFalling", "robotHasFallen"] {
        robot.wait_for(key, false.into());
    }
    robot.stiffen_body();
    let wave = robot
        .session
        .post("ALMotion", "angleInterpolation", vec!["HeadYaw".into(), 1.0.into(), 5.0.into(), true.into()])
        .unwrap();
    robot.step(2);
    assert_eq!(robot.motion("isRunning", vec![wave.into()]), Value::from(true));

    // Falling backward, turning fast: one motion cycle sees it.
    robot.tilt((-0.9).into());
    robot.turn((-3.0).into());
    let seen = robot.step(2);
    let ended = robot.motion("wait", vec![wave.into(), 10_000.into()]);
    assert_eq!(ended, Value::from(true), "tasks killed");
    assert_eq!(robot.motion("getTaskList", vec![]), Value::Array(vec![]));
    let (events, started) = tap.fall_events_until("ALMotion/RobotIsFalling");
    assert_eq!(
        events,
        [("robotIsFalling".into(), true.into()), ("ALMotion/RobotIsFalling".to_owned(), Value::from(true))]
    );
    robot.wait_for("ALMotion/RobotIsFalling", true.into());
    // A task asked for during the fall is refused: the fall manager comes first.
    let wrist = robot.memory(WRIST);
    robot.motion("setAngles", vec!["LWristYaw".into(), 1.0.into(), 1.0.into()]);
    robot.step(8);
    assert_eq!(robot.memory(WRIST), wrist);
    assert!((robot.memory(HEAD_PITCH) - 0.5).abs() < 1e-3, "head tucked in: {}", robot.memory(HEAD_PITCH));
    assert!(
        robot.stiffnesses().iter().all(|&s| s == 1.0),
        "stiff while protecting: {:?}",
        robot.stiffnesses()
    );

    // 100 ms after the fall was seen, every stiffness goes off; the body still turns, so
    // the fall goes on: still falling, tasks still refused (stiffening included).
    robot.step(4);
    assert!(robot.stiffnesses().iter().all(|&s| s == 0.0), "limp: {:?}", robot.stiffnesses());
    let stiffness: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["Body".into()])).unwrap();
    assert!(stiffness.iter().all(|&s| s == 0.0), "{stiffness:?}");
    robot.stiffen_body();
    robot.step(40);
    assert!(robot.stiffnesses().iter().all(|&s| s == 0.0), "refused: {:?}", robot.stiffnesses());
    assert_eq!(robot.data("ALMotion/RobotIsFalling"), Value::from(true));

    // On the ground, at rest: the fifth motion cycle reading it ends the fall, not before.
    robot.turn(0.2.into());
    let at_rest = robot.step(2);
    robot.step(10);
    let (events, fallen) = tap.fall_events_until("robotHasFallen");
    assert_eq!(events, [("robotHasFallen".to_owned(), Value::from(true))]);
    assert_eq!(fallen - started, at_rest - seen + 4 * 20, "five cycles of 20 ms at rest");
    robot.wait_for("ALMotion/RobotIsFalling", false.into());
    assert_eq!(robot.data("robotIsFalling"), Value::from(false));

    // Lying down is not falling: the robot may be stiffened to get up.
    robot.stiffen_body();
    robot.step(10);
    assert!(robot.stiffnesses().iter().all(|&s| s == 1.0), "{:?}", robot.stiffnesses());
    // Upright again: armed, and robotHasFallen says so.
    robot.tilt(Value::Nil);
    robot.step(2);
    robot.wait_for("robotHasFallen", false.into());

    // Switched off, a tilt does nothing; the query answers at once.
    robot.motion("setFallManagerEnabled", vec![false.into()]);
    assert_eq!(robot.motion("getFallManagerEnabled", vec![]), Value::from(false));
    robot.tilt(0.9.into());
    robot.step(20);
    assert!(robot.stiffnesses().iter().all(|&s| s == 1.0), "{:?}", robot.stiffnesses());
    assert_eq!(robot.data("ALMotion/RobotIsFalling"), Value::from(false));
}

#[test]
fn a_limp_robot_falls_and_one_that_never_rests_has_fallen_3_s_after_the_start() {
    let robot = Robot::start();
    let mut tap = EventTap::new(&robot.broker.url, &FALL_EVENTS);
    robot.step(4);
    assert!(robot.stiffnesses().iter().all(|&s| s == 0.0), "limp: {:?}", robot.stiffnesses());
    // Limp, toppling forward: a fall all the same (nothing holds the robot up).
    robot.tilt(0.9.into());
    robot.turn(3.0.into());
    robot.step(2);
    let (events, started) = tap.fall_events_until("ALMotion/RobotIsFalling");
    assert_eq!(events[0], ("robotIsFalling".to_owned(), Value::from(true)));
    // Turning all along: robotHasFallen 3 s after the start all the same.
    robot.step(2 * 150);
    let (events, fallen) = tap.fall_events_until("robotHasFallen");
    assert_eq!(events, [("robotHasFallen".to_owned(), Value::from(true))]);
    assert_eq!(fallen - started, 3000);
    robot.wait_for("ALMotion/RobotIsFalling", false.into());
}

#[test]
fn the_fall_manager_is_configured_under_motion() {
    let robot = Robot::start_with("[motion.fall_manager]\nenabled = false\n");
    assert_eq!(robot.motion("getFallManagerEnabled", vec![]), Value::from(false));
    robot.motion("setSmartStiffnessEnabled", vec![false.into()]);
    robot.stiffen_body();
    robot.tilt(0.9.into());
    robot.step(20);
    assert!(robot.stiffnesses().iter().all(|&s| s == 1.0));
    robot.motion("setFallManagerEnabled", vec![true.into()]);
    robot.step(20);
    assert!(robot.stiffnesses().iter().all(|&s| s == 1.0), "switched on while tilted: not a fall");
}

#[test]
fn the_motion_cycle_raises_pre_process_first_and_what_its_sensors_caused_before_post_process() {
    let robot = Robot::start();
    let mut tap =
        EventTap::new(&robot.broker.url, &["ALMotion/PreProcess", "robotIsFalling", "ALMotion/PostProcess"]);
    robot.step(4);
    robot.tilt(0.9.into());
    robot.step(2);
    let events = tap.until("robotIsFalling");
    let post = tap.next();
    let cycle = |value: &Value| from_value::<(u64, i64)>(value.clone()).unwrap();
    let (fall, before) = events.split_last().unwrap();
    // Every cycle so far: PreProcess n, then PostProcess n, n = 1, 2, ...
    for (pair, n) in before[..before.len() - 1].chunks(2).zip(1u64..) {
        assert_eq!((pair[0].0.as_str(), pair[1].0.as_str()), ("ALMotion/PreProcess", "ALMotion/PostProcess"));
        assert_eq!((cycle(&pair[0].1), cycle(&pair[1].1)), ((n, 20 * n as i64), (n, 20 * n as i64)));
    }
    // The cycle that read the tilted sensor: its preProcess came before, the fall it
    // decided is raised before its postProcess.
    let pre = before.last().unwrap();
    assert_eq!(pre.0, "ALMotion/PreProcess");
    assert_eq!(fall.0, "robotIsFalling");
    assert_eq!(post.0, "ALMotion/PostProcess");
    assert_eq!(cycle(&pre.1), cycle(&post.1));
    assert_eq!(cycle(&post.1).0, before.len() as u64 / 2 + 1);
}

#[test]
fn collision_protection_holds_an_arm_at_its_last_safe_pose() {
    let robot = Robot::start();
    for chain in ["LArm", "RArm", "Arms"] {
        assert_eq!(
            robot.motion("getCollisionProtectionEnabled", vec![chain.into()]),
            Value::from(true),
            "{chain}"
        );
    }
    let error = robot.session.call("ALMotion", "getCollisionProtectionEnabled", vec!["Head".into()]);
    assert!(error.unwrap_err().message.contains("\"LArm\", \"RArm\" or \"Arms\""));
    robot.motion("setStiffnesses", vec!["LArm".into(), 1.0.into()]);
    // The arm hanging at the side.
    let hanging =
        Value::Array(vec![std::f64::consts::FRAC_PI_2.into(), 0.0.into(), 0.0.into(), (-0.0349).into()]);
    let joints = Value::Array(
        ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll"].map(Value::from).to_vec(),
    );
    robot.motion("setAngles", vec![joints.clone(), hanging.clone(), 1.0.into()]);
    robot.step(60);
    assert_eq!(robot.stats("collision_stops"), 0, "hanging is clear of the body");

    // Bending the elbow inward takes the forearm into the belly: the arm stops at the last
    // pose 5 mm clear of it (docs/motion.md: between -0.6 and -0.3 rad).
    let bend = |robot: &Robot| {
        let task = robot
            .session
            .post(
                "ALMotion",
                "angleInterpolation",
                vec!["LElbowRoll".into(), (-1.54).into(), 1.0.into(), true.into()],
            )
            .unwrap();
        while robot.is_running(task) {
            robot.step(2);
        }
        robot.step(2);
        robot.memory(ELBOW_ROLL)
    };
    let held = bend(&robot);
    assert!((-0.6..-0.3).contains(&held), "held at {held}");
    let stops = robot.stats("collision_stops");
    assert!(stops > 0);

    // Off for the left arm only: the query answers at once, the elbow bends fully.
    assert_eq!(
        robot.motion("setCollisionProtectionEnabled", vec!["LArm".into(), false.into()]),
        Value::from(true)
    );
    assert_eq!(robot.motion("getCollisionProtectionEnabled", vec!["LArm".into()]), Value::from(false));
    assert_eq!(robot.motion("getCollisionProtectionEnabled", vec!["RArm".into()]), Value::from(true));
    assert_eq!(robot.motion("getCollisionProtectionEnabled", vec!["Arms".into()]), Value::from(false));
    assert!((bend(&robot) + 1.54).abs() < 1e-3);
    assert_eq!(robot.stats("collision_stops"), stops);

    // Back on with the forearm inside the body: it is not held on its way out.
    robot.motion("setCollisionProtectionEnabled", vec!["Arms".into(), true.into()]);
    robot.motion("setAngles", vec![joints, hanging, 1.0.into()]);
    robot.step(60);
    assert!((robot.memory(ELBOW_ROLL) + 0.0349).abs() < 1e-3, "moved out: {}", robot.memory(ELBOW_ROLL));
    assert_eq!(robot.stats("collision_stops"), stops);
}

#[test]
fn queries_answer_with_what_the_last_call_set() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), 1.0.into()]);
    robot.step(70);
    let sent = robot.memory(YAW_STIFFNESS);
    assert!((sent - 0.6).abs() < 1e-3, "smart stiffness holds the idle joint at 60 %: {sent}");
    let answered: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["HeadYaw".into()])).unwrap();
    assert!((answered[0] - 0.6).abs() < 1e-9, "getStiffnesses answers the stiffness commanded: {answered:?}");
    // No cycle between a call and the query.
    robot.motion("setStiffnesses", vec!["HeadYaw".into(), 0.3.into()]);
    let answered: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["Head".into()])).unwrap();
    assert_eq!(answered[0], 0.3, "what setStiffnesses set, before the motion cycle applies it");
    assert!((answered[1] - 0.6).abs() < 1e-9, "HeadPitch untouched: {answered:?}");
    robot.step(2);
    let answered: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["HeadYaw".into()])).unwrap();
    assert_eq!(answered, [0.3], "and once applied");
    robot.motion("setSmartStiffnessEnabled", vec![false.into()]);
    assert_eq!(robot.motion("getSmartStiffnessEnabled", vec![]), Value::from(false));
    robot.motion("setSmartStiffnessEnabled", vec![true.into()]);
    assert_eq!(robot.motion("getSmartStiffnessEnabled", vec![]), Value::from(true));
    robot.motion("setFallManagerEnabled", vec![false.into()]);
    assert_eq!(robot.motion("getFallManagerEnabled", vec![]), Value::from(false));
    robot.motion("setCollisionProtectionEnabled", vec!["RArm".into(), false.into()]);
    assert_eq!(robot.motion("getCollisionProtectionEnabled", vec!["RArm".into()]), Value::from(false));
}

#[test]
fn switching_smart_stiffness_off_gives_the_lowered_joints_their_stiffness_back() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), 1.0.into()]);
    robot.step(70);
    assert!((robot.memory(YAW_STIFFNESS) - 0.6).abs() < 1e-3, "lowered: {}", robot.memory(YAW_STIFFNESS));
    robot.motion("setSmartStiffnessEnabled", vec![false.into()]);
    robot.step(2);
    let answered: Vec<f64> = from_value(robot.motion("getStiffnesses", vec!["Head".into()])).unwrap();
    assert_eq!(answered, [1.0, 1.0], "restored by the next motion cycle");
    robot.step(2);
    assert_eq!(robot.memory(YAW_STIFFNESS), 1.0, "and sent to the DCM");
    robot.step(70);
    assert_eq!(robot.memory(YAW_STIFFNESS), 1.0, "no longer lowered");
    robot.motion("setSmartStiffnessEnabled", vec![true.into()]);
    robot.step(70);
    assert!((robot.memory(YAW_STIFFNESS) - 0.6).abs() < 1e-3, "lowered again once back on");
}
