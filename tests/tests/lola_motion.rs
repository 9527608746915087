//! ALMotion moving a joint through LoLA: the real broker on lolasim's stepped cadence,
//! ALMotion every LoLA cycle (12 ms); `setStiffnesses` and `angleInterpolation` on
//! HeadYaw reach LoLA's `Stiffness` and `Position`, and the simulated body follows.

use naobroker_e2e::lola::{entry, LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;

const TARGET: f64 = 0.8;
/// A joint position reaches LoLA rounded to the description's 1/4096 rad, as a float32.
const POSITION_TOLERANCE: f64 = 0.5 / 4096.0 + 1e-6;
const YAW_SENSOR: &str = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";

#[test]
fn almotion_moves_head_yaw_through_lola_and_the_simulated_body_follows() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    bench.steps(2);
    assert_eq!(bench.call("ALMotion", "getMotionCycleTime", vec![]), Value::from(12));
    bench.call("ALMotion", "setStiffnesses", vec!["HeadYaw".into(), 1.0.into()]);
    let mut stiff = false;
    for _ in 0..50 {
        if bench.step().map.stiffness[0] == 1.0 {
            stiff = true;
            break;
        }
    }
    assert!(stiff, "ALMotion's stiffness reached LoLA");

    let args = vec!["HeadYaw".into(), TARGET.into(), 0.6.into(), true.into()];
    let task = bench.session.post("ALMotion", "angleInterpolation", args).unwrap();
    let mut commanded = Vec::new();
    let mut measured = Vec::new();
    while bench.call("ALMotion", "isRunning", vec![task.into()]) == Value::from(true) {
        assert!(commanded.len() < 400, "angleInterpolation still runs after 400 LoLA cycles");
        let answer = bench.step();
        commanded.push(f64::from(answer.map.position[0]));
        measured.push(f64::from(bench.sim.last_sensors().position[0]));
    }
    for _ in 0..20 {
        commanded.push(f64::from(bench.step().map.position[0]));
        measured.push(f64::from(bench.sim.last_sensors().position[0]));
    }

    let end = *commanded.last().unwrap();
    assert!((end - TARGET).abs() <= POSITION_TOLERANCE, "LoLA's Position ends on the target: {end}");
    assert!(
        commanded.windows(2).all(|pair| pair[1] >= pair[0] - POSITION_TOLERANCE),
        "one way to the target, no overshoot: {commanded:?}"
    );
    assert!(commanded.iter().filter(|&&value| value > 0.05 && value < TARGET - 0.05).count() >= 10);
    // The body follows: lolasim measures the joint near the target (its noise is 0.5 mrad).
    let position = *measured.last().unwrap();
    assert!((position - TARGET).abs() < 0.005, "lolasim's HeadYaw reached {position}");
    assert!(measured.iter().any(|&value| value > 0.1 && value < TARGET - 0.1), "it moved: {measured:?}");
    assert_eq!(bench.number(YAW_SENSOR), position, "ALMemory shows what LoLA measured");
    let angles = bench.call("ALMotion", "getAngles", vec!["HeadYaw".into(), true.into()]);
    let sensed = angles.as_array().unwrap()[0].as_f64().unwrap();
    assert!((sensed - position).abs() < 1e-6, "ALMotion's sensed angle {sensed}, LoLA's {position}");
    let stats = bench.call("ALMotion", "stats", vec![]);
    assert_eq!(entry(&stats, "skipped").as_u64(), Some(0), "ALMotion ran each of its cycles");
}
