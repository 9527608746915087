//! The real broker driving the physical NAO (MuJoCo behind lolasim's LoLA, stepped): waking
//! up from the crouch LoLA starts in and standing 60 s on its feet, its weight on the FSRs and
//! foot contact as the ground truth has it; resting; falling when every stiffness goes off
//! or when pushed, which the fall manager sees through the inertial unit alone, and lying on
//! its back, which ALRobotPosture recognises.

use std::time::Duration;

use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;
use naobroker_lolasim::World;

/// NAOqi's StandInit, as the robot's legs hold it with both soles flat: the torso pitches
/// forward by minus the sum of a leg's pitch joints (HipPitch -0.45, KneePitch 0.70,
/// AnklePitch -0.35 rad).
const STAND_INIT_PITCH: f64 = 0.1;
const FIVE_DEGREES: f64 = 0.0873;
/// The robot's mass (kg): what its FSRs carry standing.
const WEIGHT_KG: f64 = 5.36;

fn awake() -> LolaBench {
    let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
    bench.steps(2);
    let start = bench.sim.truth().unwrap();
    assert!(!start.fallen && start.torso[2] < 0.25, "LoLA starts with the robot crouching: {start:?}");
    bench.run_motion("wakeUp");
    bench.steps(10);
    bench
}

fn fsr_kg(bench: &LolaBench) -> (f64, f64) {
    let key = |name: &str| format!("Device/SubDeviceList/{name}");
    let values: Vec<f64> = naobroker_lola::names::FSR.iter().map(|name| bench.number(&key(name))).collect();
    (values[..4].iter().sum(), values[4..].iter().sum())
}

#[test]
fn woken_up_the_robot_stands_60_s_on_both_feet_then_rests() {
    let mut bench = awake();
    assert_eq!(bench.call("ALMotion", "robotIsWakeUp", vec![]), Value::from(true));
    assert_eq!(bench.call("ALRobotPosture", "getPosture", vec![]), Value::from("StandInit"));
    for second in 1..=60 {
        bench.steps(83);
        let truth = bench.sim.truth().unwrap();
        assert!(!truth.fallen, "at {second} s: {truth:?}");
        assert!(truth.torso[3].abs() < FIVE_DEGREES, "roll at {second} s: {truth:?}");
        assert!((truth.torso[4] - STAND_INIT_PITCH).abs() < FIVE_DEGREES, "pitch at {second} s: {truth:?}");
    }
    let (left, right) = fsr_kg(&bench);
    assert!(((left + right) - WEIGHT_KG).abs() < 0.05 * WEIGHT_KG, "FSRs: {left} + {right} kg");
    assert!(left > 0.3 * WEIGHT_KG && right > 0.3 * WEIGHT_KG, "on both feet: {left} / {right} kg");
    assert_eq!(bench.number("footContact"), 1.0, "foot contact, as the truth: on its feet");
    let angle_y = bench.number("Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value");
    assert!((angle_y - bench.sim.truth().unwrap().torso[4]).abs() < 0.01, "the inertial unit's AngleY");

    bench.run_motion("rest");
    bench.steps(50);
    let truth = bench.sim.truth().unwrap();
    assert!(!truth.fallen && truth.torso[2] < 0.25, "rest crouches: {truth:?}");
    assert_eq!(bench.call("ALRobotPosture", "getPosture", vec![]), Value::from("Crouch"));
    assert!(bench.sim.last_actuators().stiffness.iter().all(|&stiffness| stiffness == 0.0), "limp");
    bench.steps(250);
    assert!(!bench.sim.truth().unwrap().fallen, "crouching limp, it stays");
}

/// Step until the fall is over (`robotHasFallen`); the steps at which `robotIsFalling` and
/// `robotHasFallen` were first true, and whether the truth had the robot fallen then.
fn fall(bench: &mut LolaBench) -> (usize, usize, bool) {
    let mut falling = None;
    for step in 1..=500 {
        bench.step();
        if falling.is_none() && bench.memory("robotIsFalling") == Value::from(true) {
            falling = Some(step);
        }
        if bench.memory("robotHasFallen") == Value::from(true) {
            let falling = falling.expect("robotIsFalling before robotHasFallen");
            return (falling, step, bench.sim.truth().unwrap().fallen);
        }
    }
    panic!("no robotHasFallen within 6 s: {:?}", bench.sim.truth().unwrap());
}

#[test]
fn every_stiffness_off_the_robot_falls_and_the_fall_manager_sees_it_from_the_inertial_unit() {
    let mut bench = awake();
    assert_eq!(bench.memory("robotHasFallen"), Value::from(false));
    bench.call("ALMotion", "setStiffnesses", vec!["Body".into(), 0.0.into()]);
    let (falling, fallen, truth_fallen) = fall(&mut bench);
    assert!(falling < fallen, "robotIsFalling at cycle {falling}, robotHasFallen at {fallen}");
    assert!(truth_fallen, "robotHasFallen when the robot lies: {:?}", bench.sim.truth().unwrap());
    bench.steps(20);
    assert_eq!(bench.number("footContact"), 0.0, "lying, its feet off the ground");
    let (left, right) = fsr_kg(&bench);
    assert!(left + right < 0.5, "FSRs {left} + {right} kg");
}

#[test]
fn a_push_of_40_n_for_100_ms_topples_the_standing_robot_and_the_fall_manager_protects_it() {
    let mut bench = awake();
    bench.sim.push([-40.0, 0.0, 0.0], Duration::from_millis(100)).unwrap();
    let (falling, fallen, truth_fallen) = fall(&mut bench);
    assert!(falling < fallen && truth_fallen, "{falling} < {fallen}: {:?}", bench.sim.truth().unwrap());
    assert!(bench.number("Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value") < -1.0, "on its back");
    let family = bench.call("ALRobotPosture", "getPostureFamily", vec![]);
    assert_eq!(family, Value::from("LyingBack"), "ALRobotPosture sees it on its back");
    assert_eq!(
        bench.memory("footContactChanged"),
        Value::from(false),
        "the event said the feet left the ground"
    );
    assert!(
        bench.sim.last_actuators().stiffness.iter().all(|&stiffness| stiffness == 0.0),
        "limp after the fall"
    );
}
