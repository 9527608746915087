//! The `lola` backend: the DCM as LoLA's one client on a real NAO V6 (or on a simulator
//! speaking LoLA). LoLA clocks the DCM: the cycle thread waits on the socket, runs one
//! cycle per sensor map and answers each map with exactly one actuator map within that
//! cycle; maps that waited while the thread was late are answered at once with the last
//! actuator map sent. The socket lives on the cycle thread, which never blocks on it
//! (waits are bounded, reads and writes do not block), never allocates and never logs:
//! the link's state and counters go to the actor side through [`LinkHealth`].
//!
//! `docs/lola.md` has the mapping table, the timing and the link policy.

mod incoming;
mod mapping;
mod skim;

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use naobroker_hardware::link::{LinkHealth, LinkLoss, LinkState};
use naobroker_hardware::time::DcmTime;
use naobroker_hardware::{AnswerCounts, Hardware, HardwareCycle, LinkStatus, Takeover};
use naobroker_lola::names::{BatteryOrder, ROBOT_CONFIG};
use naobroker_lola::{
    encode_actuator_map, ActuatorKeys, ActuatorMap, RobotConfig, SensorMap, ACTUATOR_MAP_MAX_BYTES, CYCLE_US,
    DEFAULT_SOCKET,
};
use naobroker_robot::device::DeviceModel;
use naobroker_rt::monotonic_ns;
use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{send, MsgFlags};
use serde::Deserialize;

use incoming::{Frame, Incoming, Read};
use mapping::Mapping;

/// What the DCM does with its commands when the link to the robot comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkLossPolicy {
    /// The commands go on as they are.
    Hold,
    /// Every joint's stiffness ramps from what the robot applies to 0 in `relax_ms`, its
    /// position held where it is measured: no jump.
    #[default]
    Relax,
}

/// `[dcm.lola]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LolaConfig {
    /// Where LoLA listens.
    pub socket: PathBuf,
    /// The order of the sensor map's four battery values.
    pub battery_order: BatteryOrder,
    pub on_link_loss: LinkLossPolicy,
    /// How long the relax policy's ramp to stiffness 0 takes.
    pub relax_ms: u32,
    /// No sensor map for this long is a stall.
    pub stall_ms: u32,
    /// Pause between attempts to connect.
    pub reconnect_ms: u32,
}

impl Default for LolaConfig {
    fn default() -> Self {
        LolaConfig {
            socket: PathBuf::from(DEFAULT_SOCKET),
            battery_order: BatteryOrder::default(),
            on_link_loss: LinkLossPolicy::default(),
            relax_ms: 1000,
            stall_ms: 100,
            reconnect_ms: 1000,
        }
    }
}

/// The robot behind LoLA's socket, as the DCM's hardware.
pub struct LolaRobot {
    config: LolaConfig,
    mapping: Mapping,
    health: Arc<LinkHealth>,
    socket: Option<UnixStream>,
    ever_connected: bool,
    /// When to try to connect next (CLOCK_MONOTONIC ns).
    next_connect_ns: i64,
    /// When the last sensor map came (or the connection was made).
    last_map_ns: i64,
    incoming: Incoming,
    /// The newest sensor map, and the one being decoded (a refused map leaves it partial).
    latest: SensorMap,
    decoding: SensorMap,
    /// The identity last handed to the actor side.
    identity: Option<RobotConfig>,
    commands: ActuatorMap,
    /// The last actuator map: sent, or before any, the description's initial values.
    answer: [u8; ACTUATOR_MAP_MAX_BYTES],
    answer_len: usize,
    /// A sensor map's cycle runs: its answer is due.
    answer_due: bool,
    /// This cycle's answer went out.
    answered: bool,
    /// The next sensor map starts a link gained or regained (the policy applies).
    regained: bool,
    /// The connection brought a sensor map: lost, it is tried again at once.
    delivered: bool,
    takeover: Vec<Takeover>,
    /// Answers sent again for maps that got no cycle; failures of the link.
    repeated: u64,
    failures: u64,
}

