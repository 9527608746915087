//! ALRobotPosture end to end under the manual clock: every predefined posture reached by
//! `goToPosture` through its intermediate postures (seen in ALMemory's `PostureChanged`
//! after every step of the path) and recognised by `getPosture`; `applyPosture`, `stopMove`,
//! and the refusals.
//!
//! The simulated robot's inertial unit does not follow its body (it reports an upright torso);
//! the tests set AngleY with `DCM.simulateSensor` when the robot lies down or gets up, with
//! the fall manager off, as it would be for a robot lying down on purpose.

use std::thread::JoinHandle;

use naobroker_e2e::robot::Robot;
use naobroker_framework::blocking::Session;
use naobroker_framework::{from_value, Value};

const ANGLE_Y: &str = "InertialSensor/AngleY/Sensor/Value";
const KNEE: &str = "Device/SubDeviceList/LKneePitch/Position/Actuator/Value";
/// DCM cycles a move may take at most: each step of a path lasts well under 200.
const MAX_CYCLES: usize = 3000;

/// What a move did: its answer and the postures `PostureChanged` named along the way.
struct Moved {
    reached: bool,
    postures: Vec<String>,
}

/// The robot with the fall manager off, as it is for a robot lying down on purpose.
fn robot_without_fall_manager() -> Robot {
    let robot = Robot::start();
    robot.motion("setFallManagerEnabled", vec![false.into()]);
    robot
}

/// These tests' calls beyond the shared robot's.
trait PostureTestCalls {
    /// An ALRobotPosture query's answer (`getPosture`, `getPostureFamily`).
    fn posture(&self, method: &str) -> String;

    /// The value of an event ALMemory holds, once raised.
    fn last_event(&self, event: &str) -> Option<String>;

    fn motion_tasks(&self) -> usize;

    fn lie(&self, angle_y: Option<f64>);

    /// Call `method(name, speed)` from another connection (it blocks until the move ends)
    /// and step the DCM one cycle at a time until it answers; `each_cycle` sees the robot
    /// and the postures announced so far after every cycle.
    fn move_to(
        &self,
        method: &str,
        name: &str,
        speed: f64,
        each_cycle: impl FnMut(&Robot, &[String]),
    ) -> Moved;

    /// Call ALRobotPosture's `method(name, speed)` from another connection, on a thread.
    fn start_move(
        &self,
        method: &str,
        name: &str,
        speed: f64,
    ) -> JoinHandle<Result<Value, naobroker_framework::CallError>>;

    /// `goToPosture`, then the checks every posture gets: reached, recognised, its family.
    fn go_to(&self, name: &str, family: &str, each_cycle: impl FnMut(&Robot, &[String])) -> Vec<String>;
}

impl PostureTestCalls for Robot {
    fn posture(&self, method: &str) -> String {
        from_value(self.call("ALRobotPosture", method, vec![])).unwrap()
    }

    fn last_event(&self, event: &str) -> Option<String> {
        self.session.call("ALMemory", "getData", vec![event.into()]).ok().and_then(|v| from_value(v).ok())
    }

    fn motion_tasks(&self) -> usize {
        self.call("ALMotion", "getTaskList", vec![]).as_array().map_or(0, Vec::len)
    }

    fn lie(&self, angle_y: Option<f64>) {
        self.call("DCM", "simulateSensor", vec![ANGLE_Y.into(), angle_y.map_or(Value::Nil, Value::F64)]);
    }

    fn move_to(
        &self,
        method: &str,
        name: &str,
        speed: f64,
        mut each_cycle: impl FnMut(&Robot, &[String]),
    ) -> Moved {
        let call = self.start_move(method, name, speed);
        let mut postures: Vec<String> = Vec::new();
        let mut last = self.last_event("PostureChanged");
        let mut cycles = 0;
        while !call.is_finished() {
            assert!(cycles < MAX_CYCLES, "{method}({name}) still running after {MAX_CYCLES} cycles");
            self.step(1);
            cycles += 1;
            let now = self.last_event("PostureChanged");
            if now != last {
                postures.extend(now.clone());
                last = now;
            }
            each_cycle(self, &postures);
        }
        let answer = call.join().unwrap().unwrap_or_else(|e| panic!("{method}({name}): {e}"));
        Moved { reached: answer == Value::from(true), postures }
    }

