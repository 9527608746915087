//! The Foxglove live view against a client that speaks as Foxglove does (WebSocket
//! subprotocol `foxglove.sdk.v1`, JSON advertisements, binary message frames): joint states
//! and link transforms checked against ALMemory and ALMotion.getTransform and stamped with the
//! cycle's DCM time, a viewer that never reads losing messages (counted) while another
//! receives every cycle once, a viewer beyond `max_viewers` refused with the reason, viewers
//! coming and going without the broker growing.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use foxglove::messages::{FrameTransforms, JointStates, Log, Timestamp};
use futures::{SinkExt, StreamExt};
use naobroker_e2e::cartesian::assert_close;
use naobroker_e2e::free_port;
use naobroker_e2e::robot::Robot;
use naobroker_framework::Value;
use naobroker_lola::names::JOINTS;
use prost::Message as _;
use serde_json::{json, Value as Json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const FRAME_TORSO: i64 = 0;
/// How long a message the test waits for may take (the view's thread looks twice a cycle).
const PATIENCE: Duration = Duration::from_secs(20);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A viewer: its socket, its address as the broker sees it, and the channels the server
/// advertised (topic → id).
struct Viewer {
    socket: Socket,
    address: SocketAddr,
    channels: HashMap<String, u64>,
}

/// A WebSocket connection to the view as Foxglove opens it (subprotocol `foxglove.sdk.v1`).
async fn open(port: u16) -> Socket {
    let mut request = format!("ws://127.0.0.1:{port}").into_client_request().unwrap();
    request.headers_mut().insert("Sec-WebSocket-Protocol", "foxglove.sdk.v1".parse().unwrap());
    let (socket, response) = tokio_tungstenite::connect_async(request).await.expect("the view accepts");
    assert_eq!(response.headers()["sec-websocket-protocol"], "foxglove.sdk.v1");
    socket
}

impl Viewer {
    /// Connect with Foxglove's subprotocol and take the server's advertisements.
    async fn connect(port: u16) -> Viewer {
        let socket = open(port).await;
        let MaybeTlsStream::Plain(stream) = socket.get_ref() else { panic!("a plain TCP stream") };
        let address = stream.local_addr().unwrap();
        let mut viewer = Viewer { socket, address, channels: HashMap::new() };
        while !viewer.channels.contains_key("/tf") {
            let Message::Text(text) = viewer.next().await else { continue };
            let message: Json = serde_json::from_str(&text).unwrap();
            if message["op"] == "advertise" {
                for channel in message["channels"].as_array().unwrap() {
                    let topic = channel["topic"].as_str().unwrap().to_owned();
                    viewer.channels.insert(topic, channel["id"].as_u64().unwrap());
                }
            }
        }
        viewer
    }

    async fn next(&mut self) -> Message {
        let next = tokio::time::timeout(PATIENCE, self.socket.next()).await;
        next.expect("a message in time").expect("the socket is open").expect("a WebSocket message")
    }

    /// Subscribe to `topics`, subscription ids 1, 2, ... in their order.
    async fn subscribe(&mut self, topics: &[&str]) {
        let subscriptions: Vec<Json> = topics
            .iter()
            .enumerate()
            .map(|(index, topic)| json!({"id": index + 1, "channelId": self.channels[*topic]}))
            .collect();
        let request = json!({"op": "subscribe", "subscriptions": subscriptions}).to_string();
        self.socket.send(Message::Text(request.into())).await.unwrap();
    }

    /// Cycles stepped one at a time until a message comes: a subscription takes effect in the
    /// server's time, not the test's (a cycle stepped before it is not this viewer's).
    fn first_data(&mut self, runtime: &tokio::runtime::Runtime, robot: &Robot) -> (u32, Vec<u8>) {
        let started = Instant::now();
        loop {
            robot.step(1);
            let next = runtime
                .block_on(async { tokio::time::timeout(Duration::from_millis(200), self.data()).await });
            if let Ok(data) = next {
                return data;
            }
            assert!(started.elapsed() < PATIENCE, "no message after subscribing");
        }
    }

    /// The next message data frame: its subscription id and payload.
    async fn data(&mut self) -> (u32, Vec<u8>) {
        loop {
            if let Message::Binary(frame) = self.next().await {
                assert_eq!(frame[0], 0x01, "a message data frame");
                let subscription = u32::from_le_bytes(frame[1..5].try_into().unwrap());
                return (subscription, frame[13..].to_vec());
            }
        }
    }
}

fn floats(value: &Value) -> Vec<f64> {
    let Value::Array(items) = value else { panic!("not a list: {value}") };
    items.iter().map(|item| item.as_f64().unwrap()).collect()
}

fn view_config(port: u16, extra: &str) -> String {
    format!("[foxglove]\nlisten = \"127.0.0.1:{port}\"\n{extra}\n")
}

/// Row-major 4x4 of a frame transform.
fn matrix(transform: &foxglove::messages::FrameTransform) -> [[f64; 4]; 4] {
    let q = transform.rotation.as_ref().unwrap();
    let t = transform.translation.as_ref().unwrap();
    let (w, x, y, z) = (q.w, q.x, q.y, q.z);
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y), t.x],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x), t.y],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y), t.z],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

