//! A test-only module process for the hostile-client suite (`tests/tests/hostile_outages.rs`).
//!
//! `probe-module [URL [NAME [EVENT]]]` (defaults: `$NAOBROKER_URL`, `Probe`, `Test/Ping`)
//! serves module NAME with a method that blocks its thread, and listens to EVENT both as a
//! NAOqi-style ALMemory callback and as an SDK event stream, recording what each received:
//! the tests see liveness during long work and subscriptions come back after a restart.
#![deny(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use naobroker_framework::{CallbackSubscription, Methods, Module, ModuleContext, Value};

struct Probe {
    name: String,
    event: String,
    /// Values received by the `onEvent` callback, in order.
    callbacks: Vec<Value>,
    /// Values received on the event stream, in order.
    streamed: Rc<RefCell<Vec<Value>>>,
}

impl Module for Probe {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn description(&self) -> String {
        "Test probe: a blocking method, and one event received as a callback and as a stream.".into()
    }

    fn methods(methods: &mut Methods<Self>) {
        methods
            .add(
                "sleep",
                "Blocks the module's thread (the one that reads its connection) for ms; answers ms.",
                |_, _, (ms,): (u64,)| {
                    std::thread::sleep(Duration::from_millis(ms));
                    Ok(ms)
                },
            )
            .add(
                "onEvent",
                "The ALMemory callback: records the value.",
                |this, _, (_event, value, _message): (String, Value, Value)| {
                    this.callbacks.push(value);
                    Ok(())
                },
            )
            .add("callbacks", "Values the callback received.", |this, _, ()| Ok(this.callbacks.clone()))
            .add("streamed", "Values the event stream received.", |this, _, ()| {
                Ok(this.streamed.borrow().clone())
            });
    }

    fn started(&mut self, context: &ModuleContext) {
        let session = context.session().clone();
        let (name, event, streamed) = (self.name.clone(), self.event.clone(), Rc::clone(&self.streamed));
        tokio::task::spawn_local(async move {
            // Registration may still be under way: the broker refuses a callback for a
            // module it does not know yet.
            // Its own message: the SDK subscribes it again after a reconnect.
            let subscription = CallbackSubscription {
                event: event.clone(),
                module: name,
                method: "onEvent".into(),
                micro_message: None,
            };
            while session.subscribe_callback(subscription.clone()).await.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let mut stream = match session.subscribe(&event).await {
                Ok(stream) => stream,
                Err(error) => {
                    eprintln!("probe-module: cannot subscribe to {event}: {error}");
                    std::process::exit(1);
                }
            };
            while let Some(received) = stream.next().await {
                streamed.borrow_mut().push(received.value);
            }
        });
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(2);
    let name = args.next().unwrap_or_else(|| "Probe".into());
    let event = args.next().unwrap_or_else(|| "Test/Ping".into());
    let probe = Probe { name, event, callbacks: Vec::new(), streamed: Rc::default() };
    naobroker_framework::remote::main("probe-module", probe)
}
