//! Child processes the benchmarks measure against, and the broker they start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use naobroker_dcm::cycle::monotonic_ns;
use naobroker_framework::{ClientKeys, ClientSession, CurveKeyPair, Value};
use zeromq::{Socket, SocketRecv, SocketSend};

use crate::stats::Samples;

pub fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let path = exe.with_file_name(name);
    if !path.exists() {
        eprintln!(
            "naobench: {} is missing: build everything first (cargo build --release --workspace)",
            path.display()
        );
        std::process::exit(2);
    }
    path
}

/// A child killed when dropped.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Start `naobroker` (real clock, defaults) on a TCP and an ipc endpoint.
pub fn start_broker() -> (Guard, String, String) {
    start_broker_with(Path::new("/dev/null"))
}

/// Start `naobroker` with the configuration file `config` on a TCP and an ipc endpoint.
pub fn start_broker_with(config: &Path) -> (Guard, String, String) {
    let (tcp, ipc) = loopback_endpoints();
    let broker = spawn_broker(config, &tcp, &ipc);
    wait_until_answering(&tcp, None);
    (broker, tcp, ipc)
}

/// A broker with a `[broker.curve]` listener beside its plain tcp and ipc endpoints, and the
/// keys of the one client that listener admits.
pub struct CurveBroker {
    pub process: Guard,
    pub tcp: String,
    pub ipc: String,
    pub curve: String,
    pub keys: ClientKeys,
}

/// Start `naobroker` as [`start_broker`] does, plus a CURVE listener on loopback with fresh
/// server and client key pairs: what an authenticated remote client costs, on this machine.
pub fn start_curve_broker() -> CurveBroker {
    let (tcp, ipc) = loopback_endpoints();
    let curve = format!("tcp://127.0.0.1:{}", free_port());
    let server = CurveKeyPair::generate();
    let client = CurveKeyPair::generate();
    let scratch = std::env::temp_dir();
    let key_file = scratch.join(format!("naobench-{}-broker.key", std::process::id()));
    let config_file = scratch.join(format!("naobench-{}-broker.toml", std::process::id()));
    std::fs::write(&key_file, server.secret.to_z85()).expect("write the broker's secret key");
    // Z85 has no quote or backslash, so the keys sit in TOML strings as they are.
    let config = format!(
        "[broker.curve]\nlisten = [\"{curve}\"]\nsecret_key_file = \"{}\"\nclients = [\"{}\"]\n",
        key_file.display(),
        client.public.to_z85()
    );
    std::fs::write(&config_file, config).expect("write the broker's configuration");
    let process = spawn_broker(&config_file, &tcp, &ipc);
    let keys = ClientKeys { server: server.public, client };
    wait_until_answering(&tcp, None);
    wait_until_answering(&curve, Some(keys.clone()));
    // The broker read both files at start.
    let _ = std::fs::remove_file(&key_file);
    let _ = std::fs::remove_file(&config_file);
    CurveBroker { process, tcp, ipc, curve, keys }
}

fn loopback_endpoints() -> (String, String) {
    let tcp = format!("tcp://127.0.0.1:{}", free_port());
    let ipc = format!("ipc:///tmp/naobench-{}.sock", std::process::id());
    (tcp, ipc)
}

fn spawn_broker(config: &Path, tcp: &str, ipc: &str) -> Guard {
    let child = Command::new(sibling("naobroker"))
        .arg("--config")
        .arg(config)
        .args(["--listen", tcp, "--listen", ipc])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start naobroker");
    Guard(child)
}

