//! The Python client's pytest suite (clients/python/tests) against the broker binary
//! this build produced, so that `cargo test --workspace` runs it too.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far beyond the suite's minute: past it the suite is stuck, and fails with what it printed.
const SUITE_LIMIT: Duration = Duration::from_secs(900);

/// A test stuck this long has its threads' tracebacks printed (pytest's faulthandler).
const STUCK_TEST_SECONDS: u32 = 120;

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

#[test]
fn python_client_suite() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let faulthandler = format!("faulthandler_timeout={STUCK_TEST_SECONDS}");
    let mut pytest = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", &faulthandler, "clients/python/tests"])
        .current_dir(repo)
        .env("NAOBROKER_BIN", naobroker_e2e::bin("naobroker"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a stuck suite is killed with the brokers and scripts it started
        // (they hold its output pipes open).
        .process_group(0)
        .spawn()
        .expect("python3 runs");
    let stdout = read_all(pytest.stdout.take().unwrap());
    let stderr = read_all(pytest.stderr.take().unwrap());
    let deadline = Instant::now() + SUITE_LIMIT;
    let status = loop {
        if let Some(status) = pytest.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let group = format!("-{}", pytest.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = pytest.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    let Some(status) = status else {
        panic!("pytest still running after {SUITE_LIMIT:?}, killed:\n{stdout}\n{stderr}");
    };
    assert!(
        status.success(),
        "pytest failed (it needs pyzmq, msgpack, pytest and qi in the first python3 on PATH: the \
         README's test command makes them a virtual environment, `python3 -m venv .venv && \
         .venv/bin/pip install -q ./clients/python pytest qi==3.1.5`, and runs cargo test with \
         PATH=\"$PWD/.venv/bin:$PATH\"):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed"), "{stdout}");
}
