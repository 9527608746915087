//! A LoLA of the tests' own: a Unix listener the `lola` backend connects to, which sends
//! the sensor maps (or bytes) a test writes and reads back each actuator map, and a DCM
//! cycle started on it. Nothing waits on time: the DCM cycles only when a map is sent,
//! and every wait is for a condition, with a generous deadline.
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_backend_lola::{LinkLossPolicy, LolaConfig, LolaRobot};
use naobroker_dcm::cycle::{CycleConfig, CycleThread, DcmSlots, RequestChannel, Shared, StartedCycle};
use naobroker_hardware::link::{LinkHealth, LinkSnapshot};
use naobroker_lola::{
    decode_actuator_map, encode_sensor_map, ActuatorMap, ConfigText, RobotConfig, SensorMap, SENSOR_MAP_BYTES,
};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

pub const DEADLINE: Duration = Duration::from_secs(20);
pub const START_TIME_MS: i32 = 1000;

/// Wait until `condition` holds, or fail saying `what`.
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < DEADLINE, "{what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The tests' LoLA: a listener at a fresh path, and the connection it accepted.
pub struct Peer {
    pub path: PathBuf,
    listener: Option<UnixListener>,
    stream: Option<UnixStream>,
    received: Vec<u8>,
}

impl Peer {
    /// A path in a fresh directory, listened on when `listening`.
    pub fn new(label: &str, listening: bool) -> Peer {
        let dir = std::env::temp_dir().join(format!("naobroker-lola-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut peer = Peer { path: dir.join("robocup"), listener: None, stream: None, received: Vec::new() };
        if listening {
            peer.listen();
        }
        peer
    }

    pub fn listen(&mut self) {
        let listener = UnixListener::bind(&self.path).unwrap();
        listener.set_nonblocking(true).unwrap();
        self.listener = Some(listener);
    }

    /// Take the backend's next connection.
    pub fn accept(&mut self) {
        let listener = self.listener.as_ref().expect("listening");
        let started = Instant::now();
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    assert!(started.elapsed() < DEADLINE, "the backend connects");
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(error) => panic!("accept: {error}"),
            }
        };
        stream.set_nonblocking(false).unwrap();
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        self.stream = Some(stream);
        self.received.clear();
    }

    /// Close the connection, as LoLA stopping does.
    pub fn close(&mut self) {
        self.stream = None;
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.as_mut().expect("connected").write_all(bytes).unwrap();
    }

    pub fn send_map(&mut self, map: &SensorMap) {
        self.send(&map_bytes(map));
    }

    /// The next actuator map, and its bytes.
    pub fn answer(&mut self) -> (ActuatorMap, Vec<u8>) {
        loop {
            let mut map = ActuatorMap::default();
            match decode_actuator_map(&self.received, &mut map) {
                Ok(decoded) => {
                    let bytes: Vec<u8> = self.received.drain(..decoded.consumed).collect();
                    return (map, bytes);
                }
                Err(naobroker_lola::DecodeError::Incomplete) => {}
                Err(error) => panic!("the backend sent a bad actuator map: {error}"),
            }
            let mut chunk = [0u8; 4096];
            let read = self.stream.as_mut().expect("connected").read(&mut chunk).expect("an answer in time");
            assert!(read > 0, "the backend closed the connection instead of answering");
            self.received.extend_from_slice(&chunk[..read]);
        }
    }

    /// Whether the backend closed the connection (reading fails or ends).
    pub fn closed_by_backend(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        let stream = self.stream.as_mut().expect("connected");
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return true,
                Ok(read) => self.received.extend_from_slice(&chunk[..read]),
            }
        }
    }
}

/// A sensor map as a real robot sends it.
pub fn map_bytes(map: &SensorMap) -> [u8; SENSOR_MAP_BYTES] {
    let mut bytes = [0u8; SENSOR_MAP_BYTES];
    encode_sensor_map(map, &mut bytes).unwrap();
    bytes
}