    fn start_move(
        &self,
        method: &str,
        name: &str,
        speed: f64,
    ) -> JoinHandle<Result<Value, naobroker_framework::CallError>> {
        let (url, method, name) = (self.broker.url.clone(), method.to_owned(), name.to_owned());
        std::thread::spawn(move || {
            let session = Session::connect(&url)?;
            session.call("ALRobotPosture", &method, vec![name.into(), speed.into()])
        })
    }

    fn go_to(&self, name: &str, family: &str, each_cycle: impl FnMut(&Robot, &[String])) -> Vec<String> {
        let moved = self.move_to("goToPosture", name, 0.8, each_cycle);
        assert!(moved.reached, "goToPosture({name}) answered false after {:?}", moved.postures);
        assert_eq!(self.posture("getPosture"), name);
        assert_eq!(self.posture("getPostureFamily"), family, "{name}");
        assert_eq!(self.last_event("PostureChanged").as_deref(), Some(name));
        assert_eq!(self.last_event("PostureFamilyChanged").as_deref(), Some(family));
        moved.postures
    }
}

fn nothing(_: &Robot, _: &[String]) {}

#[test]
fn every_posture_is_reached_through_its_intermediate_postures_and_recognised() {
    let robot = robot_without_fall_manager();
    // The simulated joints start at 0 rad or their nearest limit: NAOqi's StandZero.
    assert_eq!(robot.posture("getPosture"), "StandZero");
    assert_eq!(robot.go_to("StandInit", "Standing", nothing), ["StandInit"]);
    assert_eq!(robot.go_to("Stand", "Standing", nothing), ["Stand"]);
    assert_eq!(robot.go_to("SitRelax", "Sitting", nothing), ["StandInit", "Crouch", "Sit", "SitRelax"]);
    assert_eq!(robot.go_to("Stand", "Standing", nothing), ["Sit", "Crouch", "StandInit", "Stand"]);
    assert_eq!(robot.go_to("StandZero", "Standing", nothing), ["StandInit", "StandZero"]);
    assert_eq!(robot.go_to("Crouch", "Crouching", nothing), ["StandInit", "Crouch"]);
    assert_eq!(robot.go_to("Sit", "Sitting", nothing), ["Sit"]);
    // Sitting, it lies back: the torso tips over once the move began.
    let lie_back = |robot: &Robot, _: &[String]| {
        if robot.motion_tasks() > 0 {
            robot.lie(Some(-1.5));
        }
    };
    assert_eq!(robot.go_to("LyingBack", "LyingBack", lie_back), ["LyingBack"]);
    // It sits up (the torso rises as soon as the move began), then lies on its belly from Crouch.
    let sit_up = |robot: &Robot, _: &[String]| {
        if robot.motion_tasks() > 0 {
            robot.lie(None);
        }
    };
    assert_eq!(robot.go_to("Sit", "Sitting", sit_up), ["Sit"]);
    let lie_down = |robot: &Robot, seen: &[String]| {
        if seen.last().map(String::as_str) == Some("Crouch") {
            robot.lie(Some(1.5));
        }
    };
    assert_eq!(robot.go_to("LyingBelly", "LyingBelly", lie_down), ["Crouch", "LyingBelly"]);
    let get_up = |robot: &Robot, _: &[String]| {
        if robot.motion_tasks() > 0 {
            robot.lie(None);
        }
    };
    assert_eq!(robot.go_to("Stand", "Standing", get_up), ["Crouch", "StandInit", "Stand"]);
}

#[test]
fn apply_posture_goes_straight_there() {
    let robot = robot_without_fall_manager();
    let moved = robot.move_to("applyPosture", "Crouch", 0.5, nothing);
    assert!(moved.reached);
    assert_eq!(moved.postures, ["StandZero", "Crouch"], "from where it was, no StandInit on the way");
    assert_eq!(robot.posture("getPosture"), "Crouch");
    assert_eq!(robot.posture("getPostureFamily"), "Crouching");
}

