//! The DCM driven by naocli alone under the manual clock: the seed's tables, every
//! update type, the int32 roll-over, triggers, aliases and bad requests.

use naobroker_e2e::TestBroker;
use serde_json::json;

const TEST_ROBOT: &str = r#"
name = "test bench"
[[device]]
name = "Test/Actuator/Value"
kind = "interpolated"
unit = "deg"
min = -1000.0
max = 1000.0
gain = 10000.0
offset = 0.0
initial = 0.0
"#;

/// A broker driving one wide, fine actuator, its DCM clock starting at `start`.
fn bench_broker(start: i64) -> TestBroker {
    let dir = naobroker_e2e::scratch_dir("robot");
    let robot = dir.join("robot.toml");
    std::fs::write(&robot, TEST_ROBOT).unwrap();
    TestBroker::start(&format!("start_time_ms = {start}\nrobot = \"{}\"\n", robot.display()))
}

const TEST_KEY: &str = "Device/SubDeviceList/Test/Actuator/Value";

fn set(broker: &TestBroker, update: &str, commands: &[(i64, f64)]) {
    let list: Vec<serde_json::Value> = commands.iter().map(|&(t, v)| json!([v, t])).collect();
    let request = json!(["Test/Actuator/Value", update, list]).to_string();
    broker.call("DCM.set", &[&request]);
}

fn expect_rows(broker: &TestBroker, rows: &[(i64, f64)], shift: i64) {
    for &(t, expected) in rows {
        let time = broker.step(1);
        assert_eq!(time, i64::from((t + shift) as i32), "cycle time");
        let sent = broker.memory(TEST_KEY);
        assert!((sent - expected).abs() < 0.01, "at t={t}: sent {sent}, the seed says {expected}");
    }
}

fn seed_tables(shift: i64) {
    // First example: (10, 10) sent before t=10, cycles at 10 and 20, then (80, 40) arrives.
    let broker = bench_broker(shift);
    set(&broker, "Merge", &[(10 + shift, 10.0)]);
    broker.step(2);
    set(&broker, "Merge", &[(80 + shift, 40.0)]);
    expect_rows(
        &broker,
        &[(30, 15.0), (40, 20.0), (50, 25.0), (60, 30.0), (70, 35.0), (80, 40.0), (90, 40.0), (100, 40.0)],
        shift,
    );

    // Second example: four commands received between 0 and 10.
    let broker = bench_broker(shift);
    set(&broker, "Merge", &[(15 + shift, 10.0), (25 + shift, 30.0), (45 + shift, 20.0), (65 + shift, 0.0)]);
    expect_rows(
        &broker,
        &[(10, 6.6667), (20, 20.0), (30, 27.5), (40, 22.5), (50, 15.0), (60, 5.0), (70, 0.0), (80, 0.0)],
        shift,
    );
}

#[test]
fn naocli_replays_both_seed_tables() {
    seed_tables(0);
}

#[test]
fn a_choreography_across_the_int32_rollover_plays_as_one_that_does_not() {
    // Times are sent unwrapped, as a Python script adding offsets to getTime would.
    seed_tables(i64::from(i32::MAX) - 40);
}

