//! Tools of the hostile-client suite (`tests/tests/hostile_*.rs`): a client that speaks the
//! wire protocol itself, the broker's counters, a process's resident memory, and waiting.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use naobroker_protocol::{Envelope, MethodInfo, Value};
use tokio::sync::mpsc;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

use crate::TestBroker;

/// Wait (polling every 20 ms) until `done`, failing the test after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "gave up after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A counter of `ServiceDirectory.stats`.
pub fn counter(broker: &TestBroker, name: &str) -> u64 {
    let stats = broker.call("ServiceDirectory.stats", &[]);
    stats[name].as_u64().unwrap_or_else(|| panic!("ServiceDirectory.stats has no counter {name}"))
}

/// Resident memory of a process in MiB (VmRSS of /proc/PID/status); 0 once it is gone.
pub fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) / 1024
}

/// A client speaking the wire protocol itself over a ZeroMQ DEALER, sending exactly the
/// envelopes a test builds, as a hand-written or hostile client would. A background task
/// heartbeats, answers `true` to calls forwarded to modules it registered, and hands every
/// reply and error to the test.
pub struct RawClient {
    runtime: tokio::runtime::Runtime,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    answers: Mutex<mpsc::UnboundedReceiver<(u64, Result<Value, String>)>>,
    next_id: AtomicU64,
}

impl RawClient {
    /// Connect to the broker at `url` and say hello as client `name`.
    pub fn connect(url: &str, name: &str) -> RawClient {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let mut socket = zeromq::DealerSocket::new();
        runtime.block_on(socket.connect(url)).expect("the broker accepts connections");
        let (outgoing, mut to_send) = mpsc::unbounded_channel::<Vec<u8>>();
        let (answered, answers) = mpsc::unbounded_channel();
        let hello = Envelope::hello(name);
        runtime.spawn(async move {
            let (mut sender, mut receiver) = socket.split();
            let mut heartbeat = tokio::time::interval(Duration::from_millis(500));
            let mut next = Some(hello.encode());
            loop {
                if let Some(frame) = next.take() {
                    if sender.send(ZmqMessage::from(frame)).await.is_err() {
                        return;
                    }
                }
                next = tokio::select! {
                    queued = to_send.recv() => match queued {
                        Some(frame) => Some(frame),
                        None => return,
                    },
                    _ = heartbeat.tick() => Some(Envelope::Heartbeat.encode()),
                    received = receiver.recv() => {
                        let Ok(message) = received else { return };
                        let frame = message.into_vec().into_iter().next().unwrap_or_default();
                        match Envelope::decode(&frame, usize::MAX) {
                            Ok(Envelope::Call { id, .. } | Envelope::Post { id, .. }) => {
                                Some(Envelope::Reply { id, value: true.into() }.encode())
                            }
                            Ok(Envelope::Reply { id, value }) => {
                                let _ = answered.send((id, Ok(value)));
                                None
                            }
                            Ok(Envelope::Error { id, message, .. }) => {
                                let _ = answered.send((id, Err(message)));
                                None
                            }
                            _ => None,
                        }
                    }
                };
            }
        });
        RawClient { runtime, outgoing, answers: Mutex::new(answers), next_id: AtomicU64::new(0) }
    }

    /// Send the envelope `build` makes with a fresh request id; its reply or error message.
    pub fn request(&self, build: impl FnOnce(u64) -> Envelope) -> Result<Value, String> {
        self.request_frame(|id| build(id).encode())
    }

    /// Send the frame `build` makes with a fresh request id, as is.
    pub fn request_frame(&self, build: impl FnOnce(u64) -> Vec<u8>) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.outgoing.send(build(id)).expect("the client task runs");
        let mut answers = self.answers.lock().unwrap();
        let limit = Duration::from_secs(20);
        let started = Instant::now();
        loop {
            let left = limit.saturating_sub(started.elapsed());
            match self.runtime.block_on(async { tokio::time::timeout(left, answers.recv()).await }) {
                Ok(Some((answered, result))) if answered == id => return result,
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the connection closed before request {id} was answered"),
                Err(_) => panic!("request {id} unanswered after {limit:?}"),
            }
        }
    }

    /// Call `module.method(args)`; its reply or error message.
    pub fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Result<Value, String> {
        let (module, method) = (module.to_owned(), method.to_owned());
        self.request(|id| Envelope::Call { id, module, method, args })
    }
}

/// A method with the signature of an ALMemory event callback, for a module to register.
pub fn callback_method(name: &str) -> MethodInfo {
    MethodInfo {
        name: name.into(),
        signature: "(String, Value, Value) -> ()".into(),
        help: String::new(),
        types: None,
    }
}