pub fn robot_config() -> RobotConfig {
    RobotConfig {
        body_id: ConfigText::new("P0000073A03S83I00011").unwrap(),
        body_version: ConfigText::new("6.0.0").unwrap(),
        head_id: ConfigText::new("P0000074A05S93M00061").unwrap(),
        head_version: ConfigText::new("6.0.1").unwrap(),
    }
}

/// A sensor map whose values are all distinct, starting from `seed`.
pub fn sensor_map(seed: f32) -> SensorMap {
    let mut map = SensorMap { robot_config: robot_config(), ..SensorMap::default() };
    let mut next = seed;
    let mut fill = |values: &mut [f32]| {
        for value in values {
            next += 0.015625;
            *value = next;
        }
    };
    fill(&mut map.position);
    fill(&mut map.current);
    fill(&mut map.temperature);
    fill(&mut map.accelerometer);
    fill(&mut map.gyroscope);
    fill(&mut map.angles);
    fill(&mut map.battery);
    fill(&mut map.fsr);
    fill(&mut map.touch);
    fill(&mut map.sonar);
    for (index, stiffness) in map.stiffness.iter_mut().enumerate() {
        *stiffness = 0.25 + index as f32 / 100.0;
    }
    for (index, status) in map.status.iter_mut().enumerate() {
        *status = (index as i32 * 5 + 1) % 128;
    }
    map
}

/// The `lola` backend's settings for a test: the peer's socket, quick reconnection, no
/// stall unless a test asks (a test's pauses are no robot stalling).
pub fn config(peer: &Peer, on_link_loss: LinkLossPolicy) -> LolaConfig {
    LolaConfig {
        socket: peer.path.clone(),
        on_link_loss,
        relax_ms: 240,
        stall_ms: 3_600_000,
        reconnect_ms: 20,
        ..LolaConfig::default()
    }
}

/// A DCM cycle on the NAO V6 description, driven by the `lola` backend.
pub struct Bench {
    pub model: Arc<DeviceModel>,
    pub slots: Arc<RtSlots>,
    pub dcm_slots: DcmSlots,
    pub channel: RequestChannel,
    pub shared: Arc<Shared>,
    pub cycle: CycleThread,
}

impl Bench {
    pub fn start(config: LolaConfig) -> Bench {
        Bench::start_on(RobotDescription::nao_v6(), config)
    }

    pub fn start_on(description: RobotDescription, config: LolaConfig) -> Bench {
        let model = Arc::new(DeviceModel::new(description).unwrap());
        let (layout, dcm_slots) = DcmSlots::layout(&model);
        let slots = RtSlots::new(layout);
        let hardware = Box::new(LolaRobot::new(config, &model));
        let cycle_config =
            CycleConfig { priority: 0, start_time_ms: START_TIME_MS, ..CycleConfig::default() };
        let StartedCycle { thread: cycle, mut channels, .. } = CycleThread::start(
            Arc::clone(&model),
            hardware,
            Arc::clone(&slots),
            dcm_slots.clone(),
            &cycle_config,
        )
        .unwrap();
        let channel = channels.take("DCM").unwrap();
        let shared = Arc::clone(cycle.shared());
        Bench { model, slots, dcm_slots, channel, shared, cycle }
    }

    pub fn link(&self) -> &LinkHealth {
        self.shared.link.as_deref().expect("the lola backend shares its link")
    }

    pub fn snapshot(&self) -> LinkSnapshot {
        self.link().snapshot()
    }

    pub fn wait_for_cycle(&self, cycle: u64) {
        wait_until(&format!("cycle {cycle} ran"), || self.shared.cycles() >= cycle);
    }

    /// The value ALMemory shows for a sensor, by name.
    pub fn sensor(&self, name: &str) -> f64 {
        let sensor = self.model.sensor(name).unwrap_or_else(|| panic!("no sensor {name}"));
        self.slots.get(self.dcm_slots.sensors + sensor)
    }

    /// The value ALMemory shows for an actuator, by name.
    pub fn actuator(&self, name: &str) -> f64 {
        let actuator = self.model.actuator(name).unwrap_or_else(|| panic!("no actuator {name}"));
        self.slots.get(self.dcm_slots.actuators + actuator)
    }
}