#[test]
fn go_to_posture_from_no_posture_starts_from_the_nearest_one() {
    let robot = robot_without_fall_manager();
    robot.call("ALMotion", "setStiffnesses", vec!["Body".into(), 1.0.into()]);
    robot.call("ALMotion", "setAngles", vec!["LKneePitch".into(), 0.5.into(), 0.5.into()]);
    for _ in 0..100 {
        robot.step(1);
    }
    assert_eq!(robot.posture("getPosture"), "Unknown", "one knee half-bent");
    assert_eq!(robot.posture("getPostureFamily"), "Standing", "the legs still stand");
    // StandZero is the nearest: the robot goes there first, then on to StandInit.
    let moved = robot.move_to("goToPosture", "Crouch", 0.8, nothing);
    assert!(moved.reached);
    assert_eq!(moved.postures, ["StandZero", "StandInit", "Crouch"]);
}

#[test]
fn stop_move_interrupts_the_move_and_its_motion_task() {
    let robot = robot_without_fall_manager();
    let call = robot.start_move("goToPosture", "Crouch", 0.2);
    let mut cycles = 0;
    while robot.last_event("PostureChanged").as_deref() != Some("StandInit") {
        assert!(cycles < MAX_CYCLES, "StandInit never reached");
        robot.step(1);
        cycles += 1;
    }
    // Half-way down to the crouch.
    while robot.memory(KNEE) < 1.4 {
        assert!(cycles < MAX_CYCLES, "the knees never bent");
        robot.step(1);
        cycles += 1;
    }
    robot.call("ALRobotPosture", "stopMove", vec![]);
    let answer = call.join().unwrap().unwrap();
    assert_eq!(answer, Value::from(false), "a stopped move did not reach its posture");
    // ALMotion's task is killed within a motion cycle or two.
    let mut cycles = 0;
    while robot.motion_tasks() > 0 {
        assert!(cycles < 10, "ALMotion's task still runs");
        robot.step(1);
        cycles += 1;
    }
    let knee = robot.memory(KNEE);
    for _ in 0..50 {
        robot.step(1);
    }
    assert_eq!(robot.memory(KNEE), knee, "the knees stopped where they were");
    assert!(knee < 2.0, "short of the crouch's 2.11 rad: {knee}");
    assert_eq!(robot.posture("getPosture"), "Unknown");
}

#[test]
fn lists_and_refusals() {
    let robot = robot_without_fall_manager();
    let list: Vec<String> = from_value(robot.call("ALRobotPosture", "getPostureList", vec![])).unwrap();
    assert_eq!(
        list,
        ["Crouch", "LyingBack", "LyingBelly", "Sit", "SitRelax", "Stand", "StandInit", "StandZero"]
    );
    let families: Vec<String> =
        from_value(robot.call("ALRobotPosture", "getPostureFamilyList", vec![])).unwrap();
    assert_eq!(families, ["Standing", "Crouching", "Sitting", "LyingBelly", "LyingBack"]);
    assert_eq!(robot.posture("getPostureFamily"), "Standing");
    let error = |method: &str, args: Vec<Value>| {
        robot.session.call("ALRobotPosture", method, args).unwrap_err().message
    };
    let unknown = error("goToPosture", vec!["Flying".into(), 0.5.into()]);
    assert!(
        unknown.contains(
            "unknown posture \"Flying\": one of Crouch, LyingBack, LyingBelly, Sit, SitRelax, Stand, \
             StandInit, StandZero"
        ),
        "{unknown}"
    );
    assert!(error("applyPosture", vec!["stand".into(), 0.5.into()]).contains("unknown posture \"stand\""));
    let speed = error("goToPosture", vec!["Stand".into(), 1.5.into()]);
    assert!(speed.contains("maxSpeedFraction: expected a number in (0, 1], got 1.5"), "{speed}");
    let tries = error("setMaxTryNumber", vec![0.into()]);
    assert!(tries.contains("expected at least 1 try, got 0"), "{tries}");
    robot.step(1);
    assert_eq!(robot.motion_tasks(), 0, "nothing moved");
    assert_eq!(robot.call("ALRobotPosture", "setMaxTryNumber", vec![1.into()]), Value::Nil);
}