impl LolaRobot {
    /// A robot for `model`'s devices, reached at `config.socket`. Nothing is connected
    /// yet: the cycle thread connects (and reconnects) by itself.
    pub fn new(config: LolaConfig, model: &DeviceModel) -> LolaRobot {
        let (mapping, unmapped) = Mapping::new(model, config.battery_order);
        if !unmapped.is_empty() {
            tracing::warn!(
                robot = %model.robot,
                fields = ?unmapped,
                "the robot description has no device for these LoLA values: they are not used"
            );
        }
        let raw: Vec<i64> = model.actuators.iter().map(|spec| spec.to_hardware(spec.initial)).collect();
        let mut commands = ActuatorMap::default();
        mapping.write(&raw, &vec![false; raw.len()], &mut commands);
        let mut answer = [0u8; ACTUATOR_MAP_MAX_BYTES];
        let answer_len = encode_actuator_map(&commands, ActuatorKeys::ALL, &mut answer);
        let endpoint = config.socket.display().to_string();
        LolaRobot {
            takeover: Vec::with_capacity(mapping.relax_commands()),
            mapping,
            health: Arc::new(LinkHealth::new(endpoint, ROBOT_CONFIG)),
            socket: None,
            ever_connected: false,
            next_connect_ns: i64::MIN,
            last_map_ns: 0,
            incoming: Incoming::new(),
            latest: SensorMap::default(),
            decoding: SensorMap::default(),
            identity: None,
            commands,
            answer,
            answer_len,
            answer_due: false,
            answered: false,
            regained: true,
            delivered: false,
            repeated: 0,
            failures: 0,
            config,
        }
    }

    fn connect(&mut self, now: i64) {
        let connected = UnixStream::connect(&self.config.socket).and_then(|socket| {
            socket.set_nonblocking(true)?;
            Ok(socket)
        });
        match connected {
            Ok(socket) => {
                self.socket = Some(socket);
                self.incoming.clear();
                self.health.connected(self.ever_connected);
                self.ever_connected = true;
                self.last_map_ns = now;
                self.regained = true;
                self.delivered = false;
            }
            Err(error) => {
                self.health.connect_failed(error.raw_os_error().unwrap_or(0));
                self.next_connect_ns = now + i64::from(self.config.reconnect_ms) * 1_000_000;
            }
        }
    }

    /// Close the connection. One that brought sensor maps is tried again at once (LoLA
    /// restarting); one that brought none after `reconnect_ms`, so that a server which
    /// accepts and closes at once never keeps the cycle thread busy.
    fn lose(&mut self, loss: LinkLoss, errno: i32) {
        if loss != LinkLoss::Closed {
            self.failures += 1;
        }
        self.socket = None;
        self.answer_due = false;
        self.regained = true;
        let pause = if self.delivered { 0 } else { i64::from(self.config.reconnect_ms) * 1_000_000 };
        self.next_connect_ns = monotonic_ns() + pause;
        self.health.lost(loss, errno);
    }

    /// Send `answer[..answer_len]`; false (the link lost) when it did not all go.
    fn send_answer(&mut self) -> bool {
        let Some(socket) = &self.socket else { return false };
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        let bytes = &self.answer[..self.answer_len];
        let sent = loop {
            match send(socket.as_raw_fd(), bytes, flags) {
                Err(Errno::EINTR) => continue,
                result => break result,
            }
        };
        match sent {
            Ok(sent) if sent == bytes.len() => {
                self.health.count_answer();
                true
            }
            // Part of a map in the stream would desynchronize LoLA: start over.
            Ok(_) => {
                self.lose(LinkLoss::Failed, Errno::EAGAIN as i32);
                false
            }
            Err(errno) => {
                self.lose(LinkLoss::Failed, errno as i32);
                false
            }
        }
    }

    /// A map that gets no cycle of its own: the last actuator map again.
    fn answer_again(&mut self) -> bool {
        self.repeated += 1;
        self.send_answer()
    }

    /// Read what arrived: older maps answered at once, the newest kept for its cycle.
    fn receive(&mut self) -> Option<HardwareCycle> {
        let mut fresh = false;
        let mut missed = 0;
        loop {
            let Some(socket) = &self.socket else { return None };
            let read = self.incoming.read_from(socket);
            loop {
                self.decoding = self.latest;
                match self.incoming.next_frame(&mut self.decoding) {
                    Frame::Map => {
                        self.health.count_map();
                        if fresh {
                            self.health.count_late();
                            missed += 1;
                            if !self.answer_again() {
                                return None;
                            }
                        }
                        fresh = true;
                        self.latest = self.decoding;
                    }
                    Frame::Malformed => {
                        self.health.count_malformed();
                        if !self.answer_again() {
                            return None;
                        }
                    }
                    Frame::NeedMore => break,
                    Frame::Broken(loss) => {
                        match loss {
                            LinkLoss::Oversized => self.health.count_oversized(),
                            _ => self.health.count_malformed(),
                        }
                        self.lose(loss, 0);
                        return None;
                    }
                }
            }
            match read {
                Read::Bytes => continue,
                Read::Empty => break,
                Read::Closed => {
                    self.lose(LinkLoss::Closed, 0);
                    return None;
                }
                Read::Failed(errno) => {
                    self.lose(LinkLoss::Failed, errno);
                    return None;
                }
                Read::Full => {
                    self.health.count_oversized();
                    self.lose(LinkLoss::Oversized, 0);
                    return None;
                }
            }
        }
        fresh.then(|| self.fresh_cycle(missed))
    }

