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

impl Stats {
    /// What happened since `before` (counts taken earlier from the same simulator): every
    /// count's difference; `connected` as it is now.
    pub fn since(&self, before: &Stats) -> Stats {
        Stats {
            cycles: self.cycles - before.cycles,
            sent: self.sent - before.sent,
            answers: self.answers - before.answers,
            missing: self.missing - before.missing,
            late: self.late - before.late,
            double: self.double - before.double,
            malformed: self.malformed - before.malformed,
            unknown_keys: self.unknown_keys - before.unknown_keys,
            stalled_cycles: self.stalled_cycles - before.stalled_cycles,
            delayed_cycles: self.delayed_cycles - before.delayed_cycles,
            connections: self.connections - before.connections,
            refused: self.refused - before.refused,
            restarts: self.restarts - before.restarts,
            connected: self.connected,
        }
    }
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
    /// How long after its sensor map each first answer came (room reserved at start).
    pub(crate) latencies: VecDeque<Duration>,
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
    /// Nothing sent or received yet; the queues' room reserved for the whole run.
    pub(crate) fn new(options: &Options, body: RobotBody, script: ScriptedSensors) -> State {
        State {
            stats: Stats::default(),
            connection: None,
            latest: None,
            kept: ActuatorMap::default(),
            script,
            body,
            sensors: SensorMap::default(),
            answers: VecDeque::with_capacity(options.recorded_answers),
            latencies: VecDeque::with_capacity(options.recorded_latencies),
            last_answer: None,
            stall_until: None,
            late_maps: (Duration::ZERO, 0),
            generation: 0,
            stopping: false,
        }
    }

    /// Count and keep an actuator map decoded from the client, as the answer to the latest
    /// sensor map (a client cannot say which it answers); `received_at` is when the read
    /// that completed it returned. Allocates nothing: the queues have their room reserved.
    pub(crate) fn record_answer(
        &mut self,
        map: ActuatorMap,
        decoded: Decoded<ActuatorKeys>,
        received_at: Instant,
        options: &Options,
    ) {
        self.kept = map;
        self.stats.answers += 1;
        self.stats.unknown_keys += u64::from(decoded.unknown_keys);
        let (cycle, latency, double) = match &mut self.latest {
            Some(latest) if !latest.answered => {
                latest.answered = true;
                (latest.cycle, Some(received_at.saturating_duration_since(latest.sent_at)), false)
            }
            Some(latest) => (latest.cycle, None, true),
            None => (0, None, true),
        };
        let late = latency.is_some_and(|latency| latency > options.late_after);
        self.stats.late += u64::from(late);
        self.stats.double += u64::from(double);
        if let (Some(latency), true) = (latency, options.recorded_latencies > 0) {
            if self.latencies.len() == options.recorded_latencies {
                self.latencies.pop_front();
            }
            self.latencies.push_back(latency);
        }
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

#[cfg(test)]
mod tests {
    use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
    use naobroker_lola::{ActuatorKeys, ActuatorMap, Decoded};
    use naobroker_robot::device::DeviceModel;

    use super::*;

    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    #[test]
    fn recording_answers_and_their_latencies_allocates_nothing() {
        assert!(allocations_seen_on_a_new_thread() > 0, "the counting allocator is installed");
        let options = Options { recorded_answers: 4, recorded_latencies: 4, ..Options::default() };
        let model = DeviceModel::new(options.robot.clone()).unwrap();
        let body = RobotBody::new(&options, &model).unwrap();
        let mut state = State::new(&options, body, ScriptedSensors::at_rest(&model, options.battery_order));
        let decoded = Decoded { consumed: 786, present: ActuatorKeys::ALL, unknown_keys: 0 };
        start_counting();
        for cycle in 1..=10 {
            let sent_at = Instant::now();
            state.latest = Some(SentMap { cycle, sent_at, answered: false });
            state.record_answer(
                ActuatorMap::default(),
                decoded,
                sent_at + Duration::from_micros(cycle),
                &options,
            );
            state.record_answer(ActuatorMap::default(), decoded, Instant::now(), &options);
        }
        assert_eq!(counted(), 0, "past their room, the oldest answers and latencies make way");
        assert_eq!((state.stats.answers, state.stats.double), (20, 10));
        let kept: Vec<u64> = state.latencies.iter().map(|latency| latency.as_micros() as u64).collect();
        assert_eq!(kept, [7, 8, 9, 10], "the first answer of each map, the newest kept");
    }

    #[test]
    fn counts_since_earlier_counts_are_the_differences() {
        let before = Stats {
            sent: 10,
            answers: 9,
            missing: 1,
            late: 2,
            double: 3,
            connected: true,
            ..Stats::default()
        };
        let after =
            Stats { sent: 25, answers: 22, missing: 2, late: 2, double: 5, connected: false, ..before };
        let since = after.since(&before);
        assert_eq!((since.sent, since.answers, since.missing, since.late, since.double), (15, 13, 1, 0, 2));
        assert_eq!((since.cycles, since.connections, since.connected), (0, 0, false));
    }
}
