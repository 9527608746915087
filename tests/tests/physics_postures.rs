//! ALRobotPosture on the physical NAO (MuJoCo behind lolasim's LoLA, the real broker, stepped):
//! every transition between NAOqi's postures that the robot makes without falling, each
//! followed by `getPosture` and the ground truth (upright and on its feet or bottom, or lying
//! as the posture says). The key poses and speed limits under test are
//! `crates/posture/src/transitions.rs`; docs/posture.md, "Transitions", says which transitions
//! the physical robot makes and which it cannot.

use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::blocking::Session;
use naobroker_framework::Value;
use naobroker_lolasim::World;

/// LoLA cycles a `goToPosture` may take: the longest path here lasts about 12 s (1000 cycles).
const MAX_CYCLES: usize = 3000;
/// LoLA cycles the robot rests after a move before it is looked at (and before the next move,
/// as a script would): a rocking robot shows it by then.
const SETTLE_CYCLES: usize = 80;
/// The torso is flat on the ground beyond this pitch (rad), face up or down.
const LYING_PITCH: f64 = 1.2;
const FALLING: [&str; 2] = ["robotIsFalling", "robotHasFallen"];

/// The robot awake, standing at StandInit.
fn awake() -> LolaBench {
    let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
    bench.steps(2);
    bench.run_motion("wakeUp");
    bench.steps(SETTLE_CYCLES);
    bench
}

/// `goToPosture(posture, speed)` called from another thread, stepped until it answers, then
/// the robot left to settle; its answer. The fall manager is on before and after, and never
/// sees a fall.
fn go_to(bench: &mut LolaBench, posture: &str, speed: f64) -> bool {
    let (url, name) = (bench.broker.url.clone(), posture.to_owned());
    let call = std::thread::spawn(move || {
        Session::connect(&url)?.call("ALRobotPosture", "goToPosture", vec![name.into(), speed.into()])
    });
    let mut cycles = 0;
    while !call.is_finished() {
        assert!(cycles < MAX_CYCLES, "goToPosture({posture}) still runs after {MAX_CYCLES} LoLA cycles");
        bench.step();
        cycles += 1;
        for key in FALLING {
            assert_eq!(bench.memory(key), Value::from(false), "{key} on the way to {posture}");
        }
    }
    let answer = call.join().unwrap().unwrap_or_else(|error| panic!("goToPosture({posture}): {error}"));
    bench.steps(SETTLE_CYCLES);
    assert_eq!(bench.call("ALMotion", "getFallManagerEnabled", vec![]), Value::from(true), "after {posture}");
    for key in FALLING {
        assert_eq!(bench.memory(key), Value::from(false), "{key} after {posture}");
    }
    answer == Value::from(true)
}

fn posture(bench: &LolaBench) -> Value {
    bench.call("ALRobotPosture", "getPosture", vec![])
}

/// Reached `name` by `goToPosture` at `speed`, and on its feet or bottom.
fn upright(bench: &mut LolaBench, name: &str, speed: f64) {
    assert!(go_to(bench, name, speed), "goToPosture({name}, {speed}) answered false: {}", posture(bench));
    assert_eq!(posture(bench), Value::from(name));
    let truth = bench.sim.truth().unwrap();
    assert!(!truth.fallen, "{name}: {truth:?}");
}

/// Standing by the ground truth: the torso this high (m) or higher, and at most this far from
/// upright (rad); StandInit's and Stand's torsos are about 0.32 m up, Crouch's 0.23 m.
const STANDING_HEIGHT: f64 = 0.28;
const STANDING_TILT: f64 = 0.2;

/// Reached Stand by `goToPosture` from lying, and standing by the ground truth.
fn stood_up(bench: &mut LolaBench) {
    upright(bench, "Stand", 1.0);
    let truth = bench.sim.truth().unwrap();
    let tilt = (truth.torso[3].cos() * truth.torso[4].cos()).acos();
    assert!(truth.torso[2] > STANDING_HEIGHT && tilt < STANDING_TILT, "standing: {truth:?}");
}

/// Lying face up (`pitch_sign` -1) or down (+1) after `goToPosture(name, speed)`, in the
/// posture's family.
fn lying(bench: &mut LolaBench, name: &str, speed: f64, pitch_sign: f64) -> bool {
    let answer = go_to(bench, name, speed);
    let truth = bench.sim.truth().unwrap();
    assert!(truth.torso[4] * pitch_sign > LYING_PITCH, "{name}: {truth:?}");
    assert_eq!(bench.call("ALRobotPosture", "getPostureFamily", vec![]), Value::from(name));
    answer
}

#[test]
fn the_robot_sits_down_leans_back_sits_up_and_stands_up_again() {
    let mut bench = awake();
    upright(&mut bench, "Sit", 1.0);
    upright(&mut bench, "SitRelax", 0.5);
    upright(&mut bench, "Sit", 1.0);
    upright(&mut bench, "Crouch", 0.8);
    upright(&mut bench, "Sit", 0.3);
    // Sit → Crouch → StandInit → Stand.
    upright(&mut bench, "Stand", 1.0);
    upright(&mut bench, "StandZero", 1.0);
    upright(&mut bench, "StandInit", 1.0);
}

#[test]
fn the_robot_lies_down_on_its_back_from_sit() {
    let mut bench = awake();
    // StandInit → Crouch → Sit → LyingBack.
    assert!(lying(&mut bench, "LyingBack", 1.0, -1.0));
    assert_eq!(posture(&bench), Value::from("LyingBack"));
}

#[test]
fn the_robot_lies_down_on_its_belly_from_crouch() {
    let mut bench = awake();
    // StandInit → Crouch → LyingBelly, the left arm by the head as the table has it.
    assert!(lying(&mut bench, "LyingBelly", 1.0, 1.0));
    assert_eq!(posture(&bench), Value::from("LyingBelly"));
}

#[test]
fn the_robot_gets_up_from_its_back() {
    let mut bench = awake();
    assert!(lying(&mut bench, "LyingBack", 1.0, -1.0));
    // LyingBack → Sit (the stand-up motion) → Crouch, then StandInit → Stand.
    upright(&mut bench, "Crouch", 0.5);
    stood_up(&mut bench);
}

#[test]
fn the_robot_gets_up_from_its_belly() {
    let mut bench = awake();
    assert!(lying(&mut bench, "LyingBelly", 1.0, 1.0));
    // LyingBelly → Crouch (rolling onto the back, sitting up, sitting, crouching) → StandInit,
    // then Stand.
    upright(&mut bench, "StandInit", 1.0);
    stood_up(&mut bench);
}
