//! Tools of the qi wire's tests on raw sockets: a broker with the qi listener on a thread of
//! its own (with an `Echo` and an `ALMemory` module), and a client that writes qi messages
//! byte by byte.
// Each test file uses a part of these tools.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use naobroker_framework::{Broker, CallError, Limits, Methods, Module, ModuleContext, Value};
use naobroker_qi::{
    Address, CapabilityMap, Flags, Header, Message, MessageType, MetaObject, ObjectRef, Options, Reader,
    HEADER_SIZE, OBJECT_MAIN,
};
use naobroker_qi_wire::{listen, QiConfig};
use tokio::sync::mpsc;

/// How long a test waits for anything before it fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

struct Echo;

impl Module for Echo {
    fn name(&self) -> String {
        "Echo".into()
    }

    fn methods(methods: &mut Methods<Self>) {
        methods.add("echo", "Returns its argument.", echo);
    }
}

fn echo(_: &mut Echo, _: &ModuleContext, (value,): (Value,)) -> Result<Value, CallError> {
    Ok(value)
}

/// A module named ALMemory, for its `subscriber` (events come from the test itself).
struct Memory;

impl Module for Memory {
    fn name(&self) -> String {
        naobroker_framework::MEMORY_MODULE.into()
    }

    fn methods(_: &mut Methods<Self>) {}
}

/// The service ids of the broker's modules: the listener numbers those it finds at start
/// from 2, by name.
pub const MEMORY_SERVICE: u32 = 2;
pub const ECHO_SERVICE: u32 = 3;

/// What a test asks of the broker's thread.
enum Command {
    Stats(std::sync::mpsc::Sender<Value>),
    Publish(String, Value),
}

/// A broker serving `Echo` to qi clients, on its own thread.
pub struct QiBroker {
    pub address: SocketAddr,
    commands: Option<mpsc::UnboundedSender<Command>>,
    thread: Option<JoinHandle<()>>,
}

impl QiBroker {
    pub fn start(limits: Limits) -> QiBroker {
        QiBroker::start_with_timeout(limits, Duration::from_secs(2))
    }

    /// A broker that drops clients of naobroker's own wire silent for `client_timeout`.
    pub fn start_with_timeout(limits: Limits, client_timeout: Duration) -> QiBroker {
        let (ready, started) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let broker = Broker::new(limits, client_timeout);
                broker.add_module(Echo).unwrap();
                broker.add_module(Memory).unwrap();
                let config = QiConfig { listen: vec!["tcp://127.0.0.1:0".into()] };
                let addresses = listen(&broker.port(), &config).await.unwrap();
                let (commands, mut asked) = mpsc::unbounded_channel::<Command>();
                ready.send((addresses[0], commands)).unwrap();
                while let Some(command) = asked.recv().await {
                    match command {
                        Command::Stats(answer) => drop(answer.send(broker.stats())),
                        Command::Publish(name, value) => broker.publish(&name, &value),
                    }
                }
            });
        });
        let (address, commands) = started.recv_timeout(PATIENCE).expect("the broker starts");
        QiBroker { address, commands: Some(commands), thread: Some(thread) }
    }

    fn stats(&self) -> Value {
        let (answer, stats) = std::sync::mpsc::channel();
        self.commands.as_ref().unwrap().send(Command::Stats(answer)).unwrap();
        stats.recv_timeout(PATIENCE).unwrap()
    }

    /// A counter of the broker's stats (the wire's among them).
    pub fn counter(&self, name: &str) -> u64 {
        let stats = self.stats();
        stats[name].as_u64().unwrap_or_else(|| panic!("no counter {name} in {stats}"))
    }

    /// How many clients the broker knows.
    pub fn clients(&self) -> usize {
        self.stats()["clients"].as_array().map_or(0, Vec::len)
    }

    /// Raise event `name` in the broker, as ALMemory would.
    pub fn publish(&self, name: &str, value: Value) {
        self.commands.as_ref().unwrap().send(Command::Publish(name.to_owned(), value)).unwrap();
    }
}

