//! NAOqi's rule for competing motion tasks (docs/motion.md, *Tasks*), under the manual
//! clock: a posted blocking call on a busy joint is postponed until the joint is free
//! (NAOqi's almotion_taskManagement1.py), a reactive call takes over at once
//! (almotion_taskManagement2.py), and the queries agree with the kills at once.

use std::f64::consts::{FRAC_PI_2, FRAC_PI_6};

use naobroker_e2e::robot::Robot;
use naobroker_framework::blocking::Session;
use naobroker_framework::{from_value, Value};

const YAW: &str = "Device/SubDeviceList/HeadYaw/Position/Actuator/Value";
/// DCM cycles in a second (10 ms each).
const SECOND: u64 = 100;

fn v(x: f64) -> Value {
    Value::F64(x)
}

fn yaw_interpolation(robot: &Robot, angle: f64, seconds: f64) -> u64 {
    let args = vec!["HeadYaw".into(), v(angle), v(seconds), true.into()];
    robot.session.post("ALMotion", "angleInterpolation", args).unwrap()
}

fn available(robot: &Robot, names: &str) -> bool {
    robot.motion("areResourcesAvailable", vec![Value::Array(vec![names.into()])]) == Value::from(true)
}

/// `[name, [joints]]` of every task `getTaskList` lists.
fn tasks(robot: &Robot) -> Vec<(String, Vec<String>)> {
    let tasks: Vec<(String, u64, Vec<String>)> = from_value(robot.motion("getTaskList", vec![])).unwrap();
    tasks.into_iter().map(|(name, _, joints)| (name, joints)).collect()
}

fn task_names(robot: &Robot) -> Vec<String> {
    tasks(robot).into_iter().map(|(name, _)| name).collect()
}

#[test]
fn a_posted_angle_interpolation_on_a_busy_joint_waits_until_the_joint_is_free() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(4);
    // taskManagement1: look left slowly (4 s); 1 s later HeadYaw is busy.
    let first = yaw_interpolation(&robot, FRAC_PI_2, 4.0);
    robot.step(SECOND);
    assert!(!available(&robot, "HeadYaw"), "busy one second after the start");
    robot.step(SECOND);
    // 2 s after the start: look right (2 s), postponed.
    let second = yaw_interpolation(&robot, -FRAC_PI_2, 2.0);
    let yaw_task = ("angleInterpolation".to_owned(), vec!["HeadYaw".to_owned()]);
    assert_eq!(tasks(&robot), [yaw_task.clone(), yaw_task], "both listed: one running, one postponed");
    let mut previous = robot.memory(YAW);
    let mut cycles = 0;
    while robot.is_running(first) {
        robot.step(1);
        cycles += 1;
        let yaw = robot.memory(YAW);
        assert!(yaw >= previous - 1e-6, "the first motion went on undisturbed: {yaw} after {previous}");
        previous = yaw;
        assert!(cycles <= 2 * SECOND + 4, "the first motion ends at 4 s");
    }
    assert!((previous - FRAC_PI_2).abs() < 1e-3, "the first motion arrived: {previous}");
    assert!(robot.is_running(second), "the second starts once the first is over");
    let mut cycles = 0;
    while robot.is_running(second) {
        robot.step(1);
        cycles += 1;
    }
    // Its 2 s from its start, one motion cycle after the first ended.
    assert!((2 * SECOND..=2 * SECOND + 6).contains(&cycles), "the second took {cycles} DCM cycles");
    assert!((robot.memory(YAW) + FRAC_PI_2).abs() < 1e-3, "the second motion arrived too");
}