pub fn wait_until_answering(url: &str, keys: Option<ClientKeys>) {
    let started = Instant::now();
    while !actix_rt::System::new()
        .block_on(async { ClientSession::connect_with(url, "probe", keys.clone()).await.is_ok() })
    {
        assert!(started.elapsed() < Duration::from_secs(20), "naobroker did not answer on {url}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Spawn `naobench <args>` and wait for its "ready" line; returns what follows "ready".
pub fn spawn_helper(args: &[&str]) -> (Guard, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn helper");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    let rest = line.trim().strip_prefix("ready").unwrap_or_else(|| panic!("helper {args:?} did not start"));
    (Guard(child), rest.trim().to_owned())
}

/// A loopback listener on a free port, the port said to the bench (`ready PORT`).
fn announced_listener() -> TcpListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("ready {}", listener.local_addr().unwrap().port());
    std::io::stdout().flush().unwrap();
    listener
}

/// The next connection, Nagle off: each small message leaves at once.
fn accept_nodelay(listener: &TcpListener) -> TcpStream {
    let (stream, _) = listener.accept().unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// The floor: a blocking std TCP server answering `reply_bytes` to every `request_bytes`.
pub fn tcp_echo(request_bytes: usize, reply_bytes: usize) {
    let listener = announced_listener();
    let mut stream = accept_nodelay(&listener);
    let mut request = vec![0u8; request_bytes];
    let reply = vec![0x42u8; reply_bytes];
    while stream.read_exact(&mut request).is_ok() {
        if stream.write_all(&reply).is_err() {
            break;
        }
    }
}

/// Raw zmq.rs: a ROUTER that sends every message straight back.
pub fn zmq_echo(url: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut router = zeromq::RouterSocket::new();
        router.bind(url).await.unwrap();
        println!("ready");
        std::io::stdout().flush().unwrap();
        while let Ok(message) = router.recv().await {
            if router.send(message).await.is_err() {
                break;
            }
        }
    });
}

/// Subscribe to `event`, whose values are CLOCK_MONOTONIC send times in ns; print the
/// delivery latencies (µs) as one JSON array after `count` events, or what came when the
/// events stop coming (the run's time plus ten seconds: one timer for the run, not one per
/// event, which would cost each event a timer set and cancelled).
pub fn subscriber(url: &str, event: &str, count: usize) {
    let system = actix_rt::System::new();
    system.block_on(async {
        let session = ClientSession::connect(url, "naobench-subscriber").await.unwrap();
        let mut stream = session.subscribe(event).await.unwrap();
        println!("ready");
        std::io::stdout().flush().unwrap();
        let mut latencies = Vec::with_capacity(count);
        let receive = async {
            while latencies.len() < count {
                let Some(event) = stream.next().await else { break };
                if let Some(sent) = event.value.as_i64() {
                    latencies.push((monotonic_ns() - sent) as f64 / 1000.0);
                }
            }
        };
        let run = Duration::from_secs(10) + Duration::from_millis(10) * count as u32;
        let _ = tokio::time::timeout(run, receive).await;
        println!("{}", serde_json::to_string(&latencies).unwrap());
    });
}

/// The event rows' floor relay: accept `subscribers` connections, then the publisher's;
/// write every 8-byte message of the publisher to each subscriber in turn, then answer the
/// publisher one byte. Blocking std TCP, no allocation per message.
pub fn tcp_relay(subscribers: usize) {
    let listener = announced_listener();
    let mut outputs: Vec<TcpStream> = (0..subscribers).map(|_| accept_nodelay(&listener)).collect();
    let mut publisher = accept_nodelay(&listener);
    let mut message = [0u8; 8];
    while publisher.read_exact(&mut message).is_ok() {
        for output in &mut outputs {
            if output.write_all(&message).is_err() {
                return;
            }
        }
        if publisher.write_all(&[1]).is_err() {
            break;
        }
    }
}

/// A floor subscriber: read `count` 8-byte CLOCK_MONOTONIC send times (ns, little-endian)
/// from the relay at `port` with blocking reads; print the latencies (µs) as one JSON array.
pub fn tcp_subscriber(port: u16, count: usize) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_nodelay(true).unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut latencies = Vec::with_capacity(count);
    let mut message = [0u8; 8];
    while latencies.len() < count && stream.read_exact(&mut message).is_ok() {
        latencies.push((monotonic_ns() - i64::from_le_bytes(message)) as f64 / 1000.0);
    }
    println!("{}", serde_json::to_string(&latencies).unwrap());
}

/// Time `calls` sequential round trips of `call`.
pub async fn time_calls<F, Fut>(calls: usize, mut call: F) -> Samples
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    for _ in 0..calls / 10 {
        call().await;
    }
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call().await;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Samples(samples)
}

/// A line on stderr as a run goes on, so that a long one shows where it is (stdout stays the
/// table or `--json`'s object).
pub fn progress(bench: &str, step: impl std::fmt::Display) {
    eprintln!("naobench {bench}: {step}");
}

/// The process's user and system CPU time so far, in seconds.
pub fn cpu_seconds(pid: u32, ticks_per_second: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the broker's /proc stat");
    // After the command name in parentheses: state is field 3; utime, stime are 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')').expect("a stat line").1.split_whitespace().collect();
    let ticks = |index: usize| fields[index - 3].parse::<f64>().expect("a tick count");
    (ticks(14) + ticks(15)) / ticks_per_second
}

pub fn ticks_per_second() -> f64 {
    let output = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
    String::from_utf8_lossy(&output.stdout).trim().parse().expect("CLK_TCK")
}
