//! Starting and stopping the adapter: the Zenoh session on threads of its own, the
//! broker's events and calls passed to and from the broker's thread through bounded queues.

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use naobroker_framework::wire::{Connection, ConnectionRole, Request};
use naobroker_framework::Broker;
use naobroker_memory::Store;
use naobroker_motion::runner::MotionShared;
use naobroker_ros2::Twist;
use zenoh::bytes::Encoding;
use zenoh::pubsub::Publisher;
use zenoh::query::Queryable;
use zenoh::{Session, Wait};

use crate::bounds::{MAX_CALLS_IN_FLIGHT, MAX_CALL_PAYLOAD_BYTES, QUERY_QUEUE};
use crate::caller::{self, Answering, PeersConnection};
use crate::config::ZenohConfig;
use crate::error::ZenohError;
use crate::events;
use crate::exports::Exports;
use crate::feed::{Feed, RealTime};
use crate::keys::KeySpace;
use crate::module::{Counters, ZenohModule};
use crate::queries::{self, Answerer, Asked, CallRequest};
use crate::ros2::Ros2View;
use crate::session::zenoh_config;
use crate::watch::{ModuleSet, ModuleWatch};

/// What the adapter reads and calls.
pub struct ZenohSources {
    pub store: Arc<Store>,
    pub broker: Broker,
    /// The DCM's cycle period.
    pub period: Duration,
    /// ALMotion's shared state: the walk's odometry, for the ROS 2 view.
    pub motion: Arc<MotionShared>,
}

/// The running adapter; dropping it closes the session (the robot's tokens go with it) and
/// ends its threads and tasks.
pub struct ZenohBridge {
    robot: String,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    /// The session's thread, and whether the session opened.
    session: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
    threads: Vec<JoinHandle<()>>,
    tasks: Vec<actix_rt::task::JoinHandle<()>>,
}

impl ZenohBridge {
    /// The robot's name, in every key.
    pub fn robot(&self) -> &str {
        &self.robot
    }

    /// The `Zenoh` module: the robot's name and the counters.
    pub fn module(&self) -> ZenohModule {
        ZenohModule { robot: self.robot.clone(), counters: Arc::clone(&self.counters) }
    }
}

