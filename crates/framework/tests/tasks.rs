//! Posted tasks: `post` answers an id at once; `wait`, `isRunning` and `stop` follow the
//! task, and a failed task's error, with its kind, reaches whoever waits on it, even after it ended.

use naobroker_framework::{Broker, BrokerConfig, CallError, ErrorKind, Methods, Module, Value};
use tokio::sync::watch;

/// Methods whose tasks end when the test says so, never on a timer.
struct Worker {
    release: watch::Sender<bool>,
}

impl Worker {
    fn released(&self) -> impl std::future::Future<Output = ()> {
        let mut released = self.release.subscribe();
        async move {
            let _ = released.wait_for(|released| *released).await;
        }
    }
}

impl Module for Worker {
    fn name(&self) -> String {
        "Worker".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add_async("failLater", "Fails once released.", |this, _, (why,): (String,)| {
            let released = this.released();
            async move {
                released.await;
                Err::<(), _>(CallError::refused(why))
            }
        })
        .add_async("succeedLater", "Answers once released.", |this, _, ()| {
            let released = this.released();
            async move {
                released.await;
                Ok(7)
            }
        })
        .add("release", "Lets every task end, now and later.", |this, _, ()| {
            this.release.send_replace(true);
            Ok(())
        })
        .add("quick", "Answers at once.", |_, _, ()| Ok(1));
    }
}

async fn broker() -> Broker {
    let config = BrokerConfig { listen: Vec::new(), ..BrokerConfig::default() };
    let broker = Broker::start(config).await.unwrap();
    broker.add_module(Worker { release: watch::Sender::new(false) }).unwrap();
    broker
}

async fn post(broker: &Broker, method: &str, args: Vec<Value>) -> u64 {
    let id = broker.call("Worker", method, args, true).await.unwrap();
    id.as_u64().unwrap()
}

async fn call(broker: &Broker, method: &str, args: Vec<Value>) -> Result<Value, CallError> {
    broker.call("Worker", method, args, false).await
}

#[actix_rt::test]
async fn a_failed_task_reports_its_error_to_every_wait_even_after_it_ended() {
    let broker = broker().await;
    let id = post(&broker, "failLater", vec!["the arm is blocked".into()]).await;
    assert_eq!(id, 1, "task ids start at 1");
    assert_eq!(call(&broker, "isRunning", vec![id.into()]).await.unwrap(), Value::from(true));
    let still_running = call(&broker, "wait", vec![id.into(), 1.into()]).await.unwrap();
    assert_eq!(still_running, Value::from(false), "wait with a limit answers false while it runs");

    let waiting = actix_rt::spawn({
        let broker = broker.clone();
        async move { call(&broker, "wait", vec![id.into(), 0.into()]).await }
    });
    call(&broker, "release", vec![]).await.unwrap();
    let expected = format!("task {id} (Worker.failLater) failed: the arm is blocked");
    let error = waiting.await.unwrap().unwrap_err();
    assert!(error.message.contains(&expected), "{}", error.message);
    assert_eq!(error.kind, ErrorKind::Refused, "the task's kind");

    assert_eq!(call(&broker, "isRunning", vec![id.into()]).await.unwrap(), Value::from(false));
    let later = call(&broker, "wait", vec![id.into(), 0.into()]).await.unwrap_err();
    assert!(later.message.contains(&expected), "asked after the end: {}", later.message);
    assert_eq!(later.kind, ErrorKind::Refused, "the task's kind, asked after the end");
}

#[actix_rt::test]
async fn stopped_and_successful_tasks_wait_true_and_unknown_ids_are_named() {
    let broker = broker().await;
    let quick = post(&broker, "quick", vec![]).await;
    assert_eq!(call(&broker, "wait", vec![quick.into(), 0.into()]).await.unwrap(), Value::from(true));

    let stopped = post(&broker, "failLater", vec!["never seen".into()]).await;
    assert_eq!(call(&broker, "stop", vec![stopped.into()]).await.unwrap(), Value::from(true));
    assert_eq!(call(&broker, "stop", vec![stopped.into()]).await.unwrap(), Value::from(false));
    assert_eq!(call(&broker, "wait", vec![stopped.into(), 0.into()]).await.unwrap(), Value::from(true));

    let succeeds = post(&broker, "succeedLater", vec![]).await;
    call(&broker, "release", vec![]).await.unwrap();
    assert_eq!(call(&broker, "wait", vec![succeeds.into(), 0.into()]).await.unwrap(), Value::from(true));

    let unknown = call(&broker, "wait", vec![99.into(), 0.into()]).await.unwrap_err();
    assert!(unknown.message.contains("no task 99 was posted"), "{}", unknown.message);
}

#[actix_rt::test]
async fn a_module_runs_at_most_64_posted_tasks_at_once() {
    let broker = broker().await;
    let mut ids = Vec::new();
    for _ in 0..64 {
        ids.push(post(&broker, "succeedLater", vec![]).await);
    }
    let refused = broker.call("Worker", "succeedLater", vec![], true).await.unwrap_err();
    assert!(
        refused.message.contains("64 posted tasks are already running in Worker: wait for one to end"),
        "{}",
        refused.message
    );
    assert_eq!(call(&broker, "stop", vec![ids[0].into()]).await.unwrap(), Value::from(true));
    let room_again = post(&broker, "succeedLater", vec![]).await;
    assert_eq!(room_again, 65, "the refused post took no id");
}
