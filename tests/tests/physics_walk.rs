//! ALMotion walking the physical NAO (MuJoCo behind lolasim's LoLA, stepped, the real
//! broker): NAOqi's locomotion calls, judged by the simulator's ground truth alone.

use std::f64::consts::{FRAC_PI_2, TAU};
use std::time::Duration;

use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;
use naobroker_lolasim::World;

/// The physical robot woken up, standing at StandInit, and its yaw (unwrapped) as the
/// simulator measures it.
struct Walker {
    bench: LolaBench,
    yaw: f64,
    last_yaw: f64,
}

impl Walker {
    fn awake() -> Walker {
        let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
        bench.steps(2);
        bench.run_motion("wakeUp");
        let last_yaw = bench.sim.truth().unwrap().torso[5];
        let mut walker = Walker { bench, yaw: last_yaw, last_yaw };
        walker.steps(10);
        walker
    }

    fn call(&self, method: &str, args: Vec<Value>) -> Value {
        self.bench.call("ALMotion", method, args)
    }

    fn post(&self, method: &str, args: Vec<Value>) -> u64 {
        self.bench.session.post("ALMotion", method, args).unwrap()
    }

    /// One LoLA cycle; the robot must not fall.
    fn step(&mut self) {
        self.bench.step();

        let truth = self.bench.sim.truth().unwrap();
        assert!(!truth.fallen, "fell: {truth:?}");
        let turned = truth.torso[5] - self.last_yaw;
        self.yaw += turned - (turned / TAU).round() * TAU;
        self.last_yaw = truth.torso[5];
    }

    fn steps(&mut self, n: usize) {
        (0..n).for_each(|_| self.step());
    }

    /// Step while the posted call `task` runs; the steps it took.
    fn run_posted(&mut self, task: u64, limit: usize) -> usize {
        let mut steps = 0;
        while self.call("isRunning", vec![task.into()]) == Value::from(true) {
            assert!(steps < limit, "still running after {limit} LoLA cycles: {:?}", self.bench.sim.truth());
            self.step();
            steps += 1;
        }
        steps
    }

    /// Step until the walk has stopped.
    fn until_still(&mut self, limit: usize) {
        let mut steps = 0;
        while self.call("moveIsActive", vec![]) == Value::from(true) {
            assert!(steps < limit, "still walking after {limit} LoLA cycles");
            self.step();
            steps += 1;
        }
    }

    /// x, y (m), yaw (rad, unwrapped): where the robot is, as the simulator has it.
    fn place(&self) -> [f64; 3] {
        let truth = self.bench.sim.truth().unwrap();
        [truth.torso[0], truth.torso[1], self.yaw]
    }

    /// `moveTo(x, y, θ)` posted, to its end: how far the robot moved in its own frame at the
    /// start (x, y, θ), by the simulator.
    fn move_to(&mut self, x: f64, y: f64, theta: f64) -> [f64; 3] {
        let from = self.place();
        let task = self.post("moveTo", vec![x.into(), y.into(), theta.into()]);
        self.run_posted(task, 5000);
        let to = self.place();
        let (sin, cos) = from[2].sin_cos();
        let (dx, dy) = (to[0] - from[0], to[1] - from[1]);
        [dx * cos + dy * sin, -dx * sin + dy * cos, to[2] - from[2]]
    }
}

