//! Started with no broker to talk to, the module says so and exits 1.
use std::process::Command;

#[test]
fn without_a_broker_it_exits_naming_the_url() {
    let output = Command::new(env!("CARGO_BIN_EXE_led-breather")).arg("tcp://127.0.0.1:1").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach a broker at tcp://127.0.0.1:1"), "{stderr}");
}
