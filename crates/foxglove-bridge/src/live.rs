//! The live view: the Foxglove SDK's WebSocket server on a thread of its own behind the viewers'
//! door (src/gate.rs), fed from what the real-time threads already publish (the DCM's real-time
//! slots, the walk's odometry), read on that thread without ever making a real-time thread
//! wait; events and log lines forwarded from the broker's thread as they are raised. Every
//! message is stamped with DCM time, as `naocli record`'s are, so that a live view and a
//! recording of the same run line up.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use foxglove::messages::{log::Level, Log};
use foxglove::websocket::{ChannelView, Client, ServerListener};
use foxglove::{Channel, ChannelId, Context, RawChannel, WebSocketServer, WebSocketServerHandle};
use naobroker_dcm_module::DcmHandle;
use naobroker_framework::{Broker, Value};
use naobroker_memory::Store;
use naobroker_motion::runner::MotionShared;
use naobroker_robot::device::RobotDescription;
use naobroker_rtslots::{FastAccess, CONSISTENT_READ_TRIES};
use naobroker_urdf::ViewerModel;
use serde_json::{json, Value as Json};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::FoxgloveConfig;
use crate::error::FoxgloveError;
use crate::gate::{self, Door, ViewerBounds};
use crate::module::{Counters, FoxgloveModule, SharedKeys};
use crate::robot::{self, CycleKeys, CyclePose, DcmClock, Decimation, RobotChannels, SensedPose};

/// Messages the SDK's server queues per viewer before the door reads them (its default is
/// 1024): the door reads as fast as the server writes, so the SDK drops (uncounted) only when
/// the door's runtime is starved that long (about 12 s of every channel at the cycle rate).
/// The queue grows only while the door is behind (flume's bounded channel holds what is sent).
const SDK_BACKLOG: usize = 8192;

/// The broker's log lines, as `naocli log` gets them.
const LOG_EVENT: &str = "ServiceDirectory/Log";
/// The battery's and sonars' messages: once a second, ten times a second (at NAO's 12 ms cycle,
/// about; they change slower than the joints).
const BATTERY_EVERY_CYCLES: u64 = 100;
const SONAR_EVERY_CYCLES: u64 = 10;
/// The crates whose log lines are the view's own (its server's, the door's, the WebSocket
/// library's): kept off `/log`, where a line about a viewer would go to that viewer.
const VIEW_TARGETS: [&str; 4] = ["foxglove", "naobroker_foxglove", "tungstenite", "tokio_tungstenite"];

/// What the live view reads, all of it already published by the broker's parts.
pub struct LiveSources {
    pub dcm: DcmHandle,
    /// The walk's odometry.
    pub motion: Arc<MotionShared>,
    pub store: Arc<Store>,
    pub broker: Broker,
    /// The robot description (its URDF, frames and foot sensors).
    pub robot_description: RobotDescription,
}

/// The running live view; dropping it stops the server, its thread and its forwarding tasks.
pub struct LiveView {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    forwarders: Vec<actix_rt::task::JoinHandle<()>>,
    counters: Arc<Counters>,
    door: Arc<Door>,
    keys: SharedKeys,
    /// Wakes the view's thread where it waits for a viewer (to stop it).
    wake: mpsc::SyncSender<()>,
}