#[test]
fn every_update_type() {
    let broker = bench_broker(0);
    let size = || broker.call("DCM.getBufferSize", &["Test/Actuator/Value"]);
    set(&broker, "Merge", &[(100, 1.0), (200, 2.0), (300, 3.0)]);
    set(&broker, "Merge", &[(150, 1.5)]);
    broker.step(1);
    assert_eq!(size(), json!(4));
    // ClearAfter: what is after the soonest new command goes.
    set(&broker, "ClearAfter", &[(180, 9.0)]);
    broker.step(1);
    assert_eq!(size(), json!(3), "100, 150, 180 remain");
    // ClearBefore mirrors it: what is before the latest new command goes.
    set(&broker, "ClearBefore", &[(160, 5.0), (170, 4.0)]);
    broker.step(1);
    assert_eq!(size(), json!(3), "160, 170, 180 remain");
    // The same time twice: the later-sent wins.
    set(&broker, "Merge", &[(180, 7.0)]);
    broker.step(15);
    assert_eq!(broker.memory(TEST_KEY), 7.0, "at t=180 the later 7.0 replaced 9.0");
    // ClearAll: only the new commands remain.
    set(&broker, "ClearAll", &[(250, -1.0)]);
    broker.step(1);
    assert_eq!(size(), json!(1));
    broker.step(10);
    assert_eq!(broker.memory(TEST_KEY), -1.0);
    broker.step(20);
    assert_eq!(broker.memory(TEST_KEY), -1.0, "no command left: the last value holds");
    assert_eq!(size(), json!(0));
}

#[test]
fn the_seed_002_led_examples_through_aliases() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let created = broker.call(
        "DCM.createAlias",
        &[concat!(
            r#"["ChestLeds", ["ChestBoard/Led/Red/Actuator/Value", "ChestBoard/Led/Green/Actuator/Value", "#,
            r#""ChestBoard/Led/Blue/Actuator/Value", "Nope"]]"#
        )],
    );
    assert_eq!(created[1][3], json!(""));
    // time-separate: 6 times, one value list per LED (the unknown member is skipped).
    let request = json!([
        "ChestLeds",
        "ClearAll",
        "time-separate",
        0,
        [0, 2000, 3000, 4000, 5000, 6000],
        [
            [1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            [1.0, 0.5, 1.0, 0.25, 0.125, 0.0],
            [0.0625, 0.125, 0.25, 0.5, 0.75, 1.0],
            [1, 1, 1, 1, 1, 1]
        ]
    ]);
    broker.call("DCM.setAlias", &[&request.to_string()]);
    broker.step(300);
    let red = broker.memory("Device/SubDeviceList/ChestBoard/Led/Red/Actuator/Value");
    let green = broker.memory("Device/SubDeviceList/ChestBoard/Led/Green/Actuator/Value");
    let blue = broker.memory("Device/SubDeviceList/ChestBoard/Led/Blue/Actuator/Value");
    // At t=3000: exactly on the third command of each list.
    assert_eq!((red, green), (1.0, 1.0));
    assert!((blue - 0.25).abs() <= 0.5 / 255.0, "blue {blue} is 0.25 rounded to the LED's 1/255 steps");
    // time-mixed: its own times per LED.
    let mixed = json!([
        "ChestLeds",
        "ClearAll",
        "time-mixed",
        [[[1.0, 3400], [0.0, 3600]], [[0.25, 3300]], [[0.125, 3200]], []]
    ]);
    broker.call("DCM.setAlias", &[&mixed.to_string()]);
    broker.step(40);
    assert_eq!(broker.memory("Device/SubDeviceList/ChestBoard/Led/Red/Actuator/Value"), 1.0);
    assert!(
        (broker.memory("Device/SubDeviceList/ChestBoard/Led/Green/Actuator/Value") - 0.25).abs()
            <= 0.5 / 255.0
    );
    // The value published is the one sent: a multiple of the LED's precision.
    let published = broker.memory("Device/SubDeviceList/ChestBoard/Led/Blue/Actuator/Value") * 255.0;
    assert!((published - published.round()).abs() < 1e-9);
}