fn product(a: &[[f64; 4]; 4], b: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut out = [[0.0; 4]; 4];
    for (row, out_row) in out.iter_mut().enumerate() {
        for (column, cell) in out_row.iter_mut().enumerate() {
            *cell = (0..4).map(|k| a[row][k] * b[k][column]).sum();
        }
    }
    out
}

/// A frame in Torso, walking the published tree up from `frame`.
fn in_torso(transforms: &FrameTransforms, frame: &str) -> [[f64; 4]; 4] {
    let mut result = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
    let mut child = frame.to_owned();
    while child != "Torso" {
        let link =
            transforms.transforms.iter().find(|t| t.child_frame_id == child).expect("a transform per link");
        result = product(&matrix(link), &result);
        child = link.parent_frame_id.clone();
    }
    result
}

#[test]
fn a_viewer_sees_the_joints_and_the_links_as_almemory_and_get_transform_say() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, ""));
    robot.motion("setStiffnesses", vec!["Body".into(), 1.0.into()]);
    let names: Vec<Value> =
        ["HeadYaw", "LShoulderPitch", "LElbowRoll", "RKneePitch"].map(Value::from).to_vec();
    let angles: Vec<Value> = [0.6, 0.4, -0.9, 0.5].map(Value::from).to_vec();
    robot.motion("setAngles", vec![Value::Array(names), Value::Array(angles), 1.0.into()]);
    robot.step(100);
    // The joints held where they are sensed (the simulated sensors are noisy): ALMotion's
    // sensed model, which its thread updates after the DCM's cycle, and the view's, posed by
    // each cycle's sensed angles, then agree whichever cycle each is at.
    let sensed = floats(&robot.call("ALMemory", "getListData", vec![Value::Array(sensor_keys())]));
    for (joint, angle) in JOINTS.iter().zip(&sensed) {
        let sensor = format!("{joint}/Position/Sensor/Value");
        robot.call("DCM", "simulateSensor", vec![sensor.into(), (*angle).into()]);
    }
    robot.step(5);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/joint_states", "/tf"]));
    // The view writes each new cycle: one more, then what it sends must come to rest on it,
    // stamped with that cycle's DCM time (as `naocli record` stamps it).
    let dcm_time_ms = robot.step(1);
    let stamp = dcm_stamp(dcm_time_ms);
    let joints = floats(&robot.call("ALMemory", "getListData", vec![Value::Array(sensor_keys())]));
    assert_eq!(joints, sensed);
    let expected: Vec<[[f64; 4]; 4]> = ["LArm", "RLeg", "HeadPitch", "CameraBottom"]
        .iter()
        .map(|frame| {
            let m = robot.transform(frame, FRAME_TORSO, true);
            [0, 1, 2, 3].map(|row| [0, 1, 2, 3].map(|column| m[4 * row + column]))
        })
        .collect();
    let (mut joints_seen, mut links_seen) = (false, false);
    let started = Instant::now();
    while !(joints_seen && links_seen) {
        assert!(started.elapsed() < PATIENCE, "the view never showed the last cycle");
        let (subscription, payload) = runtime.block_on(viewer.data());
        if subscription == 1 {
            let states = JointStates::decode(payload.as_slice()).unwrap();
            assert_eq!(states.joints.len(), JOINTS.len());
            let got: Vec<f64> = states.joints.iter().map(|joint| joint.position.unwrap()).collect();
            let names: Vec<&str> = states.joints.iter().map(|joint| joint.name.as_str()).collect();
            assert_eq!(names, JOINTS);
            joints_seen |= got == joints && states.timestamp == Some(stamp);
        } else {
            let transforms = FrameTransforms::decode(payload.as_slice()).unwrap();
            let world = transforms.transforms.iter().find(|t| t.child_frame_id == "Torso").unwrap();
            assert_eq!(world.parent_frame_id, "odom");
            if world.timestamp != Some(stamp) {
                continue;
            }
            let got: Vec<[[f64; 4]; 4]> = ["LArm", "RLeg", "HeadPitch", "CameraBottom"]
                .iter()
                .map(|frame| in_torso(&transforms, frame))
                .collect();
            links_seen |= got.iter().zip(&expected).all(|(got, expected)| {
                got.iter().flatten().zip(expected.iter().flatten()).all(|(g, e)| (g - e).abs() < 1e-9)
            });
        }
    }
    // The head turned as commanded: the view shows the robot, not a resting model.
    let head = joints[JOINTS.iter().position(|name| *name == "HeadYaw").unwrap()];
    assert_close(&[head], &[0.6], 0.05, "HeadYaw sensed");
}