impl LiveView {
    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The `Foxglove` module: `/memory`'s keys set at run time, the counters.
    pub fn module(&self) -> FoxgloveModule {
        FoxgloveModule {
            keys: Arc::clone(&self.keys),
            counters: Arc::clone(&self.counters),
            door: Arc::clone(&self.door),
        }
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wake.try_send(());
        for forwarder in &self.forwarders {
            forwarder.abort();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Start the live view when `[foxglove] listen` is set (on the broker's actix thread: the
/// events' and logs' forwarders run there).
pub fn start(config: &FoxgloveConfig, sources: LiveSources) -> Result<Option<LiveView>, FoxgloveError> {
    let Some(address) = config.check()? else { return Ok(None) };
    let model = ViewerModel::from_description(&sources.robot_description)?;
    let joints: Vec<String> = sources.dcm.model().joints.iter().map(|joint| joint.name.clone()).collect();
    let keys = CycleKeys::new(joints);
    let names: Vec<&str> = keys.keys.iter().map(String::as_str).collect();
    let values = sources.dcm.fast_access(&names)?;
    let cycle = sources.dcm.fast_access(&["DCM/Cycle", "DCM/Time"])?;
    // The model's frames posed by each cycle's sensed angles, as ALMotion.getTransform(name,
    // FRAME_TORSO, true) has them: the transforms and the joint states of one cycle agree.
    let pose = SensedPose::new(&model, &keys)?;
    let context = Context::new();
    let decimation = Decimation { battery: BATTERY_EVERY_CYCLES, sonar: SONAR_EVERY_CYCLES };
    let channels = Arc::new(RobotChannels::new(&context, &model, keys, decimation));
    let log: Channel<Log> = context.channel_builder(robot::LOG).build();
    let memory = robot::json_channel(&context, robot::MEMORY, "naobroker.Memory");
    let events: Vec<(String, Arc<RawChannel>)> = config
        .events
        .iter()
        .map(|event| {
            let channel =
                robot::json_channel(&context, &format!("{}{event}", robot::EVENTS_PREFIX), "naobroker.Event");
            (event.clone(), channel)
        })
        .collect();
    let keys: SharedKeys = Arc::new(Mutex::new(config.keys.clone()));
    let counters = Arc::new(Counters::default());
    let door = Arc::new(Door::default());
    let stop = Arc::new(AtomicBool::new(false));
    // One wake-up waiting is enough: the thread looks at every channel when it wakes.
    let (wake, woken) = mpsc::sync_channel(1);
    let (log_wanted, mut log_watched) = watch::channel(false);
    let feed = Feed {
        woken,
        _context: Arc::clone(&context),
        channels: Arc::clone(&channels),
        values,
        cycle,
        motion: sources.motion,
        pose,
        memory,
        memory_keys: Arc::clone(&keys),
        memory_period: Duration::from_secs_f64(1.0 / config.keys_rate_hz),
        store: sources.store,
        period: Duration::from_micros(u64::from(sources.dcm.shared().period_us.max(1))),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
    };
    let listener = Latched {
        channels: Arc::clone(&channels),
        wake: wake.clone(),
        log: log.id(),
        log_viewers: AtomicUsize::new(0),
        log_wanted,
    };
    // The SDK's server on a loopback port of its own: viewers come through the door.
    let server = WebSocketServer::new()
        .name("naobroker")
        .context(&context)
        .bind(Ipv4Addr::LOCALHOST.to_string(), 0)
        .message_backlog_size(SDK_BACKLOG)
        .listener(Arc::new(listener));
    let bounds = ViewerBounds {
        max_viewers: config.max_viewers,
        queue_messages: config.viewer_queue,
        patience: Duration::from_secs(config.viewer_patience_s),
    };
    let entrance = Entrance { address, bounds, door: Arc::clone(&door) };
    let (started, bound) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("foxglove".into())
        .spawn(move || serve(server, entrance, feed, started))
        .map_err(|error| FoxgloveError::Server(error.to_string()))?;
    let address = match bound.recv() {
        Ok(Ok(address)) => address,
        Ok(Err(error)) => {
            let _ = thread.join();
            return Err(error);
        }
        Err(_) => return Err(FoxgloveError::Server("its thread ended".into())),
    };
    let mut forwarders: Vec<_> = events
        .into_iter()
        .map(|(event, channel)| {
            let mut stream = sources.broker.subscribe_local(&event);
            let dcm = sources.dcm.clone();
            actix_rt::spawn(async move {
                let mut clock = DcmClock::default();
                while let Some(raised) = stream.next().await {
                    if channel.has_sinks() {
                        let stamp = robot::log_time_ns(clock.advance(dcm.shared().now()));
                        robot::log_json(&channel, stamp, &json!({ "value": json_of(&raised.value) }));
                    }
                }
            })
        })
        .collect();
    let (broker, dcm, shown) = (sources.broker, sources.dcm, Arc::clone(&counters));
    forwarders.push(actix_rt::spawn(async move {
        let mut clock = DcmClock::default();
        loop {
            // Subscribed to the broker's lines only while a viewer subscribes to /log: the
            // broker formats no line for a view nobody reads.
            if log_watched.wait_for(|wanted| *wanted).await.is_err() {
                return;
            }
            let mut lines = broker.subscribe_local(LOG_EVENT);
            loop {
                tokio::select! {
                    line = lines.next() => {
                        let Some(line) = line else { return };
                        if is_own(&line.value) {
                            shown.own_log_lines.fetch_add(1, Ordering::Relaxed);
                        } else if log.has_sinks() {
                            let stamp = robot::log_time_ns(clock.advance(dcm.shared().now()));
                            log.log_with_time(&log_message(&line.value, stamp), stamp);
                        }
                    }
                    changed = log_watched.changed() => {
                        if changed.is_err() || !*log_watched.borrow() {
                            break;
                        }
                    }
                }
            }
        }
    }));
    tracing::info!(%address, "Foxglove live view: open ws://{address} in Foxglove or Lichtblick");
    Ok(Some(LiveView { address, stop, thread: Some(thread), forwarders, counters, door, keys, wake }))
}

/// Where viewers come in: the configured address, its bounds, its counters.
struct Entrance {
    address: SocketAddr,
    bounds: ViewerBounds,
    door: Arc<Door>,
}

/// The thread's life: the door and the server on a runtime of its own, then the feed until
/// stopped.
fn serve(
    server: WebSocketServer,
    entrance: Entrance,
    feed: Feed,
    started: mpsc::Sender<Result<SocketAddr, FoxgloveError>>,
) {
    let failed = |error: &dyn std::fmt::Display| {
        let _ = started.send(Err(FoxgloveError::Server(error.to_string())));
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("foxglove-io")
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return failed(&error),
    };
    let opened = runtime.block_on(async {
        let door = TcpListener::bind(entrance.address).await.map_err(|error| error.to_string())?;
        let handle: WebSocketServerHandle = server.start().await.map_err(|error| error.to_string())?;
        Ok::<_, String>((door, handle))
    });
    let (door, handle) = match opened {
        Ok(opened) => opened,
        Err(error) => return failed(&error),
    };
    // The port the system chose when the configuration said 0.
    let address = door.local_addr().unwrap_or(entrance.address);
    let server_address = SocketAddr::from((Ipv4Addr::LOCALHOST, handle.port()));
    runtime.spawn(gate::admit(door, server_address, entrance.bounds, entrance.door));
    let _ = started.send(Ok(address));
    feed.run();
    let _ = handle.stop();
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// The robot description goes to each viewer as it subscribes (it never changes); a
/// subscription wakes the view's thread if it waits for one; the log lines are followed while
/// a viewer subscribes to `/log`.
struct Latched {
    channels: Arc<RobotChannels>,
    wake: mpsc::SyncSender<()>,
    log: ChannelId,
    log_viewers: AtomicUsize,
    log_wanted: watch::Sender<bool>,
}

impl ServerListener for Latched {
    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        let _ = self.wake.try_send(());
        let description = self.channels.robot_description();
        if channel.id() == description.id() {
            description.log_to_sink(&self.channels.robot_description_message(), client.sink_id());
        }
        if channel.id() == self.log && self.log_viewers.fetch_add(1, Ordering::Relaxed) == 0 {
            self.log_wanted.send_replace(true);
        }
    }

    fn on_unsubscribe(&self, _client: Client, channel: ChannelView) {
        if channel.id() == self.log && self.log_viewers.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.log_wanted.send_replace(false);
        }
    }
}

/// The view's thread's work: each new DCM cycle's messages, and the user's keys at their rate.
struct Feed {
    /// Where the thread waits while no viewer subscribes to anything it writes.
    woken: mpsc::Receiver<()>,
    /// The channels' context: the server and the channels hold it weakly.
    _context: Arc<Context>,
    channels: Arc<RobotChannels>,
    values: FastAccess,
    /// `DCM/Cycle` and `DCM/Time`.
    cycle: FastAccess,
    motion: Arc<MotionShared>,
    /// None: the description has no kinematic model, and `/tf` no transforms.
    pose: SensedPose,
    memory: Arc<RawChannel>,
    memory_keys: SharedKeys,
    memory_period: Duration,
    store: Arc<Store>,
    period: Duration,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Feed {
    fn run(mut self) {
        let mut values = vec![0.0; self.values.len()];
        let mut clock = DcmClock::default();
        // The last cycle written (its number); each is written once.
        let mut last: Option<u64> = None;
        let mut next_memory = Instant::now();
        // Twice a cycle: a new cycle is seen within half a period.
        let nap = self.period / 2;
        let slots = self.store.slots();
        while !self.stop.load(Ordering::Relaxed) {
            if !self.channels.has_sinks() && !self.memory.has_sinks() {
                // Nobody watches: no look at all until a viewer subscribes (or the view stops),
                // so that a server without viewers costs nothing.
                last = None;
                if self.woken.recv().is_err() {
                    return;
                }
                continue;
            }
            std::thread::sleep(nap);
            // The cycle's number, time and values, all of one cycle (a cycle's writes under
            // way at each try: read again at the next look).
            let read = slots.read_consistent(CONSISTENT_READ_TRIES, |_| {
                self.values.read(&mut values);
                (self.cycle.get(0) as u64, self.cycle.get(1) as i32)
            });
            let Some((cycle, dcm_time)) = read else { continue };
            let now = Instant::now();
            if now >= next_memory {
                next_memory = now + self.memory_period;
                self.log_memory(robot::log_time_ns(clock.advance(dcm_time)));
            }
            if !self.channels.has_sinks() || last == Some(cycle) {
                continue;
            }
            if let Some(last_cycle) = last {
                let skipped = cycle.saturating_sub(last_cycle + 1);
                self.counters.cycles_skipped.fetch_add(skipped, Ordering::Relaxed);
            }
            last = Some(cycle);
            let time = robot::log_time_ns(clock.advance(dcm_time));
            let odometry = (self.motion.walk.position(false), self.motion.walk.velocity());
            let keys = self.channels.keys();
            let (in_torso, torso_in_robot) = self.pose.update(keys, &values);
            let pose = CyclePose {
                in_torso,
                torso_in_world: Some(robot::torso_in_world(odometry.0, &torso_in_robot)),
                odometry: Some(odometry),
            };
            self.channels.log_cycle(cycle, time, &values, Some(&pose));
            self.counters.cycles_sent.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn log_memory(&self, stamp: u64) {
        if !self.memory.has_sinks() {
            return;
        }
        let memory_keys = self.memory_keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        if memory_keys.is_empty() {
            return;
        }
        let keys: serde_json::Map<String, Json> = memory_keys
            .iter()
            .map(|key| (key.clone(), self.store.get(key).as_ref().map_or(Json::Null, json_of)))
            .collect();
        robot::log_json(&self.memory, stamp, &Json::Object(keys));
    }
}

fn json_of(value: &Value) -> Json {
    serde_json::to_value(value).unwrap_or_else(|_| Json::String(value.to_string()))
}

/// A `ServiceDirectory/Log` line's field.
fn field<'a>(line: &'a Value, name: &str) -> &'a str {
    let Value::Map(entries) = line else { return "" };
    let value = entries.iter().find(|(key, _)| key.as_str() == Some(name)).map(|(_, value)| value);
    value.and_then(Value::as_str).unwrap_or("")
}

/// Whether a log line is the view's own ([`VIEW_TARGETS`]).
fn is_own(line: &Value) -> bool {
    let target = field(line, "target");
    VIEW_TARGETS.contains(&target.split("::").next().unwrap_or(target))
}

/// A `ServiceDirectory/Log` line as Foxglove's Log, stamped `stamp` (ns of DCM time).
fn log_message(line: &Value, stamp: u64) -> Log {
    let level = match field(line, "level").to_ascii_uppercase().as_str() {
        "ERROR" => Level::Error,
        "WARN" | "WARNING" => Level::Warning,
        "INFO" => Level::Info,
        "DEBUG" | "TRACE" => Level::Debug,
        _ => Level::Unknown,
    };
    Log {
        timestamp: Some(robot::timestamp(stamp)),
        level: level as i32,
        message: field(line, "message").to_owned(),
        name: field(line, "module").to_owned(),
        file: field(line, "target").to_owned(),
        line: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(target: &str) -> Value {
        Value::Map(vec![
            ("level".into(), "INFO".into()),
            ("target".into(), target.into()),
            ("message".into(), "Registered client 127.0.0.1:5000".into()),
        ])
    }

    #[test]
    fn the_views_own_lines_are_told_apart() {
        for own in ["foxglove::websocket::server", "naobroker_foxglove::gate", "tungstenite::protocol"] {
            assert!(is_own(&line(own)), "{own}");
        }
        for other in ["naobroker_motion::walk", "naobroker", "foxglovex"] {
            assert!(!is_own(&line(other)), "{other}");
        }
        let log = log_message(&line("naobroker_motion::walk"), 1_500_000_000);
        assert_eq!((log.level, log.file.as_str()), (Level::Info as i32, "naobroker_motion::walk"));
        assert_eq!(log.timestamp, Some(robot::timestamp(1_500_000_000)));
    }
}
