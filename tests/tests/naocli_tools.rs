//! naocli's qicli verbs against the real broker: get, set, --json, top, trace, log (broker and modules).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use naobroker_e2e::{bin, Process, TestBroker};
use serde_json::{json, Value as Json};

fn stdout(output: std::process::Output) -> String {
    assert!(output.status.success(), "naocli failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn get_and_set_read_and_write_memory_as_text_or_json() {
    let broker = TestBroker::start("");
    assert_eq!(
        stdout(broker.naocli(&["set", "Robot/Pose", r#"{"name": "Stand"}"#])),
        "Robot/Pose: {\"name\":\"Stand\"}\n"
    );
    assert_eq!(stdout(broker.naocli(&["set", "Robot/Mode", "Sitting"])), "Robot/Mode: \"Sitting\"\n");
    assert_eq!(
        stdout(broker.naocli(&["--json", "set", "Robot/Count", "-3"])),
        "{\"key\":\"Robot/Count\",\"value\":-3}\n"
    );
    assert_eq!(
        stdout(broker.naocli(&["get", "Robot/Mode", "Robot/Count"])),
        "Robot/Mode: \"Sitting\"\nRobot/Count: -3\n"
    );
    let json: Json =
        serde_json::from_str(&stdout(broker.naocli(&["get", "--json", "Robot/Pose", "Robot/Mode"]))).unwrap();
    assert_eq!(json, json!({"Robot/Pose": {"name": "Stand"}, "Robot/Mode": "Sitting"}));
    let missing = broker.naocli(&["get", "Robot/Nothing"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("Robot/Nothing"));
    let modules: Json = serde_json::from_str(&stdout(broker.naocli(&["--json", "info"]))).unwrap();
    assert!(modules.as_array().unwrap().contains(&json!("ALMemory")), "{modules}");
}

#[test]
fn the_broker_counts_calls_per_module_and_top_shows_their_rate() {
    let broker = TestBroker::start("");
    broker.call("ALMemory.insertData", &["Counter", "1"]);
    for _ in 0..3 {
        broker.call("ALMemory.getData", &["Counter"]);
    }
    broker.call_error("ALMemory.getData", &["Nope"]);
    let stats = broker.call("ServiceDirectory.stats", &[]);
    let memory = &stats["by_module"]["ALMemory"];
    assert_eq!(memory["calls"], json!(5), "{stats}");
    assert_eq!(memory["errors"], json!(1), "{stats}");
    let buckets = memory["latency_buckets"].as_array().unwrap();
    assert_eq!(buckets.iter().map(|count| count.as_u64().unwrap()).sum::<u64>(), 5);
    // top's own second sample follows its first call to ServiceDirectory.stats.
    let line = stdout(broker.naocli(&["--json", "top", "--interval", "0.05", "--count", "1"]));
    let rows: Json = serde_json::from_str(line.trim()).unwrap();
    let directory = rows.as_array().unwrap().iter().find(|row| row["module"] == "ServiceDirectory");
    let directory = directory.unwrap_or_else(|| panic!("no ServiceDirectory row: {rows}"));
    assert!(directory["calls_per_s"].as_f64().unwrap() > 0.0, "{rows}");
    assert_eq!(directory["errors"], json!(0));
    assert!(directory["p50_max_us"].as_u64().unwrap() >= 1, "{rows}");
}

/// The lines a naocli process prints, read on a thread of their own.
fn lines_of(process: &mut Process) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    let lines = BufReader::new(process.child.stdout.take().unwrap()).lines();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

#[test]
fn trace_shows_each_call_with_its_caller_duration_and_outcome() {
    let broker = TestBroker::start("");
    broker.call("ALMemory.insertData", &["Counter", "1"]);
    let mut tracer = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "--json", "trace", "ALMemory"])
            .stdout(Stdio::piped()),
    );
    let lines = lines_of(&mut tracer);
    // The tracer subscribes at some point: call until its trace shows a call.
    let started = Instant::now();
    let record = loop {
        assert!(started.elapsed() < Duration::from_secs(20), "no trace line");
        broker.call_error("ALMemory.getData", &["Nope"]);
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            break serde_json::from_str::<Json>(&line).unwrap();
        }
    };
    assert_eq!(record["kind"], "call", "{record}");
    assert_eq!(record["module"], "ALMemory");
    assert_eq!(record["method"], "getData");
    assert_eq!(record["ok"], false);
    assert_eq!(record["error"], "ALMemory.getData: no key named Nope");
    assert!(record["caller"].as_str().unwrap().starts_with("naocli (client-"), "{record}");
    assert!(record["duration_us"].is_u64());
    // Calls to other modules are left out; a call to ALMemory comes through.
    broker.step(1);
    broker.call("ALMemory.getData", &["Counter"]);
    let next: Json = loop {
        let line = lines.recv_timeout(Duration::from_secs(20)).expect("a second trace line");
        let record: Json = serde_json::from_str(&line).unwrap();
        if record["ok"] == true {
            break record;
        }
    };
    assert_eq!((next["module"].as_str(), next["method"].as_str()), (Some("ALMemory"), Some("getData")));
}

/// The next line of `lines` that `wanted` accepts, calling `provoke` until one comes.
fn line_provoked(
    lines: &mpsc::Receiver<String>,
    mut provoke: impl FnMut(),
    wanted: impl Fn(&Json) -> bool,
) -> Json {
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(30), "no such line");
        provoke();
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            let record: Json = serde_json::from_str(&line).unwrap();
            if wanted(&record) {
                return record;
            }
        }
    }
}

