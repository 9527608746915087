//! The Python client's pytest suite (clients/python/tests) against the broker binary
//! this build produced, so that `cargo test --workspace` runs it too.

use std::process::Command;

#[test]
fn python_client_suite() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "clients/python/tests"])
        .current_dir(repo)
        .env("NAOBROKER_BIN", naobroker_e2e::bin("naobroker"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "pytest failed (it needs pyzmq, msgpack and pytest: `python3 -m pip install ./clients/python pytest`):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed"), "{stdout}");
}