fn numbers(value: &Value) -> Vec<f64> {
    value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

const TEN_CM: f64 = 0.1;
const TEN_DEGREES: f64 = 0.1745;

#[test]
fn move_to_walks_to_a_place_and_turns_there_and_frame_world_follows() {
    let mut walker = Walker::awake();
    let moved = walker.move_to(1.0, 0.5, FRAC_PI_2);
    assert!((moved[0] - 1.0).hypot(moved[1] - 0.5) < TEN_CM, "moved {moved:?}");
    assert!((moved[2] - FRAC_PI_2).abs() < TEN_DEGREES, "turned {moved:?}");
    let odometry = numbers(&walker.call("getRobotPosition", vec![true.into()]));
    assert!((odometry[0] - 1.0).hypot(odometry[1] - 0.5) < 0.02, "odometry {odometry:?}");
    assert!((odometry[2] - FRAC_PI_2).abs() < 0.05, "odometry {odometry:?}");
    assert_eq!(walker.call("moveIsActive", vec![]), Value::from(false));
    // FRAME_WORLD (1) is where the walk started; FRAME_ROBOT (2) moved with the robot.
    let torso_world = numbers(&walker.call("getPosition", vec!["Torso".into(), 1.into(), true.into()]));
    let torso_robot = numbers(&walker.call("getPosition", vec!["Torso".into(), 2.into(), true.into()]));
    assert!(
        (torso_world[0] - 1.0).hypot(torso_world[1] - 0.5) < 0.05,
        "Torso in FRAME_WORLD {torso_world:?}"
    );
    assert!(torso_robot[0].hypot(torso_robot[1]) < 0.05, "Torso in FRAME_ROBOT {torso_robot:?}");
    assert!((torso_world[5] - odometry[2]).abs() < 0.01, "{torso_world:?} {odometry:?}");
}

/// Stepping sideways, the robot also drifts backward by about 2.5 cm a second, which its
/// odometry does not see (docs/walk.md): sideways moves miss by up to 15 cm.
#[test]
fn it_walks_forward_2_m_backward_half_a_metre_and_sideways_both_ways() {
    let mut walker = Walker::awake();
    for (x, y, within) in [(2.0, 0.0, TEN_CM), (-0.5, 0.0, TEN_CM), (0.0, 0.5, 0.15), (0.0, -0.5, 0.15)] {
        let moved = walker.move_to(x, y, 0.0);
        assert!((moved[0] - x).hypot(moved[1] - y) < within, "moveTo({x}, {y}, 0) moved {moved:?}");
        assert!(moved[2].abs() < TEN_DEGREES, "moveTo({x}, {y}, 0) turned {moved:?}");
    }
}

#[test]
fn it_turns_a_full_circle_in_place_and_walks_an_arc() {
    let mut walker = Walker::awake();
    let from = walker.place();
    walker.call("move", vec![0.0.into(), 0.0.into(), 0.8.into()]);
    while walker.place()[2] - from[2] < TAU {
        walker.steps(10);
        assert!(walker.bench.maps() < 5000, "turned {:?} by {} cycles", walker.place(), walker.bench.maps());
    }
    walker.call("stopMove", vec![]);
    walker.until_still(500);
    let at = walker.place();
    assert!((at[0] - from[0]).hypot(at[1] - from[1]) < 0.2, "turning in place wandered {from:?} → {at:?}");
    // An arc: forward and turning at once, for 6 s.
    let from = walker.place();
    walker.call("move", vec![0.15.into(), 0.0.into(), 0.3.into()]);
    walker.steps(500);
    walker.call("stopMove", vec![]);
    walker.until_still(500);
    let at = walker.place();
    let (distance, turned) = ((at[0] - from[0]).hypot(at[1] - from[1]), at[2] - from[2]);
    assert!(distance > 0.5 && turned > 1.0, "the arc: {distance} m, {turned} rad");
}

#[test]
fn it_starts_and_stops_20_times_and_walks_while_the_head_and_arms_move() {
    let mut walker = Walker::awake();
    for time in 0..20 {
        walker
            .call("moveToward", vec![0.8.into(), 0.0.into(), if time % 2 == 0 { 0.3 } else { -0.3 }.into()]);
        walker.steps(40);
        assert_eq!(walker.call("moveIsActive", vec![]), Value::from(true), "start {time}");
        walker.call("stopMove", vec![]);
        walker.until_still(200);
    }
    let from = walker.place();
    walker.call("move", vec![0.2.into(), 0.0.into(), 0.0.into()]);
    let head = walker.post(
        "angleInterpolation",
        vec![
            "HeadYaw".into(),
            Value::Array(vec![1.0.into(), (-1.0).into(), 0.0.into()]),
            Value::Array(vec![1.0.into(), 2.0.into(), 3.0.into()]),
            true.into(),
        ],
    );
    let arm = walker.post(
        "angleInterpolation",
        vec![
            "LShoulderRoll".into(),
            Value::Array(vec![0.8.into(), 0.2.into()]),
            Value::Array(vec![1.5.into(), 3.0.into()]),
            true.into(),
        ],
    );
    walker.run_posted(head, 400);
    walker.run_posted(arm, 400);
    assert_eq!(
        walker.call("moveIsActive", vec![]),
        Value::from(true),
        "the head and an arm moved beside the walk"
    );
    walker.call("stopMove", vec![]);
    walker.until_still(200);
    let at = walker.place();
    assert!(at[0] - from[0] > 0.4, "walked {from:?} → {at:?} while the head and arm moved");
}

/// `setFootSteps`' arguments for `count` short steps, alternating legs, 0.3 s each.
fn footsteps(count: usize) -> Vec<Value> {
    let legs = (0..count).map(|step| if step.is_multiple_of(2) { "LLeg" } else { "RLeg" }.into()).collect();
    let step = |index: usize| {
        let y = if index.is_multiple_of(2) { 0.1 } else { -0.1 };
        Value::Array(vec![0.01.into(), y.into(), 0.0.into()])
    };
    let times = (1..=count).map(|step| (0.3 * step as f64).into()).collect();
    vec![Value::Array(legs), Value::Array((0..count).map(step).collect()), Value::Array(times), true.into()]
}

#[test]
fn a_walk_needs_stiff_legs_and_a_standing_robot_and_says_why_not() {
    let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
    bench.steps(2);
    // Refused at once: moveTo answers false without a cycle.
    let refused = bench.call("ALMotion", "moveTo", vec![0.5.into(), 0.0.into(), 0.0.into()]);
    assert_eq!(refused, Value::from(false));
    bench.steps(5);
    let failed = bench.memory("ALMotion/MoveFailed");
    let failed = failed.as_array().unwrap();
    assert_eq!(failed[0], Value::from("the legs are not stiff (wakeUp first)"));
    assert_eq!(failed[1], Value::from(0));
    // Stiff but crouching: not standing.
    bench.call("ALMotion", "setStiffnesses", vec!["Body".into(), 1.0.into()]);
    bench.steps(5);
    bench.call("ALMotion", "move", vec![0.1.into(), 0.0.into(), 0.0.into()]);
    bench.steps(5);
    let failed = bench.memory("ALMotion/MoveFailed");
    assert_eq!(
        failed.as_array().unwrap()[0],
        Value::from("the robot is not standing (goToPosture StandInit first)")
    );
    assert_eq!(bench.call("ALMotion", "moveIsActive", vec![]), Value::from(false));
    // Wrong arguments are errors naming what was wrong.
    for (method, args, expected) in [
        ("move", vec![f64::NAN.into(), 0.0.into(), 0.0.into()], "x = NaN"),
        ("moveToward", vec![2.0.into(), 0.0.into(), 0.0.into()], "x = 2: expected a fraction in [-1, 1]"),
        ("moveTo", vec![1.0.into(), 0.0.into(), 0.0.into(), (-1.0).into()], "time = -1"),
        (
            "moveTo",
            vec![
                1.0.into(),
                0.0.into(),
                0.0.into(),
                Value::Array(vec![Value::Array(vec!["MaxStepX".into(), 0.5.into()])]),
            ],
            "MaxStepX = 0.5 is outside [0.001, 0.08]",
        ),
        (
            "move",
            vec![
                0.1.into(),
                0.0.into(),
                0.0.into(),
                Value::Array(vec![Value::Array(vec!["Speed".into(), 1.0.into()])]),
            ],
            "unknown key \"Speed\"",
        ),
        ("getMoveConfig", vec!["Fastest".into()], "expected \"Max\", \"Min\" or \"Default\""),
        // The walk holds at most 32 footsteps ahead.
        ("setFootSteps", footsteps(33), "33 footsteps with 0 planned: at most 32 ahead"),
    ] {
        let error = bench.session.call("ALMotion", method, args).unwrap_err().to_string();
        assert!(error.contains(expected), "{method}: {error}");
    }
    let max = bench.call("ALMotion", "getMoveConfig", vec!["Max".into()]);
    assert_eq!(max.as_array().unwrap()[0], Value::Array(vec!["MaxStepX".into(), 0.08.into()]));
}

#[test]
fn the_fall_manager_stops_a_walk_that_is_pushed_over() {
    let mut walker = Walker::awake();
    walker.call("move", vec![0.2.into(), 0.0.into(), 0.0.into()]);
    walker.steps(100);
    walker.bench.sim.push([-60.0, 0.0, 0.0], Duration::from_millis(150)).unwrap();
    let mut failed = None;
    for _ in 0..300 {
        walker.bench.step();
        let event = walker.bench.memory("ALMotion/MoveFailed");
        if let Some(reason) = event.as_array().map(|value| value[0].clone()) {
            failed = Some(reason);
            break;
        }
    }
    assert_eq!(failed, Some(Value::from("the robot fell")));
    assert_eq!(walker.bench.memory("robotIsFalling"), Value::from(true));
    assert_eq!(walker.call("moveIsActive", vec![]), Value::from(false));
}

/// The feet's ankles on the ground, as the simulator has them: [x, y, yaw] left, right.
fn feet(walker: &Walker) -> [[f64; 3]; 2] {
    walker.bench.sim.truth().unwrap().feet.expect("NAO's legs")
}

/// Where `foot` is seen from `from`: forward, left (m), turned (rad).
fn relative(from: [f64; 3], foot: [f64; 3]) -> [f64; 3] {
    let (sin, cos) = from[2].sin_cos();
    let (dx, dy) = (foot[0] - from[0], foot[1] - from[1]);
    [dx * cos + dy * sin, -dx * sin + dy * cos, foot[2] - from[2]]
}

#[test]
fn set_foot_steps_places_each_foot_within_2_cm_of_its_target() {
    let mut walker = Walker::awake();
    let plan: [(&str, [f64; 3]); 6] = [
        ("LLeg", [0.04, 0.1, 0.0]),
        ("RLeg", [0.04, -0.1, 0.0]),
        ("LLeg", [0.05, 0.12, 0.2]),
        ("RLeg", [0.02, -0.1, -0.2]),
        ("LLeg", [-0.03, 0.1, 0.0]),
        ("RLeg", [0.0, -0.1, 0.0]),
    ];
    let legs: Vec<Value> = plan.iter().map(|(leg, _)| (*leg).into()).collect();
    let steps: Vec<Value> =
        plan.iter().map(|(_, step)| Value::Array(step.iter().map(|&v| v.into()).collect())).collect();
    let times: Vec<Value> = (1..=plan.len()).map(|step| (0.4 * step as f64).into()).collect();
    let args = vec![Value::Array(legs), Value::Array(steps), Value::Array(times), true.into()];
    walker.call("setFootSteps", args);
    // A footstep has landed when the next begins (getFootSteps' footsteps ahead drop by
    // one), and the last one when the walk stops.
    let ahead = |walker: &Walker| {
        let steps = walker.call("getFootSteps", vec![]);
        steps.as_array().unwrap()[3].as_array().unwrap().len()
    };
    let mut landed = Vec::new();
    let mut last_ahead = plan.len();
    let mut cycles = 0;
    while walker.call("moveIsActive", vec![]) == Value::from(true) {
        walker.step();
        cycles += 1;
        assert!(cycles < 1500, "still walking the footsteps");
        let now = ahead(&walker);
        let total: f64 = naobroker_lola::names::FSR
            .iter()
            .map(|name| walker.bench.number(&format!("Device/SubDeviceList/{name}")))
            .sum();
        if cycles % 3 == 0 {
            eprintln!("c{cycles} fsr {total:.2} feet {:?}", feet(&walker));
        }
        if now < last_ahead && last_ahead < plan.len() {
            landed.push(feet(&walker));
        }
        last_ahead = now;
    }
    walker.steps(20);
    landed.push(feet(&walker));
    assert_eq!(
        landed.len(),
        plan.len(),
        "a landing per footstep: {:?}",
        walker.bench.memory("ALMotion/MoveFailed")
    );
    for (index, feet) in landed.iter().enumerate() {
        let (leg, target) = plan[index];
        let (swing, support) = if leg == "LLeg" { (feet[0], feet[1]) } else { (feet[1], feet[0]) };
        let placed = relative(support, swing);
        let off = (placed[0] - target[0]).hypot(placed[1] - target[1]);
        assert!(off < 0.02, "footstep {index} ({leg}) placed at {placed:?}, asked {target:?}");
        assert!((placed[2] - target[2]).abs() < 0.1, "footstep {index} turned {placed:?}");
    }
}

#[test]
fn foot_contact_protection_stops_a_walk_lifted_off_the_ground() {
    let mut walker = Walker::awake();
    let wrong = Value::Array(vec![Value::Array(vec!["ENABLE_STOMPING".into(), true.into()])]);
    let error = walker.bench.session.call("ALMotion", "setMotionConfig", vec![wrong]).unwrap_err();
    assert!(error.to_string().contains("ENABLE_FOOT_CONTACT_PROTECTION"), "{error}");
    let on = Value::Array(vec![Value::Array(vec!["ENABLE_FOOT_CONTACT_PROTECTION".into(), true.into()])]);
    walker.call("setMotionConfig", vec![on]);
    walker.call("move", vec![0.1.into(), 0.0.into(), 0.0.into()]);
    walker.steps(100);
    // Lifted: 54 N up against its 53 N of weight, for 1.6 s.
    walker.bench.sim.push([0.0, 0.0, 54.0], Duration::from_millis(1600)).unwrap();
    let mut failed = None;
    for _ in 0..200 {
        walker.bench.step();
        if let Some(reason) =
            walker.bench.memory("ALMotion/MoveFailed").as_array().map(|value| value[0].clone())
        {
            failed = Some(reason);
            break;
        }
    }
    assert_eq!(failed, Some(Value::from("the feet left the ground")));
    assert_eq!(walker.call("moveIsActive", vec![]), Value::from(false));
}
