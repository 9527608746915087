//! The broker, the SDK and the wire protocol, over real ZeroMQ sockets in one process.

use std::time::{Duration, Instant};

use naobroker_framework::{
    remote, Broker, BrokerConfig, CallError, ClientSession, ErrorKind, Limits, Methods, Module, Proxy,
    Session, Value,
};
use naobroker_protocol::{Envelope, MethodType, Role, ValueType};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

struct Calculator {
    name: &'static str,
}

impl Module for Calculator {
    fn name(&self) -> String {
        self.name.into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("add", "Adds two integers.", |_, _, (a, b): (i64, i64)| Ok(a + b))
            .add("echo", "Returns its argument.", |_, _, (v,): (Value,)| Ok(v))
            .add("fail", "Always fails.", |_, _, ()| Err::<(), _>(CallError::new("it failed on purpose")))
            .add_async("sleep", "Answers after ms milliseconds.", |_, _, (ms,): (u64,)| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(ms)
            })
            .add_async("never", "Never answers.", |_, _, ()| async move {
                std::future::pending::<()>().await;
                Ok(())
            })
            .add_async(
                "whoAmI",
                "Calls ALMemory-like module Other.echo through the context.",
                |_, ctx, ()| {
                    let other = ctx.proxy("Other");
                    async move { other.call("echo", ("through the broker",)).await }
                },
            );
    }
}

fn free_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("tcp://127.0.0.1:{port}")
}

async fn broker(url: &str) -> Broker {
    let config = BrokerConfig {
        listen: vec![url.to_owned()],
        client_timeout: Duration::from_millis(2000),
        limits: Limits { max_frame_bytes: 64 * 1024, ..Limits::default() },
        curve: None,
    };
    let broker = Broker::start_with_directory(config).await.unwrap();
    broker.add_module(Calculator { name: "Local" }).unwrap();
    broker
}

async fn raw_client(url: &str) -> zeromq::DealerSocket {
    let mut socket = zeromq::DealerSocket::new();
    socket.connect(url).await.unwrap();
    socket
}

async fn exchange(socket: &mut zeromq::DealerSocket, frame: Vec<u8>) -> Envelope {
    socket.send(ZmqMessage::from(frame)).await.unwrap();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), socket.recv()).await.unwrap().unwrap();
        let envelope = Envelope::decode(message.get(0).unwrap(), usize::MAX).unwrap();
        if !matches!(envelope, Envelope::Welcome { .. } | Envelope::Heartbeat) {
            return envelope;
        }
    }
}

