//! The broker's watch over the real-time threads' trouble counters: their growth reaches the log.

use std::time::{Duration, Instant};

use naobroker_e2e::TestBroker;

#[test]
fn motion_counters_that_grow_are_logged() {
    let broker = TestBroker::start("");
    broker.call("ALMotion.setStiffnesses", &["LArm", "1.0"]);
    // The arm hanging at the side, then the elbow bent inward into the legs' box: collision
    // protection holds it (tests/tests/motion_reflexes.rs), and ALMotion.stats counts it.
    let joints = r#"["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll"]"#;
    broker.call("ALMotion.setAngles", &[joints, "[1.5708, 0.0, 0.0, -0.0349]", "1.0"]);
    broker.step(60);
    broker.call("ALMotion.setAngles", &["LElbowRoll", "-1.54", "1.0"]);
    broker.step(200);
    let stops = broker.call("ALMotion.stats", &[])["collision_stops"].as_u64().unwrap();
    assert!(stops > 0, "the arm was not held");
    // The watch reads the counters every 5 s.
    let started = Instant::now();
    let line = loop {
        let log = broker.log();
        if let Some(line) = log.lines().find(|line| line.contains("ALMotion trouble")) {
            break line.to_owned();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no ALMotion line in the log:\n{log}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(line.contains("INFO") && line.contains("collision_stops"), "{line}");
}