    /// The newest map's cycle: the link is up, the identity handed over when it changed,
    /// the policy applied when the link was (re)gained.
    fn fresh_cycle(&mut self, missed: u64) -> HardwareCycle {
        self.last_map_ns = monotonic_ns();
        self.delivered = true;
        self.answer_due = true;
        self.health.set_state(LinkState::Up);
        if self.identity != Some(self.latest.robot_config) {
            let config = self.latest.robot_config;
            self.health.set_identity(config.texts().map(|text| text.as_str()));
            self.identity = Some(config);
        }
        let take_over =
            std::mem::take(&mut self.regained) && self.config.on_link_loss == LinkLossPolicy::Relax;
        if take_over {
            self.mapping.relax(&self.latest, self.config.relax_ms, &mut self.takeover);
        }
        HardwareCycle { missed, take_over }
    }

    fn check_stall(&mut self, now: i64) {
        let stall_ns = i64::from(self.config.stall_ms) * 1_000_000;
        let state = self.health.state();
        if self.socket.is_some() && state != LinkState::Stalled && now - self.last_map_ns >= stall_ns {
            self.health.count_stall();
            self.regained = true;
        }
    }
}

impl Hardware for LolaRobot {
    fn read_sensors(&mut self, _time: DcmTime, sensors: &mut [f64]) {
        self.mapping.read(&self.latest, sensors);
    }

    fn write_actuators(&mut self, _time: DcmTime, _values: &[f64], raw: &[i64], fired: &[bool]) {
        self.answered = false;
        if !std::mem::take(&mut self.answer_due) {
            return;
        }
        self.mapping.write(raw, fired, &mut self.commands);
        self.answer_len = encode_actuator_map(&self.commands, ActuatorKeys::ALL, &mut self.answer);
        self.answered = self.send_answer();
    }

    /// One actuator map carries every actuator: each counts whether its cycle's went out.
    fn count_answers(&mut self, answers: &mut AnswerCounts) {
        if self.answered {
            answers.add_to_every(1, 0);
        } else {
            answers.add_to_every(0, 1);
        }
    }

    fn link(&self) -> LinkStatus {
        LinkStatus { ack: self.health.answers(), nack: self.repeated, errors: self.failures }
    }

    fn clock_period_us(&self) -> Option<u32> {
        Some(CYCLE_US as u32)
    }

    fn wait_cycle(&mut self, timeout: Duration) -> Option<HardwareCycle> {
        let now = monotonic_ns();
        let until = now.saturating_add(timeout.as_nanos().min(i64::MAX as u128) as i64);
        if self.socket.is_none() && now >= self.next_connect_ns {
            self.connect(now);
        }
        let Some(socket) = &self.socket else {
            let wake = until.min(self.next_connect_ns);
            std::thread::park_timeout(Duration::from_nanos(wake.saturating_sub(now).max(0) as u64));
            return None;
        };
        let stall_at = self.last_map_ns + i64::from(self.config.stall_ms) * 1_000_000;
        let wake = if self.health.state() == LinkState::Stalled { until } else { until.min(stall_at) };
        let wait_ms = (wake.saturating_sub(now).max(0) + 999_999) / 1_000_000;
        let mut polled = [PollFd::new(socket.as_fd(), PollFlags::POLLIN)];
        let ready = match poll(&mut polled, PollTimeout::try_from(wait_ms).unwrap_or(PollTimeout::ZERO)) {
            Ok(ready) => ready > 0,
            Err(Errno::EINTR) => false,
            Err(errno) => {
                self.lose(LinkLoss::Failed, errno as i32);
                return None;
            }
        };
        let cycle = if ready { self.receive() } else { None };
        if cycle.is_none() {
            self.check_stall(monotonic_ns());
        }
        cycle
    }

    fn takeover(&self) -> &[Takeover] {
        &self.takeover
    }

    fn link_health(&self) -> Option<Arc<LinkHealth>> {
        Some(Arc::clone(&self.health))
    }
}
