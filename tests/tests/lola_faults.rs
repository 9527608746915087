//! The real broker's link to LoLA under lolasim's faults: LoLA absent at start (everything
//! else served, the link found by itself), a restart (reconnected and counted), a stall
//! (counted, values kept and marked stale, then fresh again) and the relax policy after a
//! stall (stiffness ramped to 0, joints held). Nothing waits for time: each test waits for
//! the condition it checks, and stalls are made by not stepping.

use std::time::Duration;

use naobroker_e2e::lola::{
    entry, lola_broker, socket_dir, stepped_sim, wait_for, LolaBench, CYCLE_MS, DEADLINE,
};
use naobroker_framework::Value;

/// Quick stall detection: waiting for it is still condition-based.
const STALLING: &str = "on_link_loss = \"hold\"\nstall_ms = 200\n";
/// No stall between steps, quick reconnection.
const RECONNECTING: &str = "on_link_loss = \"hold\"\nstall_ms = 3600000\nreconnect_ms = 100\n";
const YAW_SENSOR: &str = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";
const CHEST_RED: &str = "ChestBoard/Led/Red/Actuator/Value";

fn state(bench: &LolaBench) -> Value {
    bench.memory("HAL/Link/State")
}

fn link_count(bench: &LolaBench, key: &str) -> u64 {
    entry(&bench.link(), key).as_u64().unwrap()
}

/// Step until ALMemory shows the link up and fresh (each state change shows within 100 ms).
fn step_until_fresh(bench: &mut LolaBench) {
    for _ in 0..5000 {
        bench.step();
        if state(bench) == Value::from("up") && bench.memory("HAL/Link/Stale") == Value::from(false) {
            return;
        }
    }
    panic!("the link never showed up again: {}", bench.broker.log());
}

