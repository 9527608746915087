//! Work done away from the broker's thread, in call order: one worker thread takes the
//! actor's jobs first come first served, and one task on the actor's thread hands each
//! result, in the order the jobs came, to the call waiting for it. At most `limit` jobs are
//! in flight; one more is refused at once, with an error naming the limit.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;

use naobroker_framework::CallError;
use tokio::sync::oneshot;

/// A worker thread and its deliveries; `T` is what a delivery gives the waiting call.
pub(super) struct OffThread<J, T> {
    jobs: std::sync::mpsc::Sender<J>,
    /// The calls waiting, in the order their jobs were sent: the worker answers in that order.
    waiting: Rc<RefCell<VecDeque<oneshot::Sender<T>>>>,
    limit: usize,
    name: &'static str,
}

impl<J: Send + 'static, T: 'static> OffThread<J, T> {
    /// Start the thread `name` doing `work`, and the task that turns each result into what
    /// its call receives (`deliver`, on the actor's thread, skipped when the call has gone).
    /// Call it on the actor's thread (a tokio `LocalSet`, as actix's arbiters are).
    pub(super) fn spawn<R: Send + 'static>(
        name: &'static str,
        limit: usize,
        mut work: impl FnMut(J) -> R + Send + 'static,
        mut deliver: impl FnMut(R) -> T + 'static,
    ) -> Result<Self, CallError> {
        let (jobs, job_receiver) = std::sync::mpsc::channel::<J>();
        let (results, mut result_receiver) = tokio::sync::mpsc::unbounded_channel::<R>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for job in job_receiver {
                    if results.send(work(job)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|error| CallError::new(format!("cannot start the {name} thread: {error}")))?;
        let waiting: Rc<RefCell<VecDeque<oneshot::Sender<T>>>> = Rc::default();
        let delivering = Rc::clone(&waiting);
        tokio::task::spawn_local(async move {
            while let Some(result) = result_receiver.recv().await {
                let Some(reply) = delivering.borrow_mut().pop_front() else { break };
                if !reply.is_closed() {
                    let _ = reply.send(deliver(result));
                }
            }
        });
        Ok(OffThread { jobs, waiting, limit, name })
    }

    /// Queue `job`; the future gives what `deliver` made of its result. Returns at once.
    pub(super) fn submit(&self, job: J) -> Result<impl Future<Output = Result<T, CallError>>, CallError> {
        let name = self.name;
        if self.waiting.borrow().len() >= self.limit {
            return Err(CallError::refused(format!(
                "{name}: {} calls are already waiting (the limit); try again once one has answered",
                self.limit
            )));
        }
        self.jobs.send(job).map_err(|_| CallError::new(format!("the {name} thread has stopped")))?;
        let (reply, answer) = oneshot::channel();
        self.waiting.borrow_mut().push_back(reply);
        Ok(async move { answer.await.map_err(|_| CallError::new(format!("the {name} thread has stopped"))) })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// The worker is held by a gate the test opens: while it works, the actor's thread
    /// goes on (submits, refuses, runs other tasks); results come back in call order.
    #[test]
    fn the_actor_thread_goes_on_while_the_worker_works_and_results_come_in_call_order() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        tokio::task::LocalSet::new().block_on(&runtime, async {
            let (open, gate) = mpsc::channel::<()>();
            let (working, started_work) = mpsc::channel::<u32>();
            let delivered = Rc::new(RefCell::new(Vec::new()));
            let record = Rc::clone(&delivered);
            let worker = OffThread::spawn(
                "test worker",
                3,
                move |job: u32| {
                    working.send(job).unwrap();
                    gate.recv().unwrap();
                    job * 10
                },
                move |result: u32| {
                    record.borrow_mut().push(result);
                    result + 1
                },
            )
            .unwrap();
            let first = worker.submit(1).unwrap();
            assert_eq!(started_work.recv().unwrap(), 1, "the worker is busy with the first job");
            let second = worker.submit(2).unwrap();
            let dropped = worker.submit(3).unwrap();
            let refused = worker.submit(4).err().unwrap();
            assert!(refused.message.contains("3 calls are already waiting"), "{}", refused.message);
            // Another task on the actor's thread runs while the worker is held.
            let (ping, pong) = oneshot::channel();
            tokio::task::spawn_local(async move { ping.send("answered").unwrap() });
            assert_eq!(pong.await.unwrap(), "answered");
            assert!(delivered.borrow().is_empty());
            drop(dropped);
            for _ in 0..3 {
                open.send(()).unwrap();
            }
            assert_eq!(second.await.unwrap(), 21);
            assert_eq!(first.await.unwrap(), 11);
            assert_eq!(started_work.iter().take(2).collect::<Vec<_>>(), [2, 3]);
            assert_eq!(
                *delivered.borrow(),
                [10, 20],
                "in call order; the dropped call's result not delivered"
            );
            let fourth = worker.submit(4).unwrap();
            open.send(()).unwrap();
            assert_eq!(fourth.await.unwrap(), 41, "room again once the earlier calls were answered");
        });
    }
}