fn error_of(envelope: Envelope) -> (u64, String) {
    match envelope {
        Envelope::Error { id, message, .. } => (id, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[actix_rt::test]
async fn bad_frames_get_named_errors_and_the_broker_keeps_serving() {
    let url = free_url();
    let broker = broker(&url).await;
    let good = Proxy::connect(&url, "Local").await.unwrap();
    let mut raw = raw_client(&url).await;

    let (id, message) = error_of(exchange(&mut raw, b"\xc1\xc1garbage".to_vec()).await);
    assert_eq!(id, 0);
    assert!(message.contains("trailing bytes"), "{message}");

    let truncated =
        Envelope::Call { id: 3, module: "Local".into(), method: "add".into(), args: vec![1.into()] }.encode();
    let (_, message) = error_of(exchange(&mut raw, truncated[..truncated.len() - 2].to_vec()).await);
    assert!(message.contains("not valid MessagePack"), "{message}");

    let not_envelope = naobroker_protocol::Value::Map(vec![("call".into(), 1.into())]);
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, &not_envelope).unwrap();
    let (_, message) = error_of(exchange(&mut raw, bytes).await);
    assert!(message.contains("not an envelope"), "{message}");

    let wrong_field = b"\x95\x02\x07\xa5Local\x03\x90".to_vec();
    let (id, message) = error_of(exchange(&mut raw, wrong_field).await);
    assert_eq!(id, 7, "the error names the request it answers");
    assert!(message.contains("method must be a string"), "{message}");

    // Over max_frame_bytes: refused from the frame's header, the peer disconnected, counted.
    let huge = Envelope::Call {
        id: 9,
        module: "Local".into(),
        method: "echo".into(),
        args: vec![Value::Binary(vec![0; 100_000])],
    };
    raw.send(ZmqMessage::from(huge.encode())).await.unwrap();
    let waited = Instant::now();
    while counter(&broker, "oversized_frames") == 0 {
        assert!(waited.elapsed() < Duration::from_secs(10), "the oversized frame was not refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(good.call_as::<i64, _>("add", (2, 3)).await.unwrap(), 5);
}

#[actix_rt::test]
async fn call_errors_name_module_method_argument_and_type_and_keep_their_kind() {
    let url = free_url();
    let _broker = broker(&url).await;
    let local = Proxy::connect(&url, "Local").await.unwrap();
    let error = local.call("add", (1, "two")).await.unwrap_err();
    assert_eq!(error, CallError::bad_argument("Local.add: argument 2 must be i64, got string"));
    let error = local.call("add", (1,)).await.unwrap_err();
    assert_eq!(error, CallError::bad_argument("Local.add: missing argument 2 (i64)"));
    let error = local.call("add", (1, 2, 3)).await.unwrap_err();
    assert_eq!(error, CallError::bad_argument("Local.add: takes 2 arguments, got 3"));
    let error = local.call("nope", ()).await.unwrap_err();
    assert_eq!(error, CallError::not_found("Local.nope: no method named nope"));
    let error = local.call("fail", ()).await.unwrap_err();
    assert_eq!(error, CallError::new("Local.fail: it failed on purpose"));
    assert_eq!(error.kind, ErrorKind::Failed);
    let missing = Proxy::new(local.session().clone(), "Missing");
    assert_eq!(missing.call("ping", ()).await.unwrap_err(), CallError::not_found("no module named Missing"));
    let error = local.call("exit", ()).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Refused, "{error}");
}

#[actix_rt::test]
async fn base_methods_and_posted_tasks() {
    let url = free_url();
    let _broker = broker(&url).await;
    let local = Proxy::connect(&url, "Local").await.unwrap();
    assert_eq!(local.call("ping", ()).await.unwrap(), Value::from(true));
    let methods: Vec<String> = local.call_as("getMethodList", ()).await.unwrap();
    assert!(methods.contains(&"add".to_owned()) && methods.contains(&"wait".to_owned()));
    let help = local.call("getMethodHelp", ("add",)).await.unwrap();
    assert_eq!(
        help,
        Value::Array(vec!["add".into(), "(i64, i64) -> i64".into(), "Adds two integers.".into()])
    );
    assert!(local.call("exit", ()).await.unwrap_err().message.contains("cannot exit"));

    let task = local.post("sleep", (200,)).await.unwrap();
    assert_eq!(local.call("isRunning", (task,)).await.unwrap(), Value::from(true));
    assert_eq!(
        local.call("wait", (task, 50)).await.unwrap(),
        Value::from(false),
        "still running after 50 ms"
    );
    assert_eq!(local.call("wait", (task, 0)).await.unwrap(), Value::from(true));
    assert_eq!(local.call("isRunning", (task,)).await.unwrap(), Value::from(false));

    let endless = local.post("never", ()).await.unwrap();
    assert_eq!(local.call("stop", (endless,)).await.unwrap(), Value::from(true));
    assert_eq!(local.call("isRunning", (endless,)).await.unwrap(), Value::from(false));
    assert!(local.post("add", (1, "x")).await.unwrap_err().message.contains("argument 2"));
}

#[actix_rt::test]
async fn the_same_module_serves_from_another_connection_and_names_are_unique() {
    let url = free_url();
    let broker = broker(&url).await;
    let _remote = remote::serve(&url, Calculator { name: "Other" }).await.unwrap();
    let _local_caller = remote::serve(&url, Calculator { name: "Caller" }).await.unwrap();

    // From in-process code through the broker, and from a client connection.
    assert_eq!(
        broker.call("Other", "add", vec![20.into(), 22.into()], false).await.unwrap(),
        Value::from(42)
    );
    let other = Proxy::connect(&url, "Other").await.unwrap();
    assert_eq!(other.call_as::<i64, _>("add", (1, 2)).await.unwrap(), 3);
    // The kind crosses both hops: from the serving client to the broker, and on to the caller.
    let error = other.call("add", (1,)).await.unwrap_err();
    assert_eq!(error, CallError::bad_argument("Other.add: missing argument 2 (i64)"));
    // Its methods' typed signatures cross the wire in Register, as the Rust types give them.
    let methods = broker.module_methods("Other").unwrap();
    let add = methods.iter().find(|method| method.name == "add").unwrap();
    let typed = MethodType { params: vec![ValueType::Int64, ValueType::Int64], returns: ValueType::Int64 };
    assert_eq!((add.types.as_ref(), add.signature.as_str()), (Some(&typed), "(i64, i64) -> i64"));
    // A remote module calling another module through its context.
    let caller = Proxy::connect(&url, "Caller").await.unwrap();
    assert_eq!(caller.call("whoAmI", ()).await.unwrap(), Value::from("through the broker"));
    // Posted tasks live with the module, wherever it runs.
    let task = other.post("sleep", (50,)).await.unwrap();
    assert_eq!(other.call("wait", (task, 0)).await.unwrap(), Value::from(true));

    let duplicate = remote::serve(&url, Calculator { name: "Other" }).await;
    assert_eq!(duplicate.err().unwrap().message, "a module named Other is already registered");
    let builtin_clash = remote::serve(&url, Calculator { name: "Local" }).await;
    assert!(builtin_clash.is_err());
}

#[actix_rt::test]
async fn replies_reach_the_right_client_among_many() {
    let url = free_url();
    let _broker = broker(&url).await;
    let _remote = remote::serve(&url, Calculator { name: "Other" }).await.unwrap();
    let mut calls = Vec::new();
    for client in 0..8i64 {
        let proxy = Proxy::connect(&url, if client % 2 == 0 { "Local" } else { "Other" }).await.unwrap();
        calls.push(async move {
            let answers = futures::future::join_all(
                (0..50i64).map(|i| proxy.call_as::<i64, _>("add", (client * 1000, i))),
            )
            .await;
            for (i, answer) in answers.into_iter().enumerate() {
                assert_eq!(answer.unwrap(), client * 1000 + i as i64);
            }
        });
    }
    futures::future::join_all(calls).await;
}

/// A call under way when the broker falls silent ends with the caller's own kind, connection
/// lost, not as a failure some module answered: a caller can tell "try again" from "no".
#[actix_rt::test]
async fn a_call_under_way_when_the_broker_falls_silent_is_connection_lost() {
    let url = free_url();
    let mut silent_broker = zeromq::RouterSocket::new();
    silent_broker.bind(&url).await.unwrap();
    let welcome_and_fall_silent = async {
        let hello = silent_broker.recv().await.unwrap();
        let welcome = Envelope::Welcome { version: naobroker_protocol::PROTOCOL_VERSION, heartbeat_ms: 1000 };
        let mut answer = ZmqMessage::from(hello.get(0).unwrap().clone());
        answer.push_back(welcome.encode().into());
        silent_broker.send(answer).await.unwrap();
        let call = silent_broker.recv().await.unwrap();
        Envelope::decode(call.get(1).unwrap(), usize::MAX).unwrap()
    };
    let call_and_wait = async {
        let session = ClientSession::connect(&url, "caller").await.unwrap();
        let error = session.call("Local", "whoami", vec![], false).await.unwrap_err();
        session.close();
        error
    };
    let (error, call) = tokio::join!(call_and_wait, welcome_and_fall_silent);
    assert!(matches!(call, Envelope::Call { ref method, .. } if method == "whoami"), "{call:?}");
    assert_eq!(error.kind, ErrorKind::ConnectionLost, "{error}");
    assert!(error.message.contains("connection to the broker lost"), "{error}");
}

#[actix_rt::test]
async fn calls_wait_while_the_callee_lives_and_fail_when_it_dies() {
    let url = free_url();
    let broker = broker(&url).await;
    let remote_session = remote::serve(&url, Calculator { name: "Other" }).await.unwrap();
    let other = Proxy::connect(&url, "Other").await.unwrap();

    // A caller's own limit, per session and per call.
    let impatient = ClientSession::connect(&url, "impatient").await.unwrap();
    impatient.set_call_timeout(Some(Duration::from_millis(100)));
    let error = impatient.call("Other", "never", vec![], false).await.unwrap_err();
    assert_eq!(error.message, "Other.never timed out after 100 ms");
    assert_eq!(error.kind, ErrorKind::TimedOut);
    let within = Some(Duration::from_millis(150));
    let error = other_session(&other).call_within("Other", "never", vec![], false, within).await.unwrap_err();
    assert_eq!(error.message, "Other.never timed out after 150 ms");
    // Without a limit, a call longer than any old timeout still answers.
    assert_eq!(other.call_as::<u64, _>("sleep", (2_500,)).await.unwrap(), 2_500);

    // The caller leaves mid-call: the broker and other clients carry on.
    let leaving = ClientSession::connect(&url, "leaving").await.unwrap();
    let pending = actix_rt::spawn({
        let leaving = leaving.clone();
        async move { leaving.call("Other", "sleep", vec![300.into()], false).await }
    });
    pending.abort();
    drop(leaving);
    assert_eq!(other.call_as::<i64, _>("add", (2, 2)).await.unwrap(), 4);

    // The module's process "dies": its session stops sending heartbeats.
    let in_flight = actix_rt::spawn({
        let other = other.clone();
        async move { other.call("sleep", (10_000,)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    remote_session.close();
    let gone_at = Instant::now();
    while broker.module_exists("Other") {
        assert!(gone_at.elapsed() < Duration::from_secs(3), "not unregistered within 3 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let error = in_flight.await.unwrap().unwrap_err();
    assert_eq!(error.message, "Other.sleep: module Other disconnected");
}

fn counter(broker: &Broker, name: &str) -> u64 {
    let stats = broker.stats();
    let entry = stats.as_map().unwrap().iter().find(|(key, _)| key.as_str() == Some(name));
    entry.and_then(|(_, value)| value.as_u64()).unwrap_or_else(|| panic!("no counter {name}"))
}

fn other_session(proxy: &Proxy) -> ClientSession {
    match proxy.session() {
        Session::Client(client) => client.clone(),
        Session::Broker(_) => panic!("a connected proxy has a client session"),
    }
}

#[actix_rt::test]
async fn events_reach_subscribers_in_and_out_of_process() {
    let url = free_url();
    let broker = broker(&url).await;
    let client = ClientSession::connect(&url, "listener").await.unwrap();
    let mut remote_stream = client.subscribe("Test/Event").await.unwrap();
    let mut local_stream = Session::Broker(broker.clone()).subscribe("Test/Event").await.unwrap();
    assert!(broker.has_subscribers("Test/Event"));
    for i in 0..3 {
        broker.publish("Test/Event", &Value::from(i));
    }
    for i in 0..3 {
        assert_eq!(remote_stream.next().await.unwrap().value, Value::from(i));
        assert_eq!(local_stream.next().await.unwrap().value, Value::from(i));
    }
}

/// A subscription's last stream takes the decoded event itself, the others a copy: each
/// gets every event whole, and a stream dropped between them is forgotten.
#[actix_rt::test]
async fn every_stream_of_a_subscription_gets_each_event_whole() {
    let url = free_url();
    let broker = broker(&url).await;
    let client = ClientSession::connect(&url, "listener").await.unwrap();
    let mut first = client.subscribe("Test/Shared").await.unwrap();
    let dropped = client.subscribe("Test/Shared").await.unwrap();
    let mut last = client.subscribe("Test/Shared").await.unwrap();
    drop(dropped);
    for i in 0..3 {
        broker.publish("Test/Shared", &Value::from(format!("value {i}")));
    }
    for i in 0..3 {
        for stream in [&mut first, &mut last] {
            let next = tokio::time::timeout(Duration::from_secs(5), stream.next());
            let event = next.await.expect("each stream gets each event").unwrap();
            let expected = ("Test/Shared", Value::from(format!("value {i}")), 0);
            assert_eq!((event.name.as_str(), event.value, event.lost), expected);
        }
    }
}

#[actix_rt::test]
async fn a_client_that_stops_reading_loses_only_its_own_events() {
    let url = free_url();
    let broker = broker(&url).await;
    // A raw subscriber that never reads nor acknowledges.
    let mut stuck = raw_client(&url).await;
    let subscribe = Envelope::Subscribe { id: 1, event: "Flood".into() };
    assert!(matches!(exchange(&mut stuck, subscribe.encode()).await, Envelope::Reply { .. }));
    let reader = ClientSession::connect(&url, "reader").await.unwrap();
    let mut stream = reader.subscribe("Flood").await.unwrap();
    let total = 5_000;
    let mut received = 0;
    for i in 0..total {
        broker.publish("Flood", &Value::from(i));
        if i % 100 == 99 {
            // Let the sockets move, as a real broker does between messages.
            while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(20), stream.next()).await {
                received += 1;
            }
        }
    }
    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), stream.next()).await {
        received += 1;
    }
    assert_eq!(received, total, "the reading client got every event");
    let dropped = counter(&broker, "events_dropped");
    assert_eq!(
        dropped,
        total as u64 - u64::from(naobroker_protocol::EVENT_WINDOW),
        "the stuck client lost everything past its window"
    );
}

/// The raw elements of the next frame that is not a heartbeat.
async fn next_frame(socket: &mut zeromq::DealerSocket) -> Vec<Value> {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), socket.recv()).await.unwrap().unwrap();
        let value = rmpv::decode::read_value(&mut &message.get(0).unwrap()[..]).unwrap();
        let Value::Array(items) = value else { panic!("not an array: {value}") };
        if items[0] != Value::from(Envelope::HEARTBEAT) {
            return items;
        }
    }
}

#[actix_rt::test]
async fn errors_carry_their_kind_only_to_clients_that_said_version_2() {
    let url = free_url();
    let _broker = broker(&url).await;
    let call = Envelope::Call { id: 7, module: "Nobody".into(), method: "m".into(), args: vec![] };
    for (hello, kind_sent) in [(Some(1), false), (Some(2), true), (None, false)] {
        let mut raw = raw_client(&url).await;
        if let Some(version) = hello {
            let hello = Envelope::Hello { version, client: "raw".into(), session: vec![], role: Role::Main };
            raw.send(ZmqMessage::from(hello.encode())).await.unwrap();
            let welcome = next_frame(&mut raw).await;
            assert_eq!(welcome[..2], [Value::from(Envelope::WELCOME), Value::from(version)]);
        }
        raw.send(ZmqMessage::from(call.encode())).await.unwrap();
        let mut error = next_frame(&mut raw).await;
        if error[0] == Value::from(Envelope::WELCOME) {
            assert_eq!(error[1], Value::from(1), "a client that never said hello is welcomed in version 1");
            error = next_frame(&mut raw).await;
        }
        assert_eq!(error[..2], [Value::from(Envelope::ERROR), Value::from(7)], "hello {hello:?}");
        let expected = if kind_sent { 4 } else { 3 };
        assert_eq!(error.len(), expected, "hello {hello:?}: {error:?}");
        if kind_sent {
            assert_eq!(error[3], Value::from(ErrorKind::NotFound.code()));
        }
    }
}
