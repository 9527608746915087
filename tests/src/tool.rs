//! A Python tool of `tests/scripts` run beside the brokers, in step with the test: it prints one
//! request a line, the test answers `done` once it has done it, and `passed` is its last word.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value as Json;

/// The longest a tool may run. A tool that failed can hang at its exit (Python waits for the
/// threads of Zenoh's callbacks): past this it is killed, so that the test fails with the
/// tool's stderr instead of hanging.
const TOOL_DEADLINE: Duration = Duration::from_secs(300);

/// Runs `tests/scripts/<script>` with `setup` (JSON) as its argument; `answer` does what each
/// request asks. `Err` holds the tool's stderr when it failed or never said `passed`.
pub fn run_tool(script: &str, setup: &Json, mut answer: impl FnMut(&str)) -> Result<(), String> {
    let mut tool = Command::new("python3")
        .arg(format!("{}/scripts/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(setup.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (with the packages of README's test command)");
    let (finished, watched) = mpsc::channel::<()>();
    let pid = tool.id().to_string();
    let watchdog = std::thread::spawn(move || {
        if watched.recv_timeout(TOOL_DEADLINE) == Err(mpsc::RecvTimeoutError::Timeout) {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    });
    let requests = BufReader::new(tool.stdout.take().unwrap()).lines();
    let mut answers = tool.stdin.take().unwrap();
    let mut passed = false;
    for line in requests.map_while(Result::ok) {
        if line == "passed" {
            passed = true;
            continue;
        }
        answer(&line);
        writeln!(answers, "done").unwrap();
    }
    // Its stdout closed: it ended or is ending. Its stderr is read to the end as it exits.
    let output = tool.wait_with_output().unwrap();
    let _ = finished.send(());
    watchdog.join().unwrap();
    match passed && output.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
    }
}
