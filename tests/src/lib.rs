//! Starting the real binaries for end-to-end tests.
//!
//! The binaries are the ones `cargo test --workspace` builds beside the test
//! executables (each binary's package has an integration test of its own, which is
//! what makes cargo build it).
#![deny(unsafe_code)]

pub mod cartesian;
pub mod hostile;
pub mod lola;
pub mod robot;
pub mod tool;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

/// Path of a workspace binary built next to the running test.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test --workspace`, which builds every binary",
        path.display()
    );
    path
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A fresh scratch directory for one test.
pub fn scratch_dir(label: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "naobroker-{label}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A child process killed when the test ends, passing or not.
pub struct Process {
    pub child: Child,
}

impl Process {
    pub fn spawn(command: &mut Command) -> Process {
        Process { child: command.spawn().expect("spawn") }
    }

    /// SIGKILL (what `Child::kill` sends): the process gets no chance to say goodbye.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The real `naobroker` binary on a free port, with the manual clock unless the
/// extra configuration says otherwise.
pub struct TestBroker {
    pub url: String,
    pub dir: PathBuf,
    config: PathBuf,
    /// A command the broker runs under (`setpriv ...`), if any.
    wrapper: Vec<String>,
    process: Option<Process>,
}

impl TestBroker {
    /// `dcm_extra` goes into the `[dcm]` table (e.g. `start_time_ms = 0`).
    pub fn start(dcm_extra: &str) -> TestBroker {
        TestBroker::start_with("", dcm_extra)
    }

    /// `top_extra` is added before the tables (other sections can follow it).
    pub fn start_with(top_extra: &str, dcm_extra: &str) -> TestBroker {
        TestBroker::start_wrapped(&[], top_extra, dcm_extra)
    }

    /// Run the broker under `wrapper` (e.g. `setpriv` dropping a capability).
    pub fn start_wrapped(wrapper: &[&str], top_extra: &str, dcm_extra: &str) -> TestBroker {
        let dir = scratch_dir("broker");
        let config = dir.join("broker.toml");
        let has_clock = dcm_extra.contains("clock");
        let has_priority = dcm_extra.contains("priority");
        // A free port is free when drawn: another test's broker may take it first. This one
        // then cannot listen, and draws another.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let url = format!("tcp://127.0.0.1:{}", free_port());
            std::fs::write(
                &config,
                format!(
                    "{top_extra}\n[broker]\nlisten = [\"{url}\"]\n\n[dcm]\n{}{}{dcm_extra}\n",
                    if has_priority { "" } else { "priority = 0\n" },
                    if has_clock { "" } else { "clock = \"manual\"\n" }
                ),
            )
            .unwrap();
            let wrapper = wrapper.iter().map(|w| w.to_string()).collect();
            let mut broker =
                TestBroker { url, dir: dir.clone(), config: config.clone(), wrapper, process: None };
            match broker.try_launch() {
                Ok(()) => return broker,
                Err(exited) if attempts < 5 && exited.contains("cannot listen on") => continue,
                Err(exited) => panic!("naobroker exited {exited}"),
            }
        }
    }

    fn launch(&mut self) {
        if let Err(exited) = self.try_launch() {
            panic!("naobroker exited {exited}");
        }
    }

    /// Start the broker and wait until it is ready: its own log says so (another process may
    /// answer on its port) and it answers a ping. `Err` with its exit status and log when it
    /// exited first.
    fn try_launch(&mut self) -> Result<(), String> {
        let log = std::fs::File::create(self.dir.join("broker.log")).unwrap();
        let mut command = match self.wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(bin("naobroker"));
                command
            }
            None => Command::new(bin("naobroker")),
        };
        self.process =
            Some(Process::spawn(command.arg("--config").arg(&self.config).stdout(Stdio::null()).stderr(log)));
        let started = Instant::now();
        loop {
            if self.log().contains("naobroker ready")
                && self.naocli(&["call", "ServiceDirectory.ping"]).status.success()
            {
                return Ok(());
            }
            if let Some(status) = self.process.as_mut().and_then(|p| p.child.try_wait().unwrap()) {
                return Err(format!("with {status}: {}", self.log()));
            }
            assert!(started.elapsed() < Duration::from_secs(20), "broker not ready: {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The broker's process id (its memory use is in /proc/PID/status).
    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("the broker runs").child.id()
    }

    /// Whether the broker process is still running: it neither exited nor crashed.
    pub fn is_running(&mut self) -> bool {
        self.process.as_mut().is_some_and(|process| process.child.try_wait().unwrap().is_none())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("broker.log")).unwrap_or_default()
    }

    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill();
        }
    }

    /// Kill and start again on the same endpoint and configuration.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    pub fn naocli(&self, args: &[&str]) -> Output {
        Command::new(bin("naocli")).arg("--url").arg(&self.url).args(args).output().expect("naocli runs")
    }

    /// `naocli call TARGET ARGS...`, expected to succeed; its JSON result.
    pub fn call(&self, target: &str, args: &[&str]) -> Json {
        let mut all = vec!["call", target];
        all.extend_from_slice(args);
        let output = self.naocli(&all);
        assert!(
            output.status.success(),
            "naocli call {target} {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("naocli prints JSON")
    }

    /// `naocli call`, expected to fail with exit code 1; its error message.
    pub fn call_error(&self, target: &str, args: &[&str]) -> String {
        let mut all = vec!["call", target];
        all.extend_from_slice(args);
        let output = self.naocli(&all);
        assert_eq!(output.status.code(), Some(1), "naocli call {target} {args:?} should fail");
        assert!(output.stdout.is_empty());
        String::from_utf8_lossy(&output.stderr).trim().to_owned()
    }

    /// A number read from ALMemory.
    pub fn memory(&self, key: &str) -> f64 {
        self.call("ALMemory.getData", &[key]).as_f64().unwrap_or_else(|| panic!("{key} is not a number"))
    }

    /// Run `n` DCM cycles (manual clock); the new DCM time.
    pub fn step(&self, n: u64) -> i64 {
        self.call("DCM.step", &[&n.to_string()]).as_i64().unwrap()
    }

    /// Start a module binary connected to this broker and wait until it is registered.
    pub fn module(&self, binary: &str, module_name: &str) -> Process {
        let process = Process::spawn(
            Command::new(bin(binary)).arg(&self.url).stdout(Stdio::null()).stderr(Stdio::inherit()),
        );
        self.wait_for_module(module_name, true);
        process
    }

    pub fn modules(&self) -> Vec<String> {
        serde_json::from_value(self.call("ServiceDirectory.modules", &[])).unwrap()
    }

    /// Wait (up to 5 s) until `module` is registered, or gone.
    pub fn wait_for_module(&self, module: &str, present: bool) -> Duration {
        let started = Instant::now();
        while self.modules().iter().any(|m| m == module) != present {
            assert!(started.elapsed() < Duration::from_secs(5), "{module} present={present} not reached");
            std::thread::sleep(Duration::from_millis(20));
        }
        started.elapsed()
    }
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