#[test]
fn lola_absent_at_start_is_waited_for_while_the_broker_serves_and_found_when_it_starts() {
    let (dir, socket) = socket_dir();
    let broker = lola_broker(&socket, RECONNECTING);
    let call = |module: &str, method: &str, args: &[&str]| broker.call(&format!("{module}.{method}"), args);
    wait_for("the link shows absent", || call("ALMemory", "getData", &["HAL/Link/State"]) == "absent");
    assert_eq!(call("ALMemory", "getData", &["HAL/Link/Connected"]), false);
    assert_eq!(call("ALMemory", "getData", &["HAL/Link/Stale"]), true);
    wait_for("the log says why", || broker.log().contains("no LoLA to connect to"));
    assert!(broker.log().contains("No such file or directory"), "{}", broker.log());
    call("ALMemory", "insertData", &["Test/Served", "7"]);
    assert_eq!(call("ALMemory", "getData", &["Test/Served"]), 7);
    assert_eq!(call("DCM", "getTime", &["0"]), 0, "no robot, no cycle: DCM time stands still");
    // A command for the robot's time, queued until the robot is there.
    call("DCM", "set", &[&format!(r#"["{CHEST_RED}", "ClearAll", [[0.5, {}]]]"#, 2 * CYCLE_MS)]);

    let sim = stepped_sim(&socket);
    let mut bench = LolaBench::connected(dir, sim, broker);
    let answer = bench.steps(2);
    let red = f64::from(answer.map.chest[0]);
    assert!((red - 0.5).abs() <= 0.5 / 255.0 + 1e-6, "the queued command played: {red}");
    wait_for("the link shows up", || state(&bench) == Value::from("up"));
    assert_eq!(bench.memory("HAL/Link/Connected"), Value::from(true));
    assert_eq!(bench.memory("HAL/Link/Stale"), Value::from(false));
    assert_eq!(link_count(&bench, "reconnects"), 0, "the first connection is no reconnection");
}

#[test]
fn a_lola_restart_is_followed_by_a_reconnection_counted_and_time_goes_on() {
    let mut bench = LolaBench::start(RECONNECTING);
    bench.steps(3);
    let yaw = bench.number(YAW_SENSOR);
    bench.sim.restart(Duration::from_millis(100)).unwrap();
    bench.sim.wait_for_client(DEADLINE).unwrap();
    assert_eq!(bench.time(), 3 * CYCLE_MS, "DCM time stood still while LoLA was away");
    assert_eq!(bench.number(YAW_SENSOR), yaw, "ALMemory kept the last value");
    bench.steps(3);
    assert_eq!(bench.time(), 6 * CYCLE_MS);
    wait_for("the reconnection shows", || {
        bench.number("HAL/Link/Reconnects") == 1.0 && state(&bench) == Value::from("up")
    });
    let link = bench.link();
    assert_eq!(entry(&link, "reconnects").as_u64(), Some(1));
    assert_eq!(entry(&link, "last_loss"), &Value::from("LoLA closed the connection"));
    let stats = bench.sim.stats();
    assert_eq!((stats.restarts, stats.connections), (1, 2), "{stats}");
    assert_eq!((stats.sent, stats.answers, stats.missing, stats.double), (6, 6, 0, 0), "{stats}");
}

#[test]
fn a_stall_is_counted_and_shown_stale_with_the_last_values_kept_until_maps_come_again() {
    let mut bench = LolaBench::start(STALLING);
    bench.steps(3);
    let (time, yaw) = (bench.time(), bench.number(YAW_SENSOR));
    // No step: LoLA is silent for longer than stall_ms. ALMemory follows the link every 100 ms,
    // so it may still show a stall a loaded machine had before the steps: wait for the link
    // itself (DCM.stats) to say so too.
    wait_for("the stall shows in DCM.stats and ALMemory", || {
        entry(&bench.link(), "state") == &Value::from("stalled")
            && state(&bench) == Value::from("stalled")
            && bench.memory("HAL/Link/Stale") == Value::from(true)
    });
    assert!(bench.number("HAL/Link/Stalls") >= 1.0);
    let link = bench.link();
    assert!(entry(&link, "stalls").as_u64().unwrap() >= 1, "{link}");
    assert_eq!((entry(&link, "state"), entry(&link, "stale")), (&Value::from("stalled"), &Value::from(true)));
    assert_eq!(entry(&link, "connected"), &Value::from(true), "a stall keeps the connection");
    assert_eq!((bench.time(), bench.number(YAW_SENSOR)), (time, yaw), "no cycle, the last values kept");
    step_until_fresh(&mut bench);
    assert_eq!(entry(&bench.link(), "reconnects").as_u64(), Some(0));
    let stats = bench.sim.stats();
    assert_eq!((stats.missing, stats.double), (0, 0), "{stats}");
}

#[test]
fn relax_after_a_stall_ramps_the_stiffness_to_0_and_holds_the_joints_where_they_are() {
    let mut bench = LolaBench::start("on_link_loss = \"relax\"\nrelax_ms = 240\nstall_ms = 200\n");
    bench.step();
    // Stiff HeadYaw at 0.4; set again if a stall of the loaded machine relaxed it meanwhile.
    let mut before = None;
    for _ in 0..50 {
        let now = bench.time();
        bench.dcm_set("HeadYaw/Hardness/Actuator/Value", "ClearAll", &[(1.0, now)]);
        bench.dcm_set("HeadYaw/Position/Actuator/Value", "ClearAll", &[(0.4, now + 120)]);
        let answer = bench.steps(20);
        let measured = bench.sim.last_sensors().position[0];
        if answer.map.stiffness[0] == 1.0 && (measured - 0.4).abs() < 0.005 {
            before = Some(answer);
            break;
        }
    }
    assert!(before.is_some(), "HeadYaw stiff at 0.4: {}", bench.broker.log());
    wait_for("the stall shows", || state(&bench) == Value::from("stalled"));

    let first = bench.step();
    let held = bench.sim.last_sensors().position[0];
    let mut answers = vec![first];
    for _ in 0..60 {
        answers.push(bench.step());
    }
    let stiffness: Vec<f32> = answers.iter().map(|answer| answer.map.stiffness[0]).collect();
    assert!(stiffness[0] > 0.9, "no jump: the ramp starts where the robot is: {stiffness:?}");
    assert!(stiffness.windows(2).all(|pair| pair[1] <= pair[0]), "down only: {stiffness:?}");
    assert_eq!(*stiffness.last().unwrap(), 0.0, "relaxed: {stiffness:?}");
    let ramp = stiffness.iter().filter(|&&value| value > 0.0 && value < 1.0).count();
    assert!(ramp >= 10, "a ramp over relax_ms (20 cycles), not a step: {stiffness:?}");
    let tolerance = 0.5 / 4096.0 + 1e-6;
    assert!((f64::from(first.map.position[0]) - f64::from(held)).abs() <= tolerance, "held where measured");
    for answer in &answers {
        let position = answer.map.position[0];
        assert!((position - held).abs() < 0.002, "HeadYaw held at {held}, not {position}");
    }
    assert!(link_count(&bench, "stalls") >= 1);
}
