//! What a simulator's threads share: the body, the kept actuator map, the connection, the
//! counts, and how an answer is attributed and counted.

use std::collections::VecDeque;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use naobroker_lola::{ActuatorKeys, ActuatorMap, Decoded, SensorMap};

use crate::body::RobotBody;
use crate::options::Options;
use crate::script::ScriptedSensors;

/// What happened on the link so far. `answers` counts every actuator map decoded; `late`
/// and `double` are among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Cycles the body ran (12 ms of simulated time each).
    pub cycles: u64,
    /// Sensor maps sent.
    pub sent: u64,
    /// Actuator maps decoded.
    pub answers: u64,
    /// Sensor maps that got no answer before the next one was sent.
    pub missing: u64,
    /// Answers that came more than `Options::late_after` after the map they answer.
    pub late: u64,
    /// Answers to a map already answered (or before any map on this connection).
    pub double: u64,
    /// Bytes that were no actuator map (all bytes buffered then are dropped).
    pub malformed: u64,
    /// Unknown keys skipped in actuator maps.
    pub unknown_keys: u64,
    /// Cycles that sent nothing to a connected client because of a stall.
    pub stalled_cycles: u64,
    /// Cycles held back on purpose ([`crate::LolaSim::delay_maps`]).
    pub delayed_cycles: u64,
    /// Clients accepted.
    pub connections: u64,
    /// Second clients closed at once while one was connected.
    pub refused: u64,
    pub restarts: u64,
    pub connected: bool,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycles={} sent={} answers={} missing={} late={} double={} malformed={} unknown_keys={} \
             stalled_cycles={} delayed_cycles={} connections={} refused={} restarts={} connected={}",
            self.cycles,
            self.sent,
            self.answers,
            self.missing,
            self.late,
            self.double,
            self.malformed,
            self.unknown_keys,
            self.stalled_cycles,
            self.delayed_cycles,
            self.connections,
            self.refused,
            self.restarts,
            self.connected
        )
    }
}

/// One actuator map received, with the cycle of the sensor map it answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    /// The cycle ([`Stats::cycles`]) of the sensor map it answers: the latest sent.
    pub cycle: u64,
    /// The kept actuator map after it: the keys it held, the last values of the others.
    pub map: ActuatorMap,
    pub keys: ActuatorKeys,
    pub late: bool,
    pub double: bool,
}

/// The sensor map sent last on this connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SentMap {
    pub(crate) cycle: u64,
    pub(crate) sent_at: Instant,
    pub(crate) answered: bool,
}

/// The connected client: `stream` writes the sensor maps and closes the connection.
#[derive(Clone)]
pub(crate) struct Connection {
    pub(crate) id: u64,
    pub(crate) stream: Arc<UnixStream>,
}

pub(crate) struct State {
    pub(crate) stats: Stats,
    pub(crate) connection: Option<Connection>,
    pub(crate) latest: Option<SentMap>,
    /// The last commands: each key as the last answer that held it said.
    pub(crate) kept: ActuatorMap,
    pub(crate) script: ScriptedSensors,
    pub(crate) body: RobotBody,
    pub(crate) sensors: SensorMap,
    pub(crate) answers: VecDeque<Answer>,
    pub(crate) last_answer: Option<Answer>,
    pub(crate) stall_until: Option<Instant>,
    /// The next `count` sensor maps go out `delay` after their deadline.
    pub(crate) late_maps: (Duration, u32),
    /// Raised by a restart: the listener of an older generation stops.
    pub(crate) generation: u64,
    pub(crate) stopping: bool,
}

pub(crate) struct Shared {
    pub(crate) options: Options,
    pub(crate) state: Mutex<State>,
    /// Notified on every change: a map sent, an answer, a connection, a control.
    pub(crate) changed: Condvar,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not hide the simulator's state from the others.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wait on `changed` until `done` holds or `timeout` passes; the state it held.
    pub(crate) fn wait_for<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        timeout: Duration,
        mut done: impl FnMut(&State) -> bool,
    ) -> (MutexGuard<'a, State>, bool) {
        let end = Instant::now() + timeout;
        loop {
            if done(&state) {
                return (state, true);
            }
            let now = Instant::now();
            if now >= end || state.stopping {
                return (state, false);
            }
            state = match self.changed.wait_timeout(state, end - now) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

impl State {
    /// Count and keep an actuator map decoded from the client, as the answer to the latest
    /// sensor map (a client cannot say which it answers).
    pub(crate) fn record_answer(
        &mut self,
        map: ActuatorMap,
        decoded: Decoded<ActuatorKeys>,
        options: &Options,
    ) {
        let now = Instant::now();
        self.kept = map;
        self.stats.answers += 1;
        self.stats.unknown_keys += u64::from(decoded.unknown_keys);
        let (cycle, late, double) = match &mut self.latest {
            Some(latest) if !latest.answered => {
                latest.answered = true;
                (latest.cycle, now.duration_since(latest.sent_at) > options.late_after, false)
            }
            Some(latest) => (latest.cycle, false, true),
            None => (0, false, true),
        };
        self.stats.late += u64::from(late);
        self.stats.double += u64::from(double);
        let answer = Answer { cycle, map, keys: decoded.present, late, double };
        if options.recorded_answers > 0 {
            if self.answers.len() == options.recorded_answers {
                self.answers.pop_front();
            }
            self.answers.push_back(answer);
        }
        self.last_answer = Some(answer);
    }

    /// Forget the client `id` (its connection ended or was closed).
    pub(crate) fn drop_connection(&mut self, id: u64) {
        if let Some(connection) = self.connection.take_if(|connection| connection.id == id) {
            let _ = connection.stream.shutdown(std::net::Shutdown::Both);
            self.latest = None;
            self.stats.connected = false;
        }
    }
}