#[test]
fn a_viewer_gets_the_robot_description_on_subscribing_and_events_as_raised() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, "events = [\"Test/Marker\"]"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/robot_description", "/events/Test/Marker"]));
    let (subscription, payload) = runtime.block_on(viewer.data());
    assert_eq!(subscription, 1, "the description comes at once, with no cycle run");
    let description: Json = serde_json::from_slice(&payload).unwrap();
    let urdf = std::process::Command::new(naobroker_e2e::bin("naocli")).arg("urdf").output().unwrap();
    assert_eq!(
        description["data"].as_str().unwrap().trim_end(),
        String::from_utf8(urdf.stdout).unwrap().trim_end()
    );
    robot.call("ALMemory", "raiseEvent", vec!["Test/Marker".into(), 7.into()]);
    let (subscription, payload) = runtime.block_on(viewer.data());
    assert_eq!(subscription, 2);
    assert_eq!(serde_json::from_slice::<Json>(&payload).unwrap(), json!({"value": 7}));
}

/// A DCM time (ms) as a message's timestamp.
fn dcm_stamp(dcm_time_ms: i64) -> Timestamp {
    Timestamp::new((dcm_time_ms / 1000) as u32, (dcm_time_ms % 1000) as u32 * 1_000_000)
}

/// A field of a map `Foxglove.stats()` answers.
fn field<'a>(map: &'a Value, name: &str) -> &'a Value {
    let Value::Map(entries) = map else { panic!("not a map: {map}") };
    entries.iter().find(|(key, _)| key.as_str() == Some(name)).map(|(_, value)| value).unwrap()
}

/// What the view counted of a viewer: messages sent and dropped.
fn viewer_counts(robot: &Robot, viewer: &Viewer) -> (u64, u64) {
    let stats = robot.call("Foxglove", "stats", vec![]);
    let Value::Array(viewers) = field(&stats, "viewers") else { panic!("{stats}") };
    let address = viewer.address.to_string();
    let counted = viewers.iter().find(|counted| field(counted, "address").as_str() == Some(&address));
    let counted = counted.unwrap_or_else(|| panic!("{address} not in {stats}"));
    let count = |name| field(counted, name).as_u64().unwrap();
    (count("messages_sent"), count("messages_dropped"))
}

