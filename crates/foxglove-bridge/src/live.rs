//! The live view: the Foxglove SDK's WebSocket server on a thread of its own, fed from what the
//! real-time threads already publish (the DCM's real-time slots, ALMotion's Cartesian data and
//! walk odometry), read on that thread without ever making a real-time thread wait; events and
//! log lines forwarded from the broker's thread as they are raised.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use foxglove::messages::{log::Level, Log};
use foxglove::websocket::{ChannelView, Client, ServerListener};
use foxglove::{Channel, Context, RawChannel, WebSocketServer, WebSocketServerHandle};
use naobroker_dcm_module::DcmHandle;
use naobroker_framework::{Broker, Value};
use naobroker_kinematics::{Model, Transform};
use naobroker_memory::Store;
use naobroker_motion::cartesian::{Kinematics, Source};
use naobroker_motion::runner::MotionShared;
use naobroker_robot::device::RobotDescription;
use naobroker_rtslots::FastAccess;
use naobroker_urdf::ViewerModel;
use serde_json::{json, Value as Json};

use crate::config::FoxgloveConfig;
use crate::error::FoxgloveError;
use crate::module::{Counters, FoxgloveModule, SharedKeys};
use crate::robot::{self, CycleKeys, CyclePose, Decimation, RobotChannels};

/// The broker's log lines, as `naocli log` gets them.
const LOG_EVENT: &str = "ServiceDirectory/Log";
/// The battery's and sonars' messages: once a second, ten times a second (at NAO's 12 ms cycle,
/// about; they change slower than the joints).
const BATTERY_EVERY_CYCLES: u64 = 100;
const SONAR_EVERY_CYCLES: u64 = 10;

/// What the live view reads, all of it already published by the broker's parts.
pub struct LiveSources {
    pub dcm: DcmHandle,
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
        FoxgloveModule { keys: Arc::clone(&self.keys), counters: Arc::clone(&self.counters) }
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
    let cycle = sources.dcm.fast_access(&["DCM/Cycle"])?;
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
    let frames = frame_slots(&model);
    let keys: SharedKeys = Arc::new(Mutex::new(config.keys.clone()));
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    // One wake-up waiting is enough: the thread looks at every channel when it wakes.
    let (wake, woken) = mpsc::sync_channel(1);
    let feed = Feed {
        woken,
        _context: Arc::clone(&context),
        channels: Arc::clone(&channels),
        values,
        cycle,
        motion: sources.motion,
        frames,
        memory,
        memory_keys: Arc::clone(&keys),
        memory_period: Duration::from_secs_f64(1.0 / config.keys_rate_hz),
        store: sources.store,
        period: Duration::from_micros(u64::from(sources.dcm.shared().period_us.max(1))),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
    };
    let server = WebSocketServer::new()
        .name("naobroker")
        .context(&context)
        .bind(address.ip().to_string(), address.port())
        .message_backlog_size(config.viewer_queue)
        .listener(Arc::new(Latched { channels: Arc::clone(&channels), wake: wake.clone() }));
    let (started, bound) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("foxglove".into())
        .spawn(move || serve(server, address, feed, started))
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
            actix_rt::spawn(async move {
                while let Some(raised) = stream.next().await {
                    if channel.has_sinks() {
                        robot::log_json(&channel, unix_ns(), &json!({ "value": json_of(&raised.value) }));
                    }
                }
            })
        })
        .collect();
    let mut lines = sources.broker.subscribe_local(LOG_EVENT);
    forwarders.push(actix_rt::spawn(async move {
        while let Some(line) = lines.next().await {
            if log.has_sinks() {
                log.log(&log_message(&line.value));
            }
        }
    }));
    tracing::info!(%address, "Foxglove live view: open ws://{address} in Foxglove or Lichtblick");
    Ok(Some(LiveView { address, stop, thread: Some(thread), forwarders, counters, keys, wake }))
}

/// The thread's life: the server on a runtime of its own, then the feed until stopped.
fn serve(
    server: WebSocketServer,
    address: SocketAddr,
    feed: Feed,
    started: mpsc::Sender<Result<SocketAddr, FoxgloveError>>,
) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("foxglove-io")
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = started.send(Err(FoxgloveError::Server(error.to_string())));
            return;
        }
    };
    let handle: WebSocketServerHandle = match runtime.block_on(server.start()) {
        Ok(handle) => handle,
        Err(error) => {
            let _ = started.send(Err(FoxgloveError::Server(error.to_string())));
            return;
        }
    };
    // The port the system chose when the configuration said 0.
    let _ = started.send(Ok(SocketAddr::new(address.ip(), handle.port())));
    feed.run();
    let _ = handle.stop();
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// The robot description goes to each viewer as it subscribes (it never changes), and a
/// subscription wakes the view's thread if it waits for one.
struct Latched {
    channels: Arc<RobotChannels>,
    wake: mpsc::SyncSender<()>,
}

impl ServerListener for Latched {
    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        let _ = self.wake.try_send(());
        let description = self.channels.robot_description();
        if channel.id() == description.id() {
            description.log_to_sink(&self.channels.robot_description_message(), client.sink_id());
        }
    }
}

