//! A module's posted tasks: their ids, the ones running, and the recent failures `wait` reports.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use futures::future::LocalBoxFuture;
use futures::FutureExt;
use naobroker_protocol::Value;
use tokio::sync::watch;

use crate::error::{CallError, CallResult};

/// Failures kept for `wait` after their task ended: enough for any script that waits on
/// what it posted, bounded so a module posting failing tasks forever holds little.
const REMEMBERED_FAILURES: usize = 64;

/// Posted tasks one module runs at once: `post` answers before the work is done, so the
/// broker's calls-in-flight bound does not see them; this bounds what a caller can start.
const MAX_RUNNING_TASKS: usize = 64;

struct Running {
    abort: tokio::task::AbortHandle,
    finished: watch::Receiver<bool>,
}

/// The tasks of one module, shared by its actor and the tasks themselves.
#[derive(Default)]
pub(crate) struct Tasks {
    last_id: u64,
    running: HashMap<u64, Running>,
    /// `(id, "task <id> (<Module.method>) failed: <message>")`, oldest first.
    failures: VecDeque<(u64, CallError)>,
}

impl Tasks {
    /// A task id for a posted call that finished at once.
    pub(crate) fn finished_at_once(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// Refuses a new task while [`MAX_RUNNING_TASKS`] run.
    pub(crate) fn check_room(&self, module: &str) -> Result<(), CallError> {
        if self.running.len() >= MAX_RUNNING_TASKS {
            return Err(CallError::refused(format!(
                "{MAX_RUNNING_TASKS} posted tasks are already running in {module}: wait for one to end"
            )));
        }
        Ok(())
    }

    /// Run `future` as a task named `label` (`Module.method`); answers its id.
    pub(crate) fn spawn(
        tasks: &Rc<RefCell<Tasks>>,
        label: String,
        future: LocalBoxFuture<'static, CallResult>,
    ) -> u64 {
        let id = tasks.borrow_mut().finished_at_once();
        let (done, finished) = watch::channel(false);
        let registry = Rc::downgrade(tasks);
        let handle = actix_rt::spawn(async move {
            let failure = future.await.err();
            if let Some(error) = &failure {
                tracing::warn!(task = id, method = %label, error = %error.message, "posted task failed");
            }
            if let Some(registry) = registry.upgrade() {
                let mut tasks = registry.borrow_mut();
                tasks.running.remove(&id);
                if let Some(error) = failure {
                    let message = format!("task {id} ({label}) failed: {}", error.message);
                    tasks.remember_failure(id, CallError::of(error.kind, message));
                }
            }
            let _ = done.send(true);
        });
        tasks.borrow_mut().running.insert(id, Running { abort: handle.abort_handle(), finished });
        id
    }

    /// `error` keeps the task's kind: a `wait` on a task that was refused is refused.
    fn remember_failure(&mut self, id: u64, error: CallError) {
        if self.failures.len() == REMEMBERED_FAILURES {
            self.failures.pop_front();
        }
        self.failures.push_back((id, error));
    }

    pub(crate) fn is_running(&self, id: u64) -> bool {
        self.running.contains_key(&id)
    }

    /// Stops a running task; true when it was running.
    pub(crate) fn stop(&mut self, id: u64) -> bool {
        match self.running.remove(&id) {
            Some(task) => {
                task.abort.abort();
                true
            }
            None => false,
        }
    }

    fn outcome(&self, id: u64) -> CallResult {
        match self.failures.iter().find(|(failed, _)| *failed == id) {
            Some((_, error)) => Err(error.clone()),
            None => Ok(true.into()),
        }
    }

    /// NAOqi's `wait(id, timeoutMs)`: true once the task ended (0 = no time limit), false
    /// when the time ran out; the task's error when it failed, even long after.
    pub(crate) fn wait(
        tasks: &Rc<RefCell<Tasks>>,
        id: u64,
        timeout_ms: i64,
    ) -> LocalBoxFuture<'static, CallResult> {
        let (last_id, finished) = {
            let tasks = tasks.borrow();
            (tasks.last_id, tasks.running.get(&id).map(|task| task.finished.clone()))
        };
        if id == 0 || id > last_id {
            let error = CallError::not_found(format!("no task {id} was posted (the last id is {last_id})"));
            return futures::future::ready(Err(error)).boxed_local();
        }
        let Some(mut finished) = finished else {
            return futures::future::ready(tasks.borrow().outcome(id)).boxed_local();
        };
        let tasks = Rc::downgrade(tasks);
        async move {
            // A stopped task drops its sender: an error here also means it ended.
            let done = finished.wait_for(|done| *done);
            let ended = if timeout_ms <= 0 {
                let _ = done.await;
                true
            } else {
                tokio::time::timeout(Duration::from_millis(timeout_ms as u64), done).await.is_ok()
            };
            match tasks.upgrade() {
                Some(tasks) if ended => tasks.borrow().outcome(id),
                _ => Ok(Value::from(ended)),
            }
        }
        .boxed_local()
    }
}
