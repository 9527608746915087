//! A Python tool of `tests/scripts` run beside the brokers, in step with the test: it prints one
//! request a line, the test answers `done` once it has done it, and `passed` is its last word.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

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
    let output = tool.wait_with_output().unwrap();
    match passed && output.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
    }
}