/// The viewers the view has connected, once the number comes to `expected`.
fn await_viewers(robot: &Robot, expected: usize) {
    let started = Instant::now();
    loop {
        let stats = robot.call("Foxglove", "stats", vec![]);
        let Value::Array(viewers) = field(&stats, "viewers") else { panic!("{stats}") };
        if viewers.len() == expected {
            return;
        }
        assert!(started.elapsed() < PATIENCE, "{} viewers, expected {expected}: {stats}", viewers.len());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sensor_keys() -> Vec<Value> {
    JOINTS
        .iter()
        .map(|joint| Value::from(format!("Device/SubDeviceList/{joint}/Position/Sensor/Value")))
        .collect()
}

#[test]
fn a_viewer_that_never_reads_loses_messages_counted_while_another_receives_every_cycle_once() {
    let port = free_port();
    // (A patience longer than the test: the stalled viewer stays to be counted.)
    let robot = Robot::start_with(&view_config(port, "viewer_queue = 8\nviewer_patience_s = 3600"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut stalled = runtime.block_on(Viewer::connect(port));
    runtime.block_on(stalled.subscribe(&["/tf", "/joint_states", "/robot_description"]));
    let mut reader = runtime.block_on(Viewer::connect(port));
    runtime.block_on(reader.subscribe(&["/tf", "/joint_states", "/robot_description"]));
    // Cycles stepped until the reader's subscriptions took effect (the stalled viewer's did
    // before: it subscribed first).
    let mut primed = 1;
    let mut read = 1;
    while reader.first_data(&runtime, &robot).0 != 1 {
        primed += 1;
        read += 1;
    }
    // Each cycle stepped alone, the reader taking its messages before the next: it misses
    // none and gets each cycle once (a cycle's joint states newer than the last's), while the
    // stalled viewer's queue and socket fill and it loses the oldest.
    const CYCLES: usize = 3000;
    let mut last_stamp: Option<(u32, u32)> = None;
    for _ in 0..CYCLES {
        robot.step(1);
        loop {
            let (subscription, payload) = runtime.block_on(reader.data());
            read += 1;
            if subscription == 2 {
                let stamp = JointStates::decode(payload.as_slice()).unwrap().timestamp.unwrap();
                let stamp = (stamp.sec(), stamp.nsec());
                assert!(last_stamp < Some(stamp), "a cycle sent again: {stamp:?} after {last_stamp:?}");
                last_stamp = Some(stamp);
            }
            if subscription == 1 {
                assert!(!FrameTransforms::decode(payload.as_slice()).unwrap().transforms.is_empty());
                break;
            }
        }
    }
    let drain = |viewer: &mut Viewer| {
        let mut count = 0;
        runtime.block_on(async {
            while let Ok(Some(Ok(message))) =
                tokio::time::timeout(Duration::from_millis(500), viewer.socket.next()).await
            {
                count += usize::from(matches!(message, Message::Binary(_)));
            }
        });
        count as u64
    };
    let sent = (read + drain(&mut reader)) as u64;
    let received = drain(&mut stalled);
    assert!(sent >= 2 * CYCLES as u64, "the reader got every cycle's transforms and joints: {sent}");
    assert!(received < sent, "the stalled viewer got {received} of {sent} messages");
    // What the view counted: the reader lost nothing; the stalled viewer lost what it did not
    // get of what it was offered (the reader's messages, and the cycles stepped before the
    // reader's subscriptions took effect).
    assert_eq!(viewer_counts(&robot, &reader), (sent, 0));
    let (stalled_sent, dropped) = viewer_counts(&robot, &stalled);
    assert_eq!(stalled_sent, received);
    let offered = received + dropped;
    eprintln!("stalled viewer: {received} received, {dropped} dropped; reader: {sent} received");
    let before_the_reader = 2 * primed + 2;
    assert!(
        (sent..=sent + before_the_reader).contains(&offered),
        "{received} received + {dropped} dropped, {sent} sent"
    );
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert_eq!(field(&stats, "messages_dropped").as_u64(), Some(dropped));
}

#[test]
fn a_viewer_beyond_max_viewers_is_refused_with_the_reason_while_the_others_receive() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, "max_viewers = 2"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut first = runtime.block_on(Viewer::connect(port));
    let mut second = runtime.block_on(Viewer::connect(port));
    // The third: the handshake, an error status naming the bound, and "try again later".
    let reason = "naobroker: 2 Foxglove viewers connected, at most 2 ([foxglove] max_viewers)";
    let mut refused = runtime.block_on(open(port));
    let next = |socket: &mut Socket| {
        let next = runtime.block_on(async { tokio::time::timeout(PATIENCE, socket.next()).await });
        next.expect("a message in time").expect("a message").expect("a WebSocket message")
    };
    let Message::Text(status) = next(&mut refused) else { panic!("a status first") };
    let status: Json = serde_json::from_str(&status).unwrap();
    assert_eq!(status, json!({"op": "status", "level": 2, "message": reason}));
    let Message::Close(Some(close)) = next(&mut refused) else { panic!("then a close frame") };
    assert_eq!((close.code, close.reason.as_str()), (CloseCode::Again, reason));
    // The two let in go on receiving.
    for viewer in [&mut first, &mut second] {
        runtime.block_on(viewer.subscribe(&["/joint_states"]));
    }
    for viewer in [&mut first, &mut second] {
        assert_eq!(viewer.first_data(&runtime, &robot).0, 1);
    }
    // One leaves: a new viewer is let in.
    runtime.block_on(first.socket.close(None)).unwrap();
    await_viewers(&robot, 1);
    let mut third = runtime.block_on(Viewer::connect(port));
    runtime.block_on(third.subscribe(&["/joint_states"]));
    assert_eq!(third.first_data(&runtime, &robot).0, 1);
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert_eq!(field(&stats, "viewers_refused").as_u64(), Some(1));
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn fifty_viewers_coming_and_going_leave_the_broker_as_it_was() {
    let port = free_port();
    // The default is 8 viewers at once; 50 here, all connected at once each round.
    let robot = Robot::start_with(&view_config(port, "max_viewers = 50"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let round = |robot: &Robot| {
        let mut viewers = Vec::new();
        for _ in 0..50 {
            let mut viewer = runtime.block_on(Viewer::connect(port));
            runtime.block_on(viewer.subscribe(&["/tf", "/joint_states", "/robot_description"]));
            viewers.push(viewer);
        }
        await_viewers(robot, 50);
        for viewer in &mut viewers {
            viewer.first_data(&runtime, robot);
        }
        for mut viewer in viewers {
            runtime.block_on(viewer.socket.close(None)).unwrap();
        }
        await_viewers(robot, 0);
    };
    // The first rounds grow what is grown once (the runtime's buffers, the allocator's arenas
    // for 50 viewers at once: in one run 43.7, 49.9, 51.8, 52.0 MB, then flat).
    for _ in 0..3 {
        round(&robot);
    }
    let before = rss_kb(robot.broker.pid());
    for _ in 0..3 {
        round(&robot);
    }
    let after = rss_kb(robot.broker.pid());
    eprintln!("RSS {before} kB before 150 viewers (50 at once, 3 times), {after} kB after");
    // Noise: the allocator's pages; a viewer's queue, schemas and socket left behind would
    // be tens of kilobytes each, megabytes for 150. (The view forgot every one of them: each
    // round ends with none connected.)
    assert!(after < before + 2048, "RSS {before} kB before 150 viewers, {after} kB after");
}

#[test]
fn a_client_chooses_the_memory_keys_a_viewer_sees_within_the_bound() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, "keys_rate_hz = 50.0"));
    robot.call("ALMemory", "insertData", vec!["Test/Counter".into(), 5.into()]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/memory"]));
    let keys = Value::Array(vec!["Test/Counter".into(), "DCM/Cycle".into()]);
    robot.call("Foxglove", "setKeys", vec![keys.clone()]);
    assert_eq!(robot.call("Foxglove", "getKeys", vec![]), keys);
    // Written at keys_rate_hz, by wall clock: the first message after the keys were set.
    let memory = loop {
        let (_, payload) = runtime.block_on(viewer.data());
        let memory: Json = serde_json::from_slice(&payload).unwrap();
        if memory.get("Test/Counter").is_some() {
            break memory;
        }
    };
    assert_eq!(memory["Test/Counter"], 5);
    assert!(memory["DCM/Cycle"].is_number(), "{memory}");
    // `/memory`'s bound: 64 keys (docs/visualisation.md).
    let too_many = Value::Array((0..65).map(|i| Value::from(format!("K{i}"))).collect());
    let refused = robot.session.call("Foxglove", "setKeys", vec![too_many]).unwrap_err().message;
    assert_eq!(refused, "Foxglove.setKeys: 65 keys, at most 64");
    assert_eq!(robot.call("Foxglove", "getKeys", vec![]), keys, "a refused call changes nothing");
}

/// The next `/log` message within a second, if any.
fn next_log(runtime: &tokio::runtime::Runtime, viewer: &mut Viewer) -> Option<Log> {
    let next = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(1), viewer.data()).await });
    next.ok().map(|(_, payload)| Log::decode(payload.as_slice()).unwrap())
}

#[test]
fn a_viewer_of_log_gets_the_brokers_lines_in_dcm_time_but_never_the_views_own() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, ""));
    let dcm_time_ms = robot.step(3);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/log"]));
    let raise = |message: &str| {
        let line = vec!["WARN".into(), "probe::arm".into(), message.into()];
        robot.call("ServiceDirectory", "log", line);
    };
    // The view follows the broker's lines once a viewer subscribes to /log: a line raised
    // until one shows.
    let started = Instant::now();
    let first = loop {
        assert!(started.elapsed() < PATIENCE, "no line on /log");
        raise("arm hot");
        if let Some(log) = next_log(&runtime, &mut viewer) {
            break log;
        }
    };
    assert_eq!((first.message.as_str(), first.file.as_str()), ("arm hot", "probe::arm"));
    assert_eq!(first.timestamp, Some(dcm_stamp(dcm_time_ms)), "stamped with DCM time");
    // Another viewer comes and goes: the SDK's server logs it ("Registered client ..."), a
    // line about a viewer that is not sent to the viewers.
    let other = runtime.block_on(Viewer::connect(port));
    drop(other);
    await_viewers(&robot, 1);
    raise("after the other viewer");
    let mut seen = Vec::new();
    loop {
        let log = next_log(&runtime, &mut viewer).expect("the line raised after the other viewer left");
        if log.message == "after the other viewer" {
            break;
        }
        seen.push(log.message);
    }
    assert!(seen.iter().all(|message| message == "arm hot"), "the view's own lines on /log: {seen:?}");
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert!(field(&stats, "own_log_lines").as_u64().unwrap() > 0, "{stats}");
}

