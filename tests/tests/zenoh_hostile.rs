//! Hostile peers on Zenoh (docs/team.md, docs/security.md): odd and huge key expressions and
//! payloads, a message past the session's bound, more calls than may be under way; the broker
//! answers each with an error or nothing and keeps serving (tests/scripts/zenoh_hostile.py).

use std::process::Command;

use naobroker_e2e::{free_port, TestBroker};

#[test]
fn odd_huge_and_too_many_queries_get_errors_and_the_broker_lives() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let zenoh = format!(
        "[zenoh]\nrobot = \"nao-h\"\nlisten = [\"{endpoint}\"]\nscouting = false\n\
         calls = [\"ALMemory.getData\", \"Probe.sleep\"]\n"
    );
    let mut broker = TestBroker::start_with(&zenoh, "");
    let _probe = broker.module("probe-module", "Probe");
    let setup = serde_json::json!({"robot": "nao-h", "endpoint": endpoint});
    let output = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/zenoh_hostile.py"))
        .arg(setup.to_string())
        .output()
        .expect("python3 runs (with eclipse-zenoh: README's test command)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("passed"),
        "{stdout}\n{}\nbroker log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        broker.log()
    );
    assert!(broker.is_running());
    let stats = broker.call("Zenoh.stats", &[]);
    assert!(stats["zenoh_queries_busy"].as_u64().unwrap() >= 1, "{stats}");
}
