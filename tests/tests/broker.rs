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
    // A call waits as long as its callee lives, unless the caller sets its own limit.
    let impatient =
        broker.naocli(&["--timeout", "0.3", "call", "ALMemory.getDataOnChange", "Robot/Pose", "0"]);
    assert_eq!(
        String::from_utf8_lossy(&impatient.stderr).trim(),
        "naocli: ALMemory.getDataOnChange timed out after 300 ms"
    );
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
            .args(["--url", &broker.url, "--json", "subscribe", "Echo/Shouted"])
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
fn only_its_own_client_may_make_a_remote_module_exit() {
    let broker = TestBroker::start("");
    let mut echo = broker.module("echo", "Echo");
    assert_eq!(
        broker.call_error("Echo.exit", &[]),
        "naocli: Echo.exit: only the client that registered Echo may make it exit"
    );
    assert_eq!(broker.call("Echo.echo", &["1"]), json!(1));
    assert!(echo.child.try_wait().unwrap().is_none(), "the module process still runs");
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
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "--json", "watch", "Counter"])
            .stdout(Stdio::piped()),
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
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
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
fn a_non_root_broker_with_cap_sys_nice_gets_real_time_priority() {
    // docs/realtime.md: uid and gid nobody, no groups, and CAP_SYS_NICE as the only capability,
    // kept across the uid change as an ambient capability (which needs it inheritable and
    // in the bounding set too).
    let setpriv = Command::new("setpriv").arg("--version").output();
    assert!(
        setpriv.is_ok_and(|output| output.status.success()),
        "this test runs the broker under `setpriv` (util-linux), which is not installed"
    );
    let broker = TestBroker::start_wrapped(
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all,+sys_nice",
            "--ambient-caps=-all,+sys_nice",
            "--bounding-set=-all,+sys_nice",
        ],
        "",
        "priority = 80\nclock = \"real\"\n",
    );
    let status = broker_status(&broker);
    let field = |name: &str| {
        status.lines().find_map(|line| line.strip_prefix(name)).map(str::trim).unwrap_or_default().to_owned()
    };
    assert!(field("Uid:").split_whitespace().all(|uid| uid == "65534"), "{status}");
    // Bit 23 is CAP_SYS_NICE: the broker holds it and nothing else.
    assert_eq!(field("CapEff:"), "0000000000800000", "{status}");
    assert_eq!(broker.call("ALMemory.getData", &["DCM/Realtime"]), json!(true), "{}", broker.log());
    assert_eq!(broker.call("DCM.stats", &[])["realtime"], json!(true));
    assert!(broker.log().contains("DCM cycle thread runs SCHED_FIFO"), "{}", broker.log());
}

/// Held by the tests below while they read or hold their CPU's PM QoS file.
static CPU_FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The CPU the tests below keep awake, and its PM QoS file: the last CPU.
fn resume_latency_file() -> (usize, std::path::PathBuf) {
    let cpu = std::thread::available_parallelism().map_or(1, |cpus| cpus.get()) - 1;
    (cpu, format!("/sys/devices/system/cpu/cpu{cpu}/power/pm_qos_resume_latency_us").into())
}

fn read_trimmed(file: &std::path::Path) -> String {
    std::fs::read_to_string(file).unwrap().trim().to_owned()
}

#[test]
fn the_dcm_keeps_its_cpu_awake_while_it_runs_and_lets_it_idle_once_stopped() {
    let _file = CPU_FILE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (cpu, file) = resume_latency_file();
    let before = read_trimmed(&file);
    assert_ne!(before, "n/a", "CPU {cpu} is held awake already: {}", file.display());
    let mut broker = TestBroker::start(&format!("clock = \"real\"\ncpu = {cpu}\nkeep_cpu_awake = true\n"));
    let started = std::time::Instant::now();
    while read_trimmed(&file) != "n/a" {
        assert!(started.elapsed() < Duration::from_secs(5), "CPU {cpu} not held: {}", broker.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(broker.log().contains("DCM cycle: CPU kept out of idle states"), "{}", broker.log());
    let terminated = Command::new("kill").args(["-TERM", &broker.pid().to_string()]).status().unwrap();
    assert!(terminated.success());
    while broker.is_running() {
        assert!(started.elapsed() < Duration::from_secs(15), "the broker did not stop: {}", broker.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(read_trimmed(&file), before, "{}", broker.log());
}

#[test]
fn a_cpu_the_broker_may_not_keep_awake_is_said_and_the_broker_runs_anyway() {
    let _file = CPU_FILE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (cpu, file) = resume_latency_file();
    let before = read_trimmed(&file);
    // uid nobody: sysfs's files are root's.
    let broker = TestBroker::start_wrapped(
        &["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
        "",
        &format!("clock = \"real\"\ncpu = {cpu}\nkeep_cpu_awake = true\n"),
    );
    let before_cycles = broker.call("ALMemory.getData", &["DCM/Cycle"]).as_i64().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        broker.call("ALMemory.getData", &["DCM/Cycle"]).as_i64().unwrap() > before_cycles,
        "the cycle runs"
    );
    assert!(broker.log().contains("cannot keep the DCM cycle's CPU awake"), "{}", broker.log());
    assert_eq!(read_trimmed(&file), before);
}

/// `/proc/<pid>/status` of the broker process started with `broker`'s configuration.
fn broker_status(broker: &TestBroker) -> String {
    let config = broker.dir.join("broker.toml");
    let config = config.to_str().unwrap();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let mut arguments = command_line.split(|&byte| byte == 0);
        let is_broker = arguments.next().is_some_and(|program| program.ends_with(b"naobroker"));
        if is_broker && arguments.any(|argument| argument == config.as_bytes()) {
            return std::fs::read_to_string(entry.path().join("status")).unwrap();
        }
    }
    panic!("no naobroker process runs with {config}");
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