#[test]
fn a_reactive_call_takes_the_joint_over_at_once() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(4);
    // taskManagement2: look left at 0.1 of the maximum speed, then update the angle.
    robot.motion("setAngles", vec!["HeadYaw".into(), v(FRAC_PI_2), v(0.1)]);
    robot.step(SECOND);
    let reached = robot.memory(YAW);
    assert!(reached > 0.5, "moving left: {reached}");
    robot.motion("setAngles", vec!["HeadYaw".into(), v(-FRAC_PI_6), v(1.0)]);
    robot.step(4);
    assert!(robot.memory(YAW) < reached - 0.1, "turning right at once");
    robot.step(SECOND);
    assert!((robot.memory(YAW) + FRAC_PI_6).abs() < 1e-3);
    // A reactive call's task books nothing: a blocking call takes its joint over at once.
    robot.motion("setAngles", vec!["HeadYaw".into(), v(FRAC_PI_2), v(0.1)]);
    robot.step(20);
    let blocking = yaw_interpolation(&robot, -1.0, 0.5);
    robot.step(4);
    let turning = robot.memory(YAW);
    robot.step(4);
    assert!(robot.memory(YAW) < turning, "turning right at once");
    assert_eq!(tasks(&robot), [("angleInterpolation".to_owned(), vec!["HeadYaw".to_owned()])]);
    assert!(robot.is_running(blocking));
}

#[test]
fn kills_and_the_queries_agree_at_once_postponed_tasks_included() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(4);
    let running = yaw_interpolation(&robot, 1.0, 4.0);
    let postponed = yaw_interpolation(&robot, -1.0, 1.0);
    let pitch = robot
        .session
        .post("ALMotion", "angleInterpolation", vec!["HeadPitch".into(), v(0.2), v(4.0), true.into()])
        .unwrap();
    robot.step(20);
    let listed: Vec<(String, u64, Vec<String>)> = from_value(robot.motion("getTaskList", vec![])).unwrap();
    let pitch_task = listed[2].1;
    assert!(!available(&robot, "HeadYaw"));
    robot.motion("killTasksUsingResources", vec![Value::Array(vec!["HeadYaw".into()])]);
    // Before any motion cycle ran the kill.
    assert!(available(&robot, "HeadYaw"), "free as soon as the kill is answered");
    assert!(!available(&robot, "HeadPitch"), "HeadPitch's task goes on");
    assert_eq!(tasks(&robot), [("angleInterpolation".to_owned(), vec!["HeadPitch".to_owned()])]);
    let held = robot.memory(YAW);
    robot.step(20);
    assert!(!robot.is_running(running) && !robot.is_running(postponed));
    assert!((robot.memory(YAW) - held).abs() < 0.02, "the postponed task never started");
    assert_eq!(robot.motion("killTask", vec![pitch_task.into()]), Value::from(true));
    assert!(available(&robot, "Head"));
    assert_eq!(task_names(&robot), Vec::<String>::new());
    robot.step(2);
    assert!(!robot.is_running(pitch), "the posted call ended with its task");
}

/// The documented bound: 64 blocking tasks under way or postponed, all clients together.
/// (The broker also bounds posted calls, to 64 per module: some of these are called, from
/// sessions of their own, so that ALMotion's bound is the one met.)
#[test]
fn a_65th_waiting_blocking_call_is_refused_naming_the_limit() {
    let robot = Robot::start();
    robot.motion("setStiffnesses", vec!["Head".into(), v(1.0)]);
    robot.step(4);
    for _ in 0..60 {
        yaw_interpolation(&robot, 0.5, 10.0);
    }
    let args = vec!["HeadYaw".into(), v(0.5), v(10.0), true.into()];
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (url, args) = (robot.broker.url.clone(), args.clone());
            std::thread::spawn(move || {
                let session = Session::connect(&url).unwrap();
                // Killed below: the call ends without error.
                session.call("ALMotion", "angleInterpolation", args).unwrap();
            })
        })
        .collect();
    let started = std::time::Instant::now();
    while task_names(&robot).len() < 64 {
        assert!(started.elapsed().as_secs() < 20, "the four called tasks never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let error = robot.session.post("ALMotion", "angleInterpolation", args.clone()).unwrap_err();
    assert!(error.message.contains("64 blocking motion tasks are already under way or waiting"), "{error}");
    // Room again once they are killed.
    robot.motion("killTasksUsingResources", vec!["HeadYaw".into()]);
    robot.session.post("ALMotion", "angleInterpolation", args).unwrap();
    robot.motion("killAll", vec![]);
    robot.step(2);
    callers.into_iter().for_each(|caller| caller.join().unwrap());
    assert_eq!(task_names(&robot), Vec::<String>::new());
}
