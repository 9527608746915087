//! The binary refuses a bad configuration with a message naming it, and exits 1.
use std::process::Command;

#[test]
fn an_unknown_key_stops_the_broker_with_its_name() {
    let path = std::env::temp_dir().join(format!("naobroker-bad-{}.toml", std::process::id()));
    std::fs::write(&path, "[dcm]\nperiod = 10\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_naobroker")).arg("--config").arg(&path).output().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown field `period`"), "{stderr}");
}

#[test]
fn an_explicit_config_that_does_not_exist_is_an_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_naobroker"))
        .args(["--config", "/nonexistent/broker.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/broker.toml"));
}