#[test]
fn a_connection_that_never_shakes_hands_gives_its_place_up() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, "max_viewers = 1"));
    let idle = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    await_viewers(&robot, 1);
    // Its place is given up after the handshake's patience (5 s): a viewer is let in.
    await_viewers(&robot, 0);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/joint_states"]));
    assert_eq!(viewer.first_data(&runtime, &robot).0, 1);
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert_eq!(field(&stats, "viewers_cut_off").as_u64(), Some(1));
    drop(idle);
}

#[test]
fn a_viewer_sending_a_frame_beyond_the_bound_is_cut_off_while_another_receives() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, ""));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut reader = runtime.block_on(Viewer::connect(port));
    let mut flooder = runtime.block_on(Viewer::connect(port));
    // 1 MiB in one frame: far beyond the 64 KiB a viewer may send.
    // (The send may fail: the door closes the connection as soon as the header is read.)
    let _ = runtime.block_on(flooder.socket.send(Message::Binary(vec![0; 1 << 20].into())));
    let ended = runtime.block_on(async {
        loop {
            match tokio::time::timeout(PATIENCE, flooder.socket.next()).await {
                Ok(Some(Ok(_))) => continue,
                ended => return ended.is_ok(),
            }
        }
    });
    assert!(ended, "the flooding viewer's connection ends");
    await_viewers(&robot, 1);
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert_eq!(field(&stats, "viewers_cut_off").as_u64(), Some(1));
    runtime.block_on(reader.subscribe(&["/joint_states"]));
    assert_eq!(reader.first_data(&runtime, &robot).0, 1);
}

