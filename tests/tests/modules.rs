//! The example modules as separate processes beside the real broker, under the manual
//! clock: what each did, checked on the robot's values.

use std::time::{Duration, Instant};

use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Session;
use naobroker_framework::{from_value, Value};

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn led_breather_sends_whole_choreographies_and_extends_them_with_clear_after() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let _breather = broker.module("led-breather", "LedBreather");
    wait_until("the first choreography", || {
        broker.call("DCM.getBufferSize", &["ChestBoard/Led/Red/Actuator/Value"]).as_u64().unwrap() > 0
    });
    let (start, period): (i64, i64) =
        serde_json::from_value(broker.call("LedBreather.getStart", &[])).unwrap();
    assert_eq!(start, 100, "getTime(100) at DCM time 0");
    let leds = [
        "Device/SubDeviceList/ChestBoard/Led/Red/Actuator/Value",
        "Device/SubDeviceList/Face/Led/Blue/Left/135Deg/Actuator/Value",
    ];
    let mut time = 0;
    while time < 6000 {
        // The breather extends its choreography from a wall-clock loop: let it see time pass.
        for (at, refreshes) in [(3000, 1), (5000, 2)] {
            if time == at {
                wait_until("a ClearAfter refresh", || {
                    broker.call("LedBreather.getRefreshes", &[]).as_u64().unwrap() >= refreshes
                });
            }
        }
        time = broker.step(10);
        if time < start {
            continue;
        }
        let expected = led_breather::breath((time - start) as i32, period as i32);
        for led in leds {
            let sent = broker.memory(led);
            assert!(
                (sent - expected).abs() <= 0.5 / 255.0 + 1e-9,
                "{led} at t={time}: {sent}, breathing says {expected}"
            );
        }
    }
}

#[test]
fn head_tracker_follows_its_target_and_its_death_leaves_the_others_running() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let _echo = broker.module("echo", "Echo");
    let mut tracker = broker.module("head-tracker", "HeadTracker");
    let subscribers = |event: &str| -> Vec<String> {
        serde_json::from_value(broker.call("ALMemory.getSubscribers", &[&format!("\"{event}\"")])).unwrap()
    };
    wait_until("the tracker's subscriptions", || {
        broker.call("ALMemory.getEventList", &[]).to_string().contains("ALMotion/PostProcess")
            && subscribers("ALMotion/PostProcess") == ["HeadTracker"]
            && subscribers("DCM/PostProcess") == ["HeadTracker"]
    });
    broker.call("ALMotion.setStiffnesses", &["\"Head\"", "1.0"]);
    broker.call("ALMemory.insertData", &["Tracking/HeadTarget", "[0.5, -0.2]"]);
    let session = Session::connect(&broker.url).unwrap();
    let head = Value::Array(vec![
        "Device/SubDeviceList/HeadYaw/Position/Sensor/Value".into(),
        "Device/SubDeviceList/HeadPitch/Position/Sensor/Value".into(),
    ]);
    let mut reached = false;
    for _ in 0..300 {
        broker.step(2);
        std::thread::sleep(Duration::from_millis(5));
        let measured: Vec<f64> =
            from_value(session.call("ALMemory", "getListData", vec![head.clone()]).unwrap()).unwrap();
        if (measured[0] - 0.5).abs() < 0.01 && (measured[1] + 0.2).abs() < 0.01 {
            reached = true;
            break;
        }
    }
    assert!(reached, "the head reached the target");
    let (dcm_cycles, motion_cycles, _error): (u64, u64, f64) =
        serde_json::from_value(broker.call("HeadTracker.stats", &[])).unwrap();
    assert!(
        dcm_cycles > 10 && motion_cycles > 5,
        "reacted to cycles: {dcm_cycles} DCM, {motion_cycles} motion"
    );

    // SIGKILL mid-run: gone within 3 s, subscriptions with it; the rest carries on.
    broker.step(2);
    tracker.kill();
    let started = Instant::now();
    broker.wait_for_module("HeadTracker", false);
    wait_until("its subscriptions to go", || {
        subscribers("ALMotion/PostProcess").is_empty() && subscribers("DCM/PostProcess").is_empty()
    });
    assert!(started.elapsed() < Duration::from_secs(3), "cleaned up after {:?}", started.elapsed());
    assert_eq!(broker.call("Echo.echo", &["\"still here\""]), serde_json::json!("still here"));
    broker.step(10);
    assert_eq!(broker.call("ALMemory.getData", &["Tracking/HeadTarget"]), serde_json::json!([0.5, -0.2]));
}