impl Drop for ZenohBridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in &self.tasks {
            task.abort();
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // A session still opening (a router never reached) is left to the process's end:
        // Zenoh's open cannot be interrupted.
        if let Some((thread, opened)) = self.session.take() {
            if opened.load(Ordering::Acquire) || thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

/// What the session thread declared for the others.
struct Declared {
    feed: Feed,
    real_time: RealTime,
    presence: zenoh::liveliness::LivelinessToken,
    _queryables: [Queryable<()>; 2],
}

/// Start the adapter (on the broker's actix thread: its forwarders run there).
pub fn start(config: &ZenohConfig, sources: ZenohSources) -> Result<ZenohBridge, ZenohError> {
    let checked = config.check()?;
    let exports = Exports { calls: checked.calls.clone(), moves: checked.moves.clone() };
    let zenoh = zenoh_config(config, &checked, &exports)?;
    let keys = KeySpace::new(&checked.robot);
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let modules = Arc::new(ModuleSet::default());
    for name in sources.broker.module_names() {
        modules.set(&name, true);
    }
    sources
        .broker
        .port()
        .attach_wire(Rc::new(ModuleWatch { modules: Arc::clone(&modules), counters: Arc::clone(&counters) }));
    let (event_queue, items) = events::event_queue(Arc::clone(&counters));
    let (asked_sender, asked) = mpsc::sync_channel::<Asked>(QUERY_QUEUE);
    let (call_sender, mut call_requests) = tokio::sync::mpsc::channel::<CallRequest>(MAX_CALLS_IN_FLIGHT);
    // A place for each call under way's query and for its answer: the broker's thread never
    // waits to hand an answer over.
    let (answer_sender, answers) = mpsc::sync_channel::<Answering>(2 * MAX_CALLS_IN_FLIGHT);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let every = config.rate_hz.map(|rate| Duration::from_secs_f64(1.0 / rate));
    let nap = (sources.period / 2).max(Duration::from_millis(1));
    let events = config.events.clone();
    // One Twist waiting for the broker's thread at most: a newer one than that is dropped.
    let (twists, mut twists_taken) = tokio::sync::mpsc::channel::<Twist>(1);
    let ros2_config = config.ros2.clone();
    let motion = Arc::clone(&sources.motion);
    // The session opens on its own thread, never holding up the broker's: in client mode it
    // waits there until the router is reached.
    let session_opened = Arc::new(AtomicBool::new(false));
    let session_thread = {
        let (keys, store, counters, stop) =
            (keys.clone(), Arc::clone(&sources.store), Arc::clone(&counters), Arc::clone(&stop));
        let opened_flag = Arc::clone(&session_opened);
        std::thread::Builder::new()
            .name("zenoh".into())
            .spawn(move || {
                let opened =
                    open(zenoh, &keys, &events, asked_sender, &counters).and_then(|(session, parts)| {
                        let real_time = RealTime::declare(&session, &keys, &store, every)
                            .map_err(|error| ZenohError::Start(error.to_string()))?;
                        let (events, presence, queryables) = parts;
                        let ros2 = match &ros2_config {
                            Some(ros2) => {
                                let counted = Arc::clone(&counters);
                                let take = move |twist| {
                                    if twists.try_send(twist).is_err() {
                                        Counters::bump(&counted.cmd_vel_dropped);
                                    }
                                };
                                let counters = Arc::clone(&counters);
                                Some(Ros2View::declare(&session, ros2, &store, motion, take, counters)?)
                            }
                            None => None,
                        };
                        let feed =
                            Feed { session, keys, store, items, events, modules, counters, stop, nap, ros2 };
                        Ok(Declared { feed, real_time, presence, _queryables: queryables })
                    });
                match opened {
                    Ok(declared) => {
                        opened_flag.store(true, Ordering::Release);
                        let Declared { feed, real_time, presence, _queryables } = declared;
                        feed.run(real_time, presence);
                    }
                    Err(error) => tracing::error!(%error, "Zenoh: the robot is not on the network"),
                }
            })
            .map_err(|error| ZenohError::Start(error.to_string()))?
    };
    let answerer = Answerer {
        keys: keys.clone(),
        store: Arc::clone(&sources.store),
        exports,
        calls: call_sender,
        answers: answer_sender.clone(),
        limits: sources.broker.limits().clone(),
        next_id: 0,
        in_flight: Arc::clone(&in_flight),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
    };
    let spawn = |name: &str, work: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(work)
            .map_err(|e| ZenohError::Start(e.to_string()))
    };
    let query_thread = spawn("zenoh-queries", Box::new(move || answerer.run(asked)))?;
    let (answer_stop, answer_counters) = (Arc::clone(&stop), Arc::clone(&counters));
    let answer_thread = spawn(
        "zenoh-answers",
        Box::new(move || queries::answer(answers, in_flight, answer_counters, answer_stop)),
    )?;
    let mut tasks: Vec<_> = config
        .events
        .iter()
        .enumerate()
        .map(|(index, event)| {
            let mut stream = sources.broker.subscribe_local(event);
            let event_queue = event_queue.clone();
            actix_rt::spawn(async move {
                while let Some(raised) = stream.next().await {
                    event_queue.push(index, raised.value);
                }
            })
        })
        .collect();
    let (port, peers) = (sources.broker.port(), caller::peers());
    let connection: Rc<dyn Connection> =
        Rc::new(PeersConnection { answers: answer_sender, counters: Arc::clone(&counters) });
    port.arrived(&peers, || Rc::clone(&connection));
    // The newest version; a peer's error answer carries the message only (see caller.rs).
    let version = naobroker_protocol::PROTOCOL_VERSION;
    let hello = Request::Hello {
        version,
        client: "Zenoh peers".into(),
        session: Vec::new(),
        role: ConnectionRole::Main,
    };
    port.request(peers.clone(), hello);
    tasks.push(actix_rt::spawn(async move {
        while let Some(CallRequest { id, module, method, args }) = call_requests.recv().await {
            // Opened again if the broker dropped it for breaking a bound.
            port.arrived(&peers, || Rc::clone(&connection));
            port.request(
                peers.clone(),
                Request::Call { id, module: &module, method: &method, args, post: false },
            );
        }
    }));
    let (broker, counters_moved) = (sources.broker.clone(), Arc::clone(&counters));
    tasks.push(actix_rt::spawn(async move {
        while let Some(twist) = twists_taken.recv().await {
            let args = vec![twist.linear.x.into(), twist.linear.y.into(), twist.angular.z.into()];
            if broker.call("ALMotion", "move", args, false).await.is_ok() {
                Counters::bump(&counters_moved.cmd_vel_moves);
            }
        }
    }));
    let robot = keys.robot();
    tracing::info!(robot, "Zenoh: the robot is on the network as naobroker/{robot}/**");
    Ok(ZenohBridge {
        robot: checked.robot,
        counters,
        stop,
        session: Some((session_thread, session_opened)),
        threads: vec![query_thread, answer_thread],
        tasks,
    })
}

type Opened = (Vec<Publisher<'static>>, zenoh::liveliness::LivelinessToken, [Queryable<()>; 2]);

/// Open the session; declare the events' publishers, the robot's token and the queryables,
/// whose callbacks (on Zenoh's threads) only queue a query or answer it "busy".
fn open(
    zenoh: zenoh::Config,
    keys: &KeySpace,
    events: &[String],
    asked: mpsc::SyncSender<Asked>,
    counters: &Arc<Counters>,
) -> Result<(Session, Opened), ZenohError> {
    let failed = |error: zenoh::Error| ZenohError::Start(error.to_string());
    let session = zenoh::open(zenoh).wait().map_err(failed)?;
    let events = events
        .iter()
        .map(|event| session.declare_publisher(keys.event(event)).encoding(Encoding::APPLICATION_JSON).wait())
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    let presence = session.liveliness().declare_token(keys.presence()).wait().map_err(failed)?;
    let queue = |kind: fn(zenoh::query::Query) -> Asked| {
        let (asked, counters) = (asked.clone(), Arc::clone(counters));
        move |query: zenoh::query::Query| {
            // Refused before it is queued: the queue holds small queries only.
            let payload = query.payload().map_or(0, |payload| payload.len());
            if payload > MAX_CALL_PAYLOAD_BYTES {
                let message = format!("the payload takes {payload} bytes, at most {MAX_CALL_PAYLOAD_BYTES}");
                return queries::refuse(&query, &counters, &message);
            }
            match asked.try_send(kind(query)) {
                Ok(()) => {}
                Err(mpsc::TrySendError::Full(Asked::Memory(query) | Asked::Call(query)))
                | Err(mpsc::TrySendError::Disconnected(Asked::Memory(query) | Asked::Call(query))) => {
                    queries::busy(&query, &counters, &format!("{QUERY_QUEUE} queries waiting"))
                }
            }
        }
    };
    let memory = session
        .declare_queryable(keys.memory_space())
        .callback(queue(Asked::Memory))
        .wait()
        .map_err(failed)?;
    let calls =
        session.declare_queryable(keys.call_space()).callback(queue(Asked::Call)).wait().map_err(failed)?;
    Ok((session, (events, presence, [memory, calls])))
}