#[test]
fn a_viewer_that_stops_reading_gives_its_place_up_after_its_patience() {
    let port = free_port();
    let robot = Robot::start_with(&view_config(port, "max_viewers = 1\nviewer_patience_s = 1"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut stalled = runtime.block_on(Viewer::connect(port));
    runtime.block_on(stalled.subscribe(&["/tf", "/joint_states", "/robot_description"]));
    // Cycles stepped until its socket's buffers are full and it took nothing for 1 s: the door
    // cuts it off and gives its place up.
    let started = Instant::now();
    loop {
        let stats = robot.call("Foxglove", "stats", vec![]);
        let Value::Array(viewers) = field(&stats, "viewers") else { panic!("{stats}") };
        if viewers.is_empty() {
            break;
        }
        assert!(started.elapsed() < 6 * PATIENCE, "the stalled viewer still holds its place: {stats}");
        robot.step(10);
    }
    let mut viewer = runtime.block_on(Viewer::connect(port));
    runtime.block_on(viewer.subscribe(&["/joint_states"]));
    assert_eq!(viewer.first_data(&runtime, &robot).0, 1);
    let stats = robot.call("Foxglove", "stats", vec![]);
    assert_eq!(field(&stats, "viewers_cut_off").as_u64(), Some(1));
    drop(stalled);
}
