//! A client that leaves on purpose frees its module names at once: `shutdown` says goodbye
//! and a remote module's `exit` unregisters before the connection goes (else the broker holds
//! the names until it notices the silence); what a session sends after its goodbye does not
//! bring it back.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use naobroker_framework::{blocking, remote, Broker, BrokerConfig, ClientSession, Methods, Module, Value};
use naobroker_protocol::{Envelope, Role, PROTOCOL_VERSION};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

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

/// The broker's connections named `client`, main and liveness (from `stats`).
fn connections_named(broker: &Broker, client: &str) -> usize {
    let stats = broker.stats();
    let clients = stats.as_map().unwrap().iter().find(|(key, _)| key.as_str() == Some("clients")).unwrap();
    let named = |entry: &&Value| {
        let fields = entry.as_map().unwrap();
        fields.iter().any(|(key, value)| key.as_str() == Some("name") && value.as_str() == Some(client))
    };
    clients.1.as_array().unwrap().iter().filter(named).count()
}

async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_rt::test]
async fn shutdown_forgets_both_connections_of_the_session_before_it_returns() {
    let url = free_url();
    // Silence cannot explain a client gone within the test.
    let config = BrokerConfig { client_timeout: Duration::from_secs(60), ..config(&url) };
    let broker = Broker::start_with_directory(config).await.unwrap();
    let leaving = ClientSession::connect(&url, "leaving").await.unwrap();
    wait_until("the liveness connection never arrived", || connections_named(&broker, "leaving") == 2).await;
    leaving.shutdown().await;
    assert_eq!(connections_named(&broker, "leaving"), 0);
}

#[actix_rt::test]
async fn a_liveness_connection_arriving_after_its_sessions_goodbye_is_forgotten_at_once() {
    let url = free_url();
    let config = BrokerConfig { client_timeout: Duration::from_secs(60), ..config(&url) };
    let broker = Broker::start_with_directory(config).await.unwrap();
    let session = b"late-liveness-session".to_vec();
    let hello = |client: &str, role| Envelope::Hello {
        version: PROTOCOL_VERSION,
        client: client.to_owned(),
        session: session.clone(),
        role,
    };
    let mut main = zeromq::DealerSocket::new();
    main.connect(&url).await.unwrap();
    main.send(ZmqMessage::from(hello("late", Role::Main).encode())).await.unwrap();
    main.send(ZmqMessage::from(Envelope::Goodbye { id: 1 }.encode())).await.unwrap();
    let mut answers = Vec::new();
    while !answers.contains(&Envelope::Reply { id: 1, value: true.into() }) {
        let frame = main.recv().await.unwrap().into_vec().pop().unwrap();
        answers.push(Envelope::decode(&frame, 1 << 20).unwrap());
    }
    assert_eq!(connections_named(&broker, "late"), 0);
    // The main connection's heartbeat already on its way, and the liveness connection that
    // connected a moment late: neither opens the session again.
    main.send(ZmqMessage::from(Envelope::Heartbeat.encode())).await.unwrap();
    let mut liveness = zeromq::DealerSocket::new();
    liveness.connect(&url).await.unwrap();
    liveness.send(ZmqMessage::from(hello("late", Role::Liveness).encode())).await.unwrap();
    liveness.send(ZmqMessage::from(Envelope::Heartbeat.encode())).await.unwrap();
    // A third connection's call, answered after the broker read the liveness hello (one
    // socket reads its peers in turn; the call comes last from a peer connected last).
    let probe = ClientSession::connect(&url, "probe").await.unwrap();
    wait_until("a connection of the departed session is open", || {
        connections_named(&broker, "late") == 0 && connections_named(&broker, "probe") >= 1
    })
    .await;
    probe.call("ServiceDirectory", "modules", vec![], false).await.unwrap();
    assert_eq!(connections_named(&broker, "late"), 0);
    assert_eq!(connections_named(&broker, ""), 0, "a nameless connection was opened");
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
