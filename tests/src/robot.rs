//! The robot the ALMotion and ALRobotPosture end-to-end tests drive: the real broker under
//! the manual clock, one blocking session to it, and the calls every such test makes.

use std::time::{Duration, Instant};

use naobroker_framework::blocking::Session;
use naobroker_framework::Value;

use crate::TestBroker;

/// DCM cycles a posted ALMotion call may take before `run_to_end` gives up on it.
const MAX_RUN_CYCLES: u64 = 10_000;
/// Real time a posted ALMotion call may take to start its task (a Cartesian call's planning)
/// before `post` gives up on it: only a bound for a failing test, never what a test measures.
const MAX_START: Duration = Duration::from_secs(60);

/// A broker under the manual clock (DCM time 0 at start), and a session to it.
pub struct Robot {
    pub broker: TestBroker,
    pub session: Session,
}

impl Robot {
    pub fn start() -> Robot {
        Robot::start_with("")
    }

    /// `top_extra`: configuration sections (e.g. `[motion.fall_manager]`).
    pub fn start_with(top_extra: &str) -> Robot {
        let broker = TestBroker::start_with(top_extra, "start_time_ms = 0\n");
        let session = Session::connect(&broker.url).unwrap();
        Robot { broker, session }
    }

    /// `module.method(args)`, expected to succeed.
    pub fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Value {
        self.session.call(module, method, args).unwrap_or_else(|e| panic!("{module}.{method}: {e}"))
    }

    pub fn motion(&self, method: &str, args: Vec<Value>) -> Value {
        self.call("ALMotion", method, args)
    }

    /// An ALMotion call expected to be refused: the refusal's message.
    pub fn error(&self, method: &str, args: Vec<Value>) -> String {
        match self.session.call("ALMotion", method, args) {
            Ok(value) => panic!("ALMotion.{method} answered {value}"),
            Err(error) => error.message,
        }
    }

    /// Run `n` DCM cycles (manual clock); the new DCM time.
    pub fn step(&self, n: u64) -> i64 {
        self.call("DCM", "step", vec![n.into()]).as_i64().unwrap()
    }

    /// What ALMemory holds under `key`.
    pub fn data(&self, key: &str) -> Value {
        self.call("ALMemory", "getData", vec![key.into()])
    }

    /// A number ALMemory holds.
    pub fn memory(&self, key: &str) -> f64 {
        let value = self.data(key);
        value.as_f64().unwrap_or_else(|| panic!("{key} is not a number: {value}"))
    }

    /// Whether the posted call `task` still runs, as of the motion cycles run so far:
    /// `getTaskList` first makes ALMotion read what they reported (a task's end), which it
    /// otherwise reads when it gets to it, after or before this question.
    pub fn is_running(&self, task: u64) -> bool {
        self.motion("getTaskList", vec![]);
        self.motion("isRunning", vec![task.into()]) == Value::from(true)
    }

    /// The ids of the motion tasks ALMotion lists.
    fn task_ids(&self) -> Vec<Value> {
        let tasks = self.motion("getTaskList", vec![]);
        let Value::Array(tasks) = &tasks else { panic!("getTaskList: {tasks}") };
        tasks.iter().filter_map(|task| task.as_array().and_then(|fields| fields.get(1)).cloned()).collect()
    }

    /// Post an ALMotion call and wait, DCM time standing still, until its task has started (a
    /// new task is listed) or the call has ended: a Cartesian call is planned off the broker's
    /// thread first, in real time the manual clock does not count, so DCM cycles stepped
    /// meanwhile would run before the task, as many as the machine's load makes them. The
    /// post's id.
    pub fn post(&self, method: &str, args: Vec<Value>) -> u64 {
        let before = self.task_ids();
        let task = self.session.post("ALMotion", method, args).unwrap_or_else(|e| panic!("{method}: {e}"));
        let posted = Instant::now();
        while self.is_running(task) && self.task_ids().iter().all(|id| before.contains(id)) {
            assert!(posted.elapsed() < MAX_START, "{method} started no task within {MAX_START:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
        task
    }

    /// Post a blocking ALMotion call, wait until its task has started ([`Robot::post`]), and
    /// step the DCM one cycle at a time until it has ended; the DCM cycles that took.
    pub fn run_to_end(&self, method: &str, args: Vec<Value>) -> u64 {
        let task = self.post(method, args);
        let mut cycles = 0;
        while self.is_running(task) {
            assert!(cycles < MAX_RUN_CYCLES, "{method} still running after {cycles} DCM cycles");
            self.step(1);
            cycles += 1;
        }
        cycles
    }
}