/// Where each of the published frames is among ALMotion's: the model's frames (Torso, the
/// joints, the effectors) by name.
fn frame_slots(model: &ViewerModel) -> Vec<Option<usize>> {
    let Ok(kinematic_model) = Model::from_description(&model.kinematics) else { return Vec::new() };
    let kinematics = Kinematics::new(kinematic_model, |_| None);
    let description = &model.kinematics;
    let names = std::iter::once(robot::ROOT_FRAME)
        .chain(description.joints.iter().map(|joint| joint.name.as_str()))
        .chain(description.effectors.iter().map(|effector| effector.name.as_str()));
    names.map(|name| kinematics.frame_slot(name)).collect()
}

/// The view's thread's work: each new DCM cycle's messages, and the user's keys at their rate.
struct Feed {
    /// Where the thread waits while no viewer subscribes to anything it writes.
    woken: mpsc::Receiver<()>,
    /// The channels' context: the server and the channels hold it weakly.
    _context: Arc<Context>,
    channels: Arc<RobotChannels>,
    values: FastAccess,
    cycle: FastAccess,
    motion: Arc<MotionShared>,
    frames: Vec<Option<usize>>,
    memory: Arc<RawChannel>,
    memory_keys: SharedKeys,
    memory_period: Duration,
    store: Arc<Store>,
    period: Duration,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Feed {
    fn run(self) {
        let mut values = vec![0.0; self.values.len()];
        // The last cycle written: its number, the slots' stamp (a DCM cycle ends by stamping
        // them) and ALMotion's cycles (its frames come a little after the DCM's cycle).
        let mut last: Option<(u64, u64, u64)> = None;
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
            let now = Instant::now();
            if now >= next_memory {
                next_memory = now + self.memory_period;
                self.log_memory();
            }
            if !self.channels.has_sinks() {
                continue;
            }
            let stamp = slots.updated_us();
            let cycle = self.cycle.get(0) as u64;
            let motion_cycles = self.motion.cycles();
            if last == Some((cycle, stamp, motion_cycles)) {
                continue;
            }
            self.values.read(&mut values);
            if slots.updated_us() != stamp {
                // A cycle ended while the values were read: read them again at the next look.
                continue;
            }
            if let Some((last_cycle, _, _)) = last {
                let skipped = cycle.saturating_sub(last_cycle + 1);
                self.counters.cycles_skipped.fetch_add(skipped, Ordering::Relaxed);
            }
            last = Some((cycle, stamp, motion_cycles));
            let stamp = unix_ns();
            let pose = self.pose();
            let pose = pose.as_ref().map(|pose| CyclePose {
                in_torso: &pose.in_torso,
                torso_in_world: Some(pose.torso_in_world),
                odometry: Some(pose.odometry),
            });
            self.channels.log_cycle(cycle, stamp, &values, pose.as_ref());
            self.counters.cycles_sent.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// ALMotion's last published frames (sensed angles), FRAME_TORSO in the world, and the
    /// walk's odometry; none without a kinematic model.
    fn pose(&self) -> Option<LivePose> {
        let published = self.motion.cartesian.as_ref()?;
        let (in_torso, torso_in_robot) = published.read(|snapshot| {
            let frames: Vec<Transform> = self
                .frames
                .iter()
                .map(|slot| slot.map_or(Transform::IDENTITY, |slot| snapshot.transform(Source::Sensed, slot)))
                .collect();
            (frames, snapshot.torso_in_robot(Source::Sensed))
        });
        let walk = &self.motion.walk;
        let place = walk.position(false);
        let torso_in_world = robot::torso_in_world(place, &torso_in_robot);
        Some(LivePose { in_torso, torso_in_world, odometry: (place, walk.velocity()) })
    }

    fn log_memory(&self) {
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
        robot::log_json(&self.memory, unix_ns(), &Json::Object(keys));
    }
}

/// What ALMotion last published of the robot's pose.
struct LivePose {
    in_torso: Vec<Transform>,
    torso_in_world: Transform,
    odometry: ([f64; 3], [f64; 3]),
}

fn unix_ns() -> u64 {
    naobroker_rtslots::timestamp_now() * 1000
}

fn json_of(value: &Value) -> Json {
    serde_json::to_value(value).unwrap_or_else(|_| Json::String(value.to_string()))
}

/// A `ServiceDirectory/Log` line as Foxglove's Log.
fn log_message(line: &Value) -> Log {
    let field = |name: &str| match line {
        Value::Map(entries) => entries
            .iter()
            .find(|(key, _)| key.as_str() == Some(name))
            .and_then(|(_, value)| value.as_str())
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    };
    let level = match field("level").to_ascii_uppercase().as_str() {
        "ERROR" => Level::Error,
        "WARN" | "WARNING" => Level::Warning,
        "INFO" => Level::Info,
        "DEBUG" | "TRACE" => Level::Debug,
        _ => Level::Unknown,
    };
    let target = field("target");
    Log {
        timestamp: Some(robot::timestamp(unix_ns())),
        level: level as i32,
        message: field("message"),
        name: field("module"),
        file: target,
        line: 0,
    }
}
