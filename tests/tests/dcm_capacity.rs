//! The DCM's 4096-command capacity counts what remains after a request's own clearing,
//! through naocli against the real broker (manual clock).

use naobroker_e2e::TestBroker;
use serde_json::json;

const YAW: &str = "HeadYaw/Position/Actuator/Value";

fn size(broker: &TestBroker) -> serde_json::Value {
    broker.call("DCM.getBufferSize", &[YAW])
}

/// `count` commands from t = 10 000 on, 10 ms apart: far in the future of this test.
fn commands(count: usize, first: i64) -> Vec<serde_json::Value> {
    (0..count as i64).map(|i| json!([0.1, first + i * 10])).collect()
}

fn set(broker: &TestBroker, update: &str, commands: Vec<serde_json::Value>) -> Result<(), String> {
    let request = json!([YAW, update, commands]).to_string();
    let output = broker.naocli(&["call", "DCM.set", &request]);
    match output.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
    }
}

/// A broker whose HeadYaw buffer holds 4096 commands.
fn full_broker() -> TestBroker {
    let broker = TestBroker::start("start_time_ms = 0\n");
    set(&broker, "Merge", commands(4096, 10_000)).unwrap();
    broker.step(1);
    assert_eq!(size(&broker), json!(4096));
    broker
}

#[test]
fn clear_all_on_a_full_buffer_counts_only_its_own_commands() {
    let broker = full_broker();
    set(&broker, "ClearAll", commands(1, 20_000)).unwrap();
    broker.step(1);
    assert_eq!(size(&broker), json!(1));
    // A ClearAll as large as the buffer fits too; one more does not.
    set(&broker, "ClearAll", commands(4096, 30_000)).unwrap();
    let error = set(&broker, "ClearAll", commands(4097, 30_000)).unwrap_err();
    assert!(error.contains("would hold 4097 timed commands, the limit is 4096"), "{error}");
    broker.step(1);
    assert_eq!(size(&broker), json!(4096));
    assert_eq!(broker.call("DCM.stats", &[])["requests_refused"], json!(0), "the cycle never refused one");
}

#[test]
fn a_queued_clear_all_makes_room_for_what_follows_it() {
    let broker = full_broker();
    // Whether or not the cycle applied the ClearAll before the Merge arrives, 4096 fit.
    set(&broker, "ClearAll", commands(1, 20_000)).unwrap();
    set(&broker, "Merge", commands(4095, 30_000)).unwrap();
    let error = set(&broker, "Merge", commands(1, 90_000)).unwrap_err();
    assert!(error.contains("would hold 4097"), "{error}");
    broker.step(1);
    assert_eq!(size(&broker), json!(4096));
}

#[test]
fn clear_after_and_clear_before_are_counted_whole() {
    // What they clear depends on the buffer when the cycle applies them: the check counts
    // every command they bring, so a full buffer refuses them even if they would clear.
    let broker = full_broker();
    for update in ["ClearAfter", "ClearBefore", "Merge"] {
        let error = set(&broker, update, commands(1, 5_000)).unwrap_err();
        assert!(error.contains("would hold 4097"), "{update}: {error}");
    }
    broker.step(1);
    assert_eq!(size(&broker), json!(4096), "nothing of the refused requests was applied");
}

#[test]
fn an_alias_naming_one_actuator_twice_is_counted_group_by_group() {
    let broker = full_broker();
    broker.call("DCM.createAlias", &[&json!(["Twice", [YAW, YAW]]).to_string()]);
    // ClearAll per group: the second list replaces the first, which replaced the buffer.
    let request =
        json!(["Twice", "ClearAll", "time-separate", 0, [20_000, 20_010], [[0.1, 0.2], [0.3, 0.4]]]);
    broker.call("DCM.setAlias", &[&request.to_string()]);
    broker.step(1);
    assert_eq!(size(&broker), json!(2));
    // Merge per group: both lists count, against what the buffer holds.
    let times: Vec<i64> = (0..2048).map(|i| 40_000 + i * 10).collect();
    let values = vec![0.5; 2048];
    let request = json!(["Twice", "Merge", "time-separate", 0, times, [values.clone(), values]]);
    let error = broker.call_error("DCM.setAlias", &[&request.to_string()]);
    assert!(error.contains("would hold 4098"), "2 + 2048 + 2048: {error}");
}

#[test]
fn an_alias_names_at_most_four_members_per_actuator() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let actuators = broker.call("DCM.special", &["Config"])["actuators"].as_u64().unwrap() as usize;
    let limit = 4 * actuators;
    let alias = |count: usize| json!(["Long", vec![YAW; count]]).to_string();
    let error = broker.call_error("DCM.createAlias", &[&alias(limit + 1)]);
    let expected = format!("names {} actuators, the most an alias may name is {limit}", limit + 1);
    assert!(error.contains(&expected), "{error}");
    broker.call("DCM.createAlias", &[&alias(limit)]);
    // Every list for HeadYaw in turn: ClearAll each time, the last one stays.
    let lists: Vec<Vec<f64>> = (0..limit).map(|i| vec![i as f64 / limit as f64]).collect();
    let request = json!(["Long", "ClearAll", "time-separate", 0, [20_000], lists]);
    broker.call("DCM.setAlias", &[&request.to_string()]);
    broker.step(1);
    assert_eq!(size(&broker), json!(1));
}
