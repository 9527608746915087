//! A wire of its own on the broker core, with no ZeroMQ: connections over in-process
//! channels route calls both ways, get events, and free their modules when they close.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use naobroker_framework::wire::{Connection, ConnectionRole, Outbound, Request, WirePort, Write};
use naobroker_framework::{Broker, CallError, ClientId, Limits, Methods, Module, Value};
use naobroker_protocol::{Envelope, MethodInfo, HEARTBEAT_INTERVAL_MS, PROTOCOL_VERSION};
use tokio::sync::mpsc;

struct Adder;

impl Module for Adder {
    fn name(&self) -> String {
        "Adder".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("add", "Adds two integers.", add);
    }
}

fn add(_: &mut Adder, _: &naobroker_framework::ModuleContext, (a, b): (i64, i64)) -> Result<i64, CallError> {
    Ok(a + b)
}

/// One connection of the test wire: the broker's messages as envelopes on a channel.
struct ChannelConnection {
    written: RefCell<Option<mpsc::UnboundedSender<Bytes>>>,
}

impl Connection for ChannelConnection {
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes> {
        let envelope = match message {
            Outbound::Welcome { .. } => {
                Envelope::Welcome { version: PROTOCOL_VERSION, heartbeat_ms: HEARTBEAT_INTERVAL_MS }
            }
            Outbound::Heartbeat => return None,
            Outbound::Reply { id, value } => Envelope::Reply { id, value },
            Outbound::Error { id, kind, message } => Envelope::Error { id, message, kind },
            Outbound::Call { id, module, method, args, .. } => {
                Envelope::Call { id, module: module.into(), method: method.into(), args }
            }
            Outbound::Event { name, value, lost } => {
                Envelope::Event { name: name.into(), value: value.clone(), lost }
            }
            Outbound::Callback { .. } => return None,
        };
        Some(Bytes::from(envelope.encode()))
    }

    fn shared_encoding(&self) -> Option<&'static str> {
        None
    }

    fn write(&self, payload: Bytes) -> Write {
        if let Some(written) = self.written.borrow().as_ref() {
            let _ = written.send(payload);
        }
        Write::Done
    }

    fn close(&self) {
        self.written.borrow_mut().take();
    }
}

/// A client of the test wire.
struct Peer {
    id: ClientId,
    received: mpsc::UnboundedReceiver<Bytes>,
}

impl Peer {
    fn open(broker: &WirePort, name: &str, tag: u8) -> Peer {
        let (written, received) = mpsc::unbounded_channel();
        let id = ClientId::new(Bytes::from(vec![b'T', tag]));
        let connection = ChannelConnection { written: RefCell::new(Some(written)) };
        assert!(!broker.arrived(&id, move || Rc::new(connection)), "a new connection");
        let hello = Request::Hello {
            version: PROTOCOL_VERSION,
            client: name.into(),
            session: Vec::new(),
            role: ConnectionRole::Main,
        };
        broker.request(id.clone(), hello);
        Peer { id, received }
    }

    fn ask(&self, broker: &WirePort, request: Request) {
        assert!(broker.arrived(&self.id, || unreachable!("known")));
        broker.request(self.id.clone(), request);
    }

    async fn next(&mut self) -> Envelope {
        let payload = tokio::time::timeout(Duration::from_secs(10), self.received.recv())
            .await
            .expect("a message within 10 s")
            .expect("the connection is open");
        Envelope::decode(&payload, usize::MAX).expect("an envelope")
    }
}

fn call<'a>(id: u64, module: &'a str, method: &'a str, args: Vec<Value>) -> Request<'a> {
    Request::Call { id, module, method, args, post: false }
}

#[actix_rt::test]
async fn a_wire_without_zeromq_routes_calls_both_ways_and_events() {
    let broker = Broker::new(Limits::default(), Duration::from_secs(600));
    broker.add_module(Adder).unwrap();
    let port = broker.port();
    let mut caller = Peer::open(&port, "caller", 1);
    let mut server = Peer::open(&port, "server", 2);
    assert!(matches!(caller.next().await, Envelope::Welcome { .. }));
    assert!(matches!(server.next().await, Envelope::Welcome { .. }));

    caller.ask(&port, call(1, "Adder", "add", vec![2.into(), 3.into()]));
    assert_eq!(caller.next().await, Envelope::Reply { id: 1, value: 5.into() });

    let echo = MethodInfo {
        name: "echo".into(),
        signature: "(Value) -> Value".into(),
        help: String::new(),
        types: None,
    };
    server.ask(&port, Request::Register { id: 1, module: "Remote".into(), methods: vec![echo] });
    assert_eq!(server.next().await, Envelope::Reply { id: 1, value: true.into() });
    caller.ask(&port, call(2, "Remote", "echo", vec!["hi".into()]));
    let Envelope::Call { id: forwarded, module, method, args } = server.next().await else {
        panic!("a call")
    };
    assert_eq!((module.as_str(), method.as_str(), args), ("Remote", "echo", vec![Value::from("hi")]));
    server.ask(&port, Request::Answer { id: forwarded, result: Ok("hi back".into()) });
    assert_eq!(caller.next().await, Envelope::Reply { id: 2, value: "hi back".into() });

    caller.ask(&port, Request::Subscribe { id: 3, event: "Test/Event".into() });
    assert_eq!(caller.next().await, Envelope::Reply { id: 3, value: true.into() });
    broker.publish("Test/Event", &Value::from(7));
    let event = Envelope::Event { name: "Test/Event".into(), value: 7.into(), lost: 0 };
    assert_eq!(caller.next().await, event);

    caller.ask(&port, call(4, "Remote", "echo", vec!["again".into()]));
    assert!(matches!(server.next().await, Envelope::Call { .. }));
    port.closed(&server.id);
    let Envelope::Error { id: 4, message, .. } = caller.next().await else { panic!("the call fails") };
    assert_eq!(message, "Remote.echo: module Remote disconnected");
    assert!(!broker.module_exists("Remote"));
}
