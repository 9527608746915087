//! The real broker binary with naocli and module processes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use naobroker_e2e::{bin, Process, TestBroker};
use serde_json::json;

#[test]
fn naocli_lists_modules_and_calls_methods_with_json_arguments() {
    let broker = TestBroker::start("");
    let info = broker.naocli(&["info"]);
    let listed = String::from_utf8(info.stdout).unwrap();
    for module in ["ALMemory", "DCM", "ServiceDirectory"] {
        assert!(listed.lines().any(|line| line == module), "{listed}");
    }
    let info = String::from_utf8(broker.naocli(&["info", "ALMemory"]).stdout).unwrap();
    assert!(info.contains("insertData(String, Value) -> ()"), "{info}");
    assert_eq!(
        broker.call("ALMemory.insertData", &["Robot/Pose", r#"{"name": "Stand", "joints": [0.5, -1]}"#]),
        json!(null)
    );
    assert_eq!(
        broker.call("ALMemory.getData", &["Robot/Pose"]),
        json!({"name": "Stand", "joints": [0.5, -1]})
    );
    assert_eq!(
        broker.call("ALMemory.getData", &["DCM/Realtime"]),
        json!(false),
        "priority 0 in the test config"
    );
    let error = broker.call_error("ALMemory.getData", &["Nope"]);
    assert_eq!(error, "naocli: ALMemory.getData: no key named Nope");
    let error = broker.call_error("ALMemory.getData", &["1"]);
    assert_eq!(error, "naocli: ALMemory.getData: argument 1 must be String, got integer");
    assert_eq!(broker.call_error("Nobody.ping", &[]), "naocli: no module named Nobody");
    let posted = broker.naocli(&["post", "ALMemory.getDataOnChange", "Robot/Pose", "100"]);
    assert!(posted.status.success());
    let id: u64 = String::from_utf8(posted.stdout).unwrap().trim().parse().unwrap();
    assert!(id > 0);
    let stats = broker.naocli(&["stats"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert!(stats["broker"]["calls"].as_u64().unwrap() > 5);
    assert!(stats["dcm"]["lateness_histogram"].is_object());
}

#[test]
fn a_remote_module_serves_calls_raises_events_and_dies_cleanly() {
    let broker = TestBroker::start("");
    let mut echo = broker.module("echo", "Echo");
    assert_eq!(
        broker.call("Echo.echo", &[r#"[1, "two", {"three": 3.5}]"#]),
        json!([1, "two", {"three": 3.5}])
    );
    assert_eq!(broker.call("Echo.calls", &[]), json!(1));
    assert_eq!(broker.call_error("Echo.shout", &[r#""""#]), "naocli: Echo.shout: nothing to shout");

    // naocli subscribe prints the event a remote module raises, as a JSON line.
    let mut watcher = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "subscribe", "Echo/Shouted"])
            .stdout(Stdio::piped()),
    );
    let mut lines = BufReader::new(watcher.child.stdout.take().unwrap()).lines();
    let mut line = None;
    for _ in 0..50 {
        broker.call("Echo.shout", &[r#""hello""#]);
        std::thread::sleep(Duration::from_millis(100));
        let subscribers = broker.call("ServiceDirectory.stats", &[]);
        if subscribers["events_sent"].as_u64().unwrap_or(0) > 0 {
            line = lines.next();
            break;
        }
    }
    let line = line.expect("an event line").unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&line).unwrap(),
        json!({"event": "Echo/Shouted", "value": "HELLO"})
    );

    // SIGKILL: the broker unregisters it within 3 s and keeps serving.
    echo.kill();
    let gone_after = broker.wait_for_module("Echo", false);
    assert!(gone_after < Duration::from_secs(3), "unregistered after {gone_after:?}");
    assert_eq!(broker.call_error("Echo.echo", &["1"]), "naocli: no module named Echo");
    assert_eq!(broker.call("ALMemory.getData", &["Echo/Shouted"]), json!("HELLO"));
}

#[test]
fn exit_stops_a_remote_module_process() {
    let broker = TestBroker::start("");
    let mut echo = broker.module("echo", "Echo");
    assert_eq!(broker.call("Echo.exit", &[]), json!(true));
    let status = echo.child.wait().unwrap();
    assert!(status.success());
    broker.wait_for_module("Echo", false);
}

#[test]
fn a_remote_module_registers_again_after_the_broker_restarts() {
    let mut broker = TestBroker::start("");
    let _echo = broker.module("echo", "Echo");
    broker.restart();
    broker.wait_for_module("Echo", true);
    assert_eq!(broker.call("Echo.echo", &["42"]), json!(42));
}

#[test]
fn naocli_watch_prints_memory_values_as_they_change() {
    let broker = TestBroker::start("");
    broker.call("ALMemory.insertData", &["Counter", "1"]);
    let mut watcher = Process::spawn(
        Command::new(bin("naocli")).args(["--url", &broker.url, "watch", "Counter"]).stdout(Stdio::piped()),
    );
    let mut lines = BufReader::new(watcher.child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&first).unwrap(),
        json!({"key": "Counter", "value": 1})
    );
    broker.call("ALMemory.insertData", &["Counter", "2"]);
    let second = lines.next().unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&second).unwrap(),
        json!({"key": "Counter", "value": 2})
    );
}

#[test]
fn the_broker_listens_on_ipc_too() {
    let dir = naobroker_e2e::scratch_dir("ipc");
    let socket = dir.join("broker.sock");
    // A stale socket file from a crashed broker must not stop the next one.
    std::fs::write(&socket, b"stale").unwrap();
    let ipc = format!("ipc://{}", socket.display());
    let port = naobroker_e2e::free_port();
    let tcp = format!("tcp://127.0.0.1:{port}");
    let mut process = Process::spawn(
        Command::new(bin("naobroker"))
            .args(["--config", "/dev/null", "--clock", "manual", "--listen", &tcp, "--listen", &ipc])
            .stderr(Stdio::null()),
    );
    let mut answered = false;
    for _ in 0..100 {
        let output =
            Command::new(bin("naocli")).args(["--url", &ipc, "call", "DCM.getPrefix"]).output().unwrap();
        if output.status.success() {
            let prefix: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(prefix, json!(["Device/SubDeviceList/", "Device/DeviceList/"]));
            answered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    process.kill();
    assert!(answered, "no answer over {ipc}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn refused_real_time_priority_is_said_and_the_broker_runs_anyway() {
    // CAP_SYS_NICE dropped: the OS refuses SCHED_FIFO, as for an unprivileged user.
    let broker = TestBroker::start_wrapped(
        &["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice"],
        "",
        "priority = 80\nclock = \"real\"\n",
    );
    assert_eq!(broker.call("ALMemory.getData", &["DCM/Realtime"]), json!(false));
    assert_eq!(broker.call("DCM.stats", &[])["realtime"], json!(false));
    assert!(broker.log().contains("the OS refused SCHED_FIFO for the DCM cycle"), "{}", broker.log());
    let before = broker.call("ALMemory.getData", &["DCM/Cycle"]).as_i64().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(broker.call("ALMemory.getData", &["DCM/Cycle"]).as_i64().unwrap() > before, "the cycle runs");
}

#[test]
fn subscriptions_come_back_after_the_broker_restarts() {
    let mut broker = TestBroker::start("");
    let session = naobroker_framework::blocking::Session::connect(&broker.url).unwrap();
    let events = session.subscribe("Test/AfterRestart").unwrap();
    broker.restart();
    // The session notices the new broker (heartbeats) and subscribes again.
    let mut received = None;
    for i in 0..100 {
        broker.call("ALMemory.raiseEvent", &["Test/AfterRestart", &i.to_string()]);
        if let Ok(event) = events.recv_timeout(Duration::from_millis(100)) {
            received = Some(event);
            break;
        }
    }
    assert!(received.is_some(), "no event after the restart");
}
