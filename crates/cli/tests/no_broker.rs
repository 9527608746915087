//! naocli's own contract when there is nothing to talk to.
use std::process::Command;

#[test]
fn without_a_broker_it_exits_1_naming_the_url() {
    let output = Command::new(env!("CARGO_BIN_EXE_naocli"))
        .args(["--url", "tcp://127.0.0.1:1", "call", "ALMemory.getData", "DCM/Time"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach a broker at tcp://127.0.0.1:1"), "{stderr}");
}

#[test]
fn a_target_without_a_dot_is_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_naocli")).args(["call", "getData"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
}