impl Drop for QiBroker {
    fn drop(&mut self) {
        self.commands.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Wait (polling every 20 ms) until `done`, failing the test after [`PATIENCE`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A qi client writing exactly the bytes a test gives it.
pub struct RawClient {
    stream: TcpStream,
    next_id: u32,
}

impl RawClient {
    pub fn connect(broker: &QiBroker) -> RawClient {
        let stream = TcpStream::connect(broker.address).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        RawClient { stream, next_id: 1 }
    }

    /// A client past `authenticate`, sharing libqi 4's capabilities.
    pub fn authenticated(broker: &QiBroker) -> RawClient {
        let mut client = RawClient::connect(broker);
        let mut capabilities = CapabilityMap::default();
        capabilities.set_bool(CapabilityMap::OBJECT_PTR_UID, true);
        let payload = capabilities.to_bytes(&Options::default()).unwrap();
        let reply = client.call(Address::new(0, 0, 8), payload);
        assert_eq!(reply.kind, MessageType::Reply);
        client
    }

    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Send a message; answers its id.
    pub fn send(&mut self, kind: MessageType, address: Address, payload: Vec<u8>) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&Message::new(id, kind, address, payload).encode().unwrap()).unwrap();
        id
    }

    /// Send a call whose arguments come as one dynamic value (`DynamicPayload`); answers its id.
    pub fn send_dynamic(&mut self, address: Address, payload: Vec<u8>) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = Message::new(id, MessageType::Call, address, payload);
        message.flags = Flags::DYNAMIC_PAYLOAD;
        self.write(&message.encode().unwrap()).unwrap();
        id
    }

    /// The next message; `None` once the broker closed the connection.
    pub fn read(&mut self) -> Option<Message> {
        let mut header = [0u8; HEADER_SIZE];
        match self.stream.read_exact(&mut header) {
            Ok(()) => {}
            Err(error) if matches!(error.kind(), ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset) => {
                return None
            }
            Err(error) => panic!("reading from the broker: {error}"),
        }
        let header = Header::decode(&header, u32::MAX).expect("the broker writes good headers");
        let mut payload = vec![0u8; header.size as usize];
        self.stream.read_exact(&mut payload).ok()?;
        Some(Message::from_parts(header, payload))
    }

    /// Call `address` and wait for its answer (a reply, an error or a cancel), skipping others.
    pub fn call(&mut self, address: Address, payload: Vec<u8>) -> Message {
        let id = self.send(MessageType::Call, address, payload);
        loop {
            let message = self.read().expect("an answer before the connection closed");
            if message.id == id && message.kind != MessageType::Event {
                return message;
            }
        }
    }

    /// The uid of `Echo.echo` in the MetaObject the broker serves.
    pub fn echo_uid(&mut self) -> u32 {
        let reply = self.call(Address::new(ECHO_SERVICE, OBJECT_MAIN, 2), 0u32.to_le_bytes().to_vec());
        MetaObject::decode(&reply.payload).unwrap().method("echo").expect("Echo.echo is served").uid
    }

    /// A subscriber object for `event` with a link to its signal: the broker streams the
    /// event to this client from then on. Answers the object's id.
    pub fn subscribe(&mut self, event: &str) -> u32 {
        let object = self.subscriber(event).expect("a subscriber object");
        let linked = self.link(object, 7);
        assert_eq!(linked.kind, MessageType::Reply, "{linked:?}");
        object
    }

    /// `ALMemory.subscriber(event)`: the object's id, or the error's text.
    pub fn subscriber(&mut self, event: &str) -> Result<u32, String> {
        let methods = self.call(Address::new(MEMORY_SERVICE, OBJECT_MAIN, 2), 0u32.to_le_bytes().to_vec());
        let subscriber = MetaObject::decode(&methods.payload).unwrap().method("subscriber").unwrap().uid;
        let mut name = (event.len() as u32).to_le_bytes().to_vec();
        name.extend_from_slice(event.as_bytes());
        let reply = self.call(Address::new(MEMORY_SERVICE, OBJECT_MAIN, subscriber), name);
        if reply.kind == MessageType::Error {
            return Err(naobroker_qi::error_message(&reply.payload).unwrap());
        }
        let options = Options { object_uid: true, ..Options::default() };
        let object = ObjectRef::decode_from(&mut Reader::new(&reply.payload), &options).unwrap();
        assert_eq!(object.service, MEMORY_SERVICE);
        Ok(object.object)
    }

    /// `registerEvent` of the client's `link` to subscriber `object`'s signal: the answer.
    pub fn link(&mut self, object: u32, link: u64) -> Message {
        let mut args = MEMORY_SERVICE.to_le_bytes().to_vec();
        args.extend_from_slice(&100u32.to_le_bytes());
        args.extend_from_slice(&link.to_le_bytes());
        self.call(Address::new(MEMORY_SERVICE, object, 0), args)
    }

    /// Read until the broker closes the connection (what it sent before is skipped); the
    /// test fails when it stays open past [`PATIENCE`].
    pub fn wait_closed(&mut self) {
        while self.read().is_some() {}
    }
}

/// `text` as a dynamic string (`m` holding `s`).
pub fn dynamic_string(text: &str) -> Vec<u8> {
    let mut bytes = vec![1, 0, 0, 0, b's'];
    bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes
}
