//! Long work and a killed broker, with the real `naobroker` binary and a Rust module process
//! (`probe-module`): a module blocked far past the silence limit stays registered and answers,
//! and its callback and stream come back after the broker is killed and started again.

use std::process::Command;
use std::time::Duration;

use naobroker_e2e::hostile::{counter, wait_until};
use naobroker_e2e::{bin, TestBroker};
use serde_json::{json, Value as Json};

// ---------------------------------------------------------------------------------------
// A long call into a Rust module that blocks its thread.

#[test]
fn a_rust_module_blocked_far_past_the_silence_limit_stays_registered_and_answers() {
    let broker = TestBroker::start("");
    let _probe = broker.module("probe-module", "Probe");
    let url = broker.url.clone();
    // 7 s with the module's thread asleep: its main connection is silent far past the
    // broker's 2 s limit; only its liveness connection speaks for it.
    let call = std::thread::spawn(move || {
        Command::new(bin("naocli")).args(["--url", &url, "call", "Probe.sleep", "7000"]).output().unwrap()
    });
    while !call.is_finished() {
        assert!(broker.modules().iter().any(|m| m == "Probe"), "Probe dropped mid-call: {}", broker.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    let output = call.join().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(serde_json::from_slice::<Json>(&output.stdout).unwrap(), json!(7000));
    assert_eq!(broker.call("Probe.ping", &[]), json!(true));
    assert_eq!(counter(&broker, "pending_remote_calls"), 0);
}

// ---------------------------------------------------------------------------------------
// Subscriptions restored after the broker is killed and started again.

const PROBE_EVENT: &str = "Test/Ping";

/// Raise `PROBE_EVENT` with values from `from` up until the probe's callback and its
/// stream both received one of them.
fn raise_until_the_probe_receives(broker: &TestBroker, from: i64) {
    let mut value = from;
    let received = |method: &str| {
        let values = broker.call(method, &[]);
        values.as_array().unwrap().iter().any(|v| v.as_i64().is_some_and(|v| v >= from))
    };
    wait_until("the probe's callback and stream to receive the event", Duration::from_secs(20), || {
        broker.call("ALMemory.raiseEvent", &[PROBE_EVENT, &value.to_string()]);
        value += 1;
        received("Probe.callbacks") && received("Probe.streamed")
    });
}

#[test]
fn a_rust_module_gets_its_callback_and_stream_back_after_the_broker_is_killed() {
    let mut broker = TestBroker::start("");
    let _probe = broker.module("probe-module", "Probe");
    raise_until_the_probe_receives(&broker, 1);
    broker.restart();
    wait_until("Probe to register again", Duration::from_secs(20), || {
        broker.modules().iter().any(|m| m == "Probe")
    });
    raise_until_the_probe_receives(&broker, 1000);
    assert_eq!(broker.call("ALMemory.getSubscribers", &[&format!("\"{PROBE_EVENT}\"")]), json!(["Probe"]));
}