#[test]
fn sonar_trigger_fires_once_its_time_has_come() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    assert_eq!(broker.memory("Device/SubDeviceList/US/Left/Sensor/Value"), 5.0);
    broker.call("DCM.set", &[r#"["US/Actuator/Value", "Merge", [[68, 50]]]"#]);
    broker.step(4);
    assert_eq!(
        broker.memory("Device/SubDeviceList/US/Actuator/Value"),
        0.0,
        "a future trigger has no effect"
    );
    assert_eq!(broker.memory("Device/SubDeviceList/US/Left/Sensor/Value"), 5.0);
    broker.step(2);
    assert_eq!(broker.memory("Device/SubDeviceList/US/Actuator/Value"), 68.0);
    broker.step(1);
    assert_eq!(broker.memory("Device/SubDeviceList/US/Left/Sensor/Value"), 0.8, "the simulated sonar echoes");
}

#[test]
fn values_are_clamped_to_the_device_range_and_precision() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    broker.call("DCM.set", &[r#"["HeadPitch/Position/Actuator/Value", "ClearAll", [[3.0, 10]]]"#]);
    broker.step(1);
    let sent = broker.memory("Device/SubDeviceList/HeadPitch/Position/Actuator/Value");
    assert_eq!(sent, (0.5149f64 * 4096.0).round() / 4096.0, "clamped to max, rounded to 1/4096 rad");
    assert_eq!(broker.memory("Device/SubDeviceList/HeadPitch/Position/Actuator/Gain"), 4096.0);
    // The full name works too, and the optional importance field is accepted.
    broker.call(
        "DCM.set",
        &[r#"["Device/SubDeviceList/HeadPitch/Position/Actuator/Value", "ClearAll", [[-0.25, 20, 0]]]"#],
    );
    broker.step(1);
    assert_eq!(broker.memory("Device/SubDeviceList/HeadPitch/Position/Actuator/Value"), -0.25);
}

#[test]
fn bad_requests_are_refused_whole_with_the_problem_named() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    broker.call(
        "DCM.createAlias",
        &[r#"["Pair", ["HeadYaw/Position/Actuator/Value", "HeadPitch/Position/Actuator/Value"]]"#],
    );
    let cases: &[(&str, &str, &str)] = &[
        ("DCM.set", r#"["Nope", "Merge", [[1, 10]]]"#, "unknown actuator or alias \"Nope\""),
        (
            "DCM.set",
            r#"["HeadYaw/Position/Sensor/Value", "Merge", [[1, 10]]]"#,
            "is a sensor, not an actuator",
        ),
        (
            "DCM.set",
            r#"["HeadYaw/Position/Actuator/Value", "Mix", [[1, 10]]]"#,
            "unknown update type \"Mix\"",
        ),
        ("DCM.set", r#"["HeadYaw/Position/Actuator/Value", "Merge", [1, 10]]"#, "command 1 must be an array"),
        (
            "DCM.set",
            r#"["HeadYaw/Position/Actuator/Value", "Merge", [["high", 10]]]"#,
            "the value must be a number, got \"high\"",
        ),
        ("DCM.set", r#"["HeadYaw/Position/Actuator/Value", "Merge"]"#, "must be [name, update type"),
        (
            "DCM.setAlias",
            r#"["Pair", "Merge", "time-sorted", []]"#,
            "unknown setAlias format \"time-sorted\"",
        ),
        ("DCM.setAlias", r#"["Nope", "Merge", "time-mixed", []]"#, "unknown alias \"Nope\""),
        (
            "DCM.setAlias",
            r#"["Pair", "Merge", "time-separate", 0, [10, 20], [[1, 2], [3]]]"#,
            "value list 2 has 1 values but there are 2 times",
        ),
        (
            "DCM.setAlias",
            r#"["Pair", "Merge", "time-separate", 0, [10], [[1]]]"#,
            "alias Pair has 2 actuators but the request has 1 value lists",
        ),
        (
            "DCM.setAlias",
            r#"["Pair", "Merge", "time-mixed", [[[1, 10]], [[2, 10]], [[3, 10]]]]"#,
            "alias Pair has 2 actuators but the request has 3 command lists",
        ),
        (
            "DCM.createAlias",
            r#"["HeadYaw/Position/Actuator/Value", ["HeadPitch/Position/Actuator/Value"]]"#,
            "is named like a device",
        ),
    ];
    for (target, request, expected) in cases {
        let error = broker.call_error(target, &[request]);
        assert!(error.contains(expected), "{target} {request}: {error}");
    }
    // Overflow of the 4096-command buffer: refused whole, nothing applied.
    let times: Vec<i64> = (1..=4097).map(|i| i * 10).collect();
    let values: Vec<f64> = vec![0.1; 4097];
    let request = json!(["Pair", "Merge", "time-separate", 0, times, [values.clone(), values]]).to_string();
    let error = broker.call_error("DCM.setAlias", &[&request]);
    assert!(error.contains("would hold 4097 timed commands, the limit is 4096"), "{error}");
    let fits: Vec<f64> = vec![0.1; 4096];
    let request =
        json!(["Pair", "Merge", "time-separate", 0, &times[..4096], [fits.clone(), fits]]).to_string();
    broker.call("DCM.setAlias", &[&request]);
    let one_more =
        broker.call_error("DCM.set", &[r#"["HeadPitch/Position/Actuator/Value", "Merge", [[0.2, 99999]]]"#]);
    assert!(one_more.contains("would hold 4097"), "{one_more}");
    broker.step(1);
    assert_eq!(
        broker.call("DCM.getBufferSize", &["HeadYaw/Position/Actuator/Value"]),
        json!(4095),
        "one consumed"
    );
    assert_eq!(
        broker.call("DCM.stats", &[])["requests_refused"],
        json!(0),
        "refused before reaching the cycle"
    );
}

#[test]
fn time_prefix_special_and_the_manual_clock() {
    let broker = TestBroker::start("start_time_ms = 1000\nperiod_us = 1000\n");
    assert_eq!(broker.call("DCM.getTime", &["0"]), json!(1000));
    assert_eq!(broker.call("DCM.getTime", &["-500"]), json!(500));
    assert_eq!(broker.step(7), 1007);
    assert_eq!(broker.call("ALMemory.getData", &["DCM/Time"]), json!(1007));
    assert_eq!(broker.call("DCM.getPrefix", &["0"]), json!(["Device/SubDeviceList/", "Device/DeviceList/"]));
    assert_eq!(broker.call("DCM.special", &[r#""Version""#]), json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(broker.call("DCM.special", &[r#""Config""#])["period_us"], json!(1000));
    broker.call("DCM.set", &[r#"["HeadYaw/Position/Actuator/Value", "Merge", [[0.5, 5000]]]"#]);
    broker.call("DCM.special", &[r#""Reset""#]);
    broker.step(1);
    assert_eq!(broker.call("DCM.getBufferSize", &["HeadYaw/Position/Actuator/Value"]), json!(0));
    assert!(broker.call_error("DCM.special", &[r#""Dance""#]).contains("unknown special"));
}

#[test]
fn step_needs_the_manual_clock() {
    let broker = TestBroker::start("clock = \"real\"\n");
    assert!(broker.call_error("DCM.step", &["1"]).contains("step needs the manual clock"));
    let before = broker.call("DCM.getTime", &["0"]).as_i64().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(broker.call("DCM.getTime", &["0"]).as_i64().unwrap() > before, "the real clock moves by itself");
}

#[test]
fn dcm_cycle_events_reach_a_remote_subscriber_once_per_cycle_in_order() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let session = naobroker_framework::blocking::Session::connect(&broker.url).unwrap();
    let pre = session.subscribe("DCM/PreProcess").unwrap();
    let post = session.subscribe("DCM/PostProcess").unwrap();
    broker.step(5);
    for cycle in 1..=5i64 {
        for events in [&pre, &post] {
            let event = events.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
            assert_eq!(
                naobroker_framework::from_value::<(i64, i64)>(event.value).unwrap(),
                (cycle, cycle * 10)
            );
        }
    }
    assert!(pre.try_recv().is_err() && post.try_recv().is_err(), "one event of each per cycle");
}
