//! A client that leaves on purpose frees its module names at once: `shutdown`, and a remote
//! module's `exit`, unregister before the connection goes (else the broker holds the names
//! until it notices the silence).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use naobroker_framework::{blocking, remote, Broker, BrokerConfig, ClientSession, Methods, Module, Value};

struct Named(&'static str);

impl Module for Named {
    fn name(&self) -> String {
        self.0.into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("add", "Adds two integers.", |_, _, (a, b): (i64, i64)| Ok(a + b));
    }
}

fn free_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("tcp://127.0.0.1:{port}")
}

fn config(url: &str) -> BrokerConfig {
    BrokerConfig { listen: vec![url.to_owned()], ..BrokerConfig::default() }
}

#[actix_rt::test]
async fn shutdown_frees_the_module_names_before_it_returns() {
    let url = free_url();
    let broker = Broker::start_with_directory(config(&url)).await.unwrap();
    let first = ClientSession::connect(&url, "first").await.unwrap();
    remote::attach(&first, Named("Leaving")).await.unwrap();
    remote::attach(&first, Named("AlsoLeaving")).await.unwrap();
    assert!(broker.module_exists("Leaving") && broker.module_exists("AlsoLeaving"));
    first.shutdown().await;
    assert!(!broker.module_exists("Leaving") && !broker.module_exists("AlsoLeaving"));
    let second = ClientSession::connect(&url, "second").await.unwrap();
    remote::attach(&second, Named("Leaving")).await.unwrap();
    let answer = second.call("Leaving", "add", vec![2.into(), 3.into()], false).await.unwrap();
    assert_eq!(answer, Value::from(5));
}

/// The module's process outlives its `exit` here, its liveness thread still beating: only
/// an unregister can make the broker drop the module.
#[test]
fn exit_answers_then_frees_the_name() {
    let url = free_url();
    let (broker_ready, ready) = mpsc::channel();
    let broker_url = url.clone();
    std::thread::spawn(move || {
        let system = actix_rt::System::new();
        system.block_on(async move {
            let _broker = Broker::start_with_directory(config(&broker_url)).await.unwrap();
            broker_ready.send(()).unwrap();
            std::future::pending::<()>().await;
        });
    });
    ready.recv().unwrap();

    let (exit_answer, answered) = mpsc::channel();
    let (test_done, done) = mpsc::channel::<()>();
    let module_url = url.clone();
    let module_process = std::thread::spawn(move || {
        let system = actix_rt::System::new();
        let session = system.block_on(async move {
            let session = ClientSession::connect(&module_url, "leaver").await.unwrap();
            remote::attach(&session, Named("Leaver")).await.unwrap();
            exit_answer.send(session.call("Leaver", "exit", vec![], false).await).unwrap();
            session
        });
        system.run().unwrap(); // until exit stops it
        let _ = done.recv();
        drop(session);
    });

    assert_eq!(answered.recv().unwrap().unwrap(), Value::from(true));
    let directory = blocking::Proxy::connect(&url, "ServiceDirectory").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let modules: Vec<String> = directory.call_as("modules", ()).unwrap();
        if !modules.iter().any(|name| name == "Leaver") {
            break;
        }
        assert!(Instant::now() < deadline, "Leaver still registered after its exit: {modules:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    test_done.send(()).unwrap();
    module_process.join().unwrap();
}
