//! ALMotion walking the physical NAO (MuJoCo behind lolasim's LoLA, stepped, the real
//! broker): NAOqi's locomotion calls, judged by the simulator's ground truth alone.

use std::f64::consts::FRAC_PI_2;

use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;
use naobroker_lolasim::World;

/// Step while the posted call `task` runs; the steps it took.
fn run_posted(bench: &mut LolaBench, task: u64, limit: usize) -> usize {
    let mut steps = 0;
    while bench.call("ALMotion", "isRunning", vec![task.into()]) == Value::from(true) {
        assert!(steps < limit, "still running after {limit} LoLA cycles: {:?}", bench.sim.truth());
        bench.step();
        steps += 1;
        assert!(!bench.sim.truth().unwrap().fallen, "fell: {:?}", bench.sim.truth());
    }
    steps
}

fn awake() -> LolaBench {
    let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
    bench.steps(2);
    let task = bench.session.post("ALMotion", "wakeUp", vec![]).unwrap();
    run_posted(&mut bench, task, 1000);
    bench.steps(10);
    bench
}

fn numbers(value: &Value) -> Vec<f64> {
    value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

#[test]
fn move_to_walks_to_a_place_and_turns_there() {
    let mut bench = awake();
    let start = bench.sim.truth().unwrap();
    let args = vec![1.0.into(), 0.5.into(), FRAC_PI_2.into()];
    let task = bench.session.post("ALMotion", "moveTo", args).unwrap();
    run_posted(&mut bench, task, 3000);
    let end = bench.sim.truth().unwrap();
    let moved = [end.torso[0] - start.torso[0], end.torso[1] - start.torso[1], end.torso[5] - start.torso[5]];
    println!(
        "moved {moved:?}, odometry {:?} {:?}",
        bench.call("ALMotion", "getRobotPosition", vec![false.into()]),
        bench.call("ALMotion", "getRobotPosition", vec![true.into()])
    );
    assert!((moved[0] - 1.0).hypot(moved[1] - 0.5) < 0.1, "moved {moved:?}");
    assert!((moved[2] - FRAC_PI_2).abs() < 10f64.to_radians(), "turned {moved:?}");
    let odometry = numbers(&bench.call("ALMotion", "getRobotPosition", vec![true.into()]));
    assert!((odometry[0] - 1.0).hypot(odometry[1] - 0.5) < 0.02, "odometry {odometry:?}");
    assert_eq!(bench.call("ALMotion", "moveIsActive", vec![]), Value::from(false));
}