#[test]
fn log_shows_the_brokers_lines_and_the_lines_modules_send() {
    let broker = TestBroker::start("");
    let mut viewer = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "--json", "log", "--level", "info"])
            .stdout(Stdio::piped()),
    );
    let lines = lines_of(&mut viewer);
    // The viewer subscribes at some point: register a module until its line shows.
    let registered = line_provoked(
        &lines,
        || {
            let mut echo = broker.module("echo", "Echo");
            echo.kill();
            broker.wait_for_module("Echo", false);
        },
        |line| line["message"].as_str().is_some_and(|message| message.contains("remote module registered")),
    );
    assert_eq!(registered["module"], "broker", "{registered}");
    assert_eq!(registered["level"], "INFO");
    assert!(
        registered["target"].as_str().unwrap().starts_with("naobroker_framework::broker"),
        "{registered}"
    );
    // A module process's line (ServiceDirectory.log, as the SDK's LogForwarding sends it) comes
    // under its client's name; a DEBUG line is below the viewer's level.
    broker.call("ServiceDirectory.log", &["DEBUG", "probe", "too detailed"]);
    broker.call("ServiceDirectory.log", &["WARN", "probe::arm", "arm hot"]);
    let sent =
        line_provoked(&lines, || {}, |line| line["target"].as_str().is_some_and(|t| t.starts_with("probe")));
    assert_eq!(
        sent,
        json!({"level": "WARN", "module": "naocli", "target": "probe::arm", "message": "arm hot"})
    );
    assert!(broker.call_error("ServiceDirectory.log", &["LOUD", "probe", "x"]).contains("expected TRACE"));
}

/// A module process started with `stderr` piped and `RUST_LOG` set, killed by the test.
fn module_process(broker: &TestBroker, rust_log: &str) -> Process {
    let process = Process::spawn(
        Command::new(bin("echo"))
            .arg(&broker.url)
            .env("RUST_LOG", rust_log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    broker.wait_for_module("Echo", true);
    process
}

#[test]
fn a_module_process_logs_to_stderr_by_rust_log_and_to_the_brokers_log() {
    let broker = TestBroker::start("");
    let mut echo = module_process(&broker, "debug");
    echo.kill();
    broker.wait_for_module("Echo", false);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut echo.child.stderr.take().unwrap(), &mut stderr).unwrap();
    // Plain text (no colour codes) into a pipe.
    assert!(stderr.contains(" DEBUG naobroker_framework::remote: connecting to the broker"), "{stderr}");
    assert!(stderr.contains("  INFO naobroker_framework::remote: module registered, serving"), "{stderr}");

    let mut viewer = Process::spawn(
        Command::new(bin("naocli")).args(["--url", &broker.url, "--json", "log"]).stdout(Stdio::piped()),
    );
    let lines = lines_of(&mut viewer);
    // The viewer subscribes at some point: start the module again until its line shows.
    let forwarded = line_provoked(
        &lines,
        || {
            let mut echo = module_process(&broker, "info");
            std::thread::sleep(Duration::from_millis(300));
            echo.kill();
            broker.wait_for_module("Echo", false);
        },
        |line| line["module"] == "Echo",
    );
    assert_eq!(forwarded["level"], "INFO", "{forwarded}");
    assert_eq!(forwarded["target"], "naobroker_framework::remote", "{forwarded}");
    assert!(forwarded["message"].as_str().unwrap().starts_with("module registered, serving"), "{forwarded}");
}

#[test]
fn a_live_verb_whose_reader_goes_ends_quietly_and_successfully() {
    let broker = TestBroker::start("");
    broker.call("ALMemory.insertData", &["Counter", "1"]);
    let mut watcher = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "watch", "Counter"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let mut first = String::new();
    BufReader::new(watcher.child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first.trim(), "Counter: 1");
    // The reader is gone (dropped above, as `| head -1` does); the next change ends naocli.
    let started = Instant::now();
    let status = loop {
        assert!(started.elapsed() < Duration::from_secs(20), "naocli watch still runs");
        broker.call("ALMemory.insertData", &["Counter", &started.elapsed().as_millis().to_string()]);
        if let Some(status) = watcher.child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut watcher.child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stderr, "");
}
