//! [`LolaSim`]: a running simulator and everything a test or a tool does with it.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use naobroker_lola::{encode_sensor_map, ActuatorMap, SensorMap, SENSOR_MAP_BYTES};
use naobroker_physics::Truth;
use naobroker_robot::device::DeviceModel;

use crate::body::RobotBody;
use crate::cycle::{run_cycle, spawn_real_time, CycleOutcome};
use crate::error::SimError;
use crate::options::{Cadence, Options};
use crate::script::ScriptedSensors;
use crate::server::{bind, spawn_acceptor};
use crate::state::{Answer, Shared, State, Stats};

/// A simulated NAO serving LoLA on a Unix socket. Dropping it stops its threads, closes the
/// client's connection and removes the socket file.
pub struct LolaSim {
    shared: Arc<Shared>,
    acceptor: Mutex<Option<JoinHandle<()>>>,
    cycler: Option<JoinHandle<()>>,
}

impl LolaSim {
    /// Listen on `options.socket` and, in a real-time cadence, start sending sensor maps
    /// (to the client once one connects).
    pub fn start(options: Options) -> Result<LolaSim, SimError> {
        let model = DeviceModel::new(options.robot.clone())?;
        let body = RobotBody::new(&options, &model)?;
        let script = ScriptedSensors::at_rest(&model, options.battery_order);
        let listener = bind(&options.socket)?;
        let state = State::new(&options, body, script);
        let cadence = options.cadence;
        let shared = Arc::new(Shared { options, state: Mutex::new(state), changed: Condvar::new() });
        let mut sim = LolaSim { shared: Arc::clone(&shared), acceptor: Mutex::new(None), cycler: None };
        *sim.acceptor.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()) =
            Some(spawn_acceptor(Arc::clone(&shared), listener, 0)?);
        if cadence != Cadence::Stepped {
            sim.cycler = Some(spawn_real_time(shared)?);
        }
        tracing::info!(socket = %sim.socket().display(), ?cadence, "lolasim: listening");
        Ok(sim)
    }

    pub fn socket(&self) -> &Path {
        &self.shared.options.socket
    }

    pub fn stats(&self) -> Stats {
        self.shared.lock().stats
    }

    /// Wait until `condition` holds for the counts (or `timeout` passes): the counts then.
    pub fn wait_until(&self, timeout: Duration, mut condition: impl FnMut(&Stats) -> bool) -> Option<Stats> {
        let (state, met) = self.shared.wait_for(self.shared.lock(), timeout, |state| condition(&state.stats));
        met.then_some(state.stats)
    }

    /// Wait until a client is connected.
    pub fn wait_for_client(&self, timeout: Duration) -> Result<(), SimError> {
        self.wait_until(timeout, |stats| stats.connected).map(|_| ()).ok_or(SimError::NoClient(timeout))
    }

    /// Stepped cadence: run one cycle and send its sensor map; its cycle number. Refused
    /// without a client (nothing moves then).
    pub fn step(&self) -> Result<u64, SimError> {
        if self.shared.options.cadence != Cadence::Stepped {
            return Err(SimError::NotStepped);
        }
        match run_cycle(&self.shared, true)? {
            CycleOutcome::Sent(cycle) => Ok(cycle),
            CycleOutcome::NoClient | CycleOutcome::Stalled => Err(SimError::NoClient(Duration::ZERO)),
        }
    }

    /// Wait for the answer to the sensor map sent last.
    pub fn wait_answer(&self, timeout: Duration) -> Result<Answer, SimError> {
        let (state, answered) = self.shared.wait_for(self.shared.lock(), timeout, |state| {
            state.latest.is_some_and(|latest| latest.answered)
        });
        match (answered, state.last_answer) {
            (true, Some(answer)) => Ok(answer),
            _ => Err(SimError::NoAnswer(timeout)),
        }
    }

    /// [`LolaSim::step`], then [`LolaSim::wait_answer`].
    pub fn step_and_answer(&self, timeout: Duration) -> Result<Answer, SimError> {
        self.step()?;
        self.wait_answer(timeout)
    }

    /// Change the scripted sensors; refused (and nothing changed) when a real robot's
    /// sensor map could not carry them (ids of 20 bytes, versions of 5, Status 0..=127).
    /// With the physical robot, what its body senses (inertial unit, FSRs) cannot be scripted.
    pub fn script(&self, change: impl FnOnce(&mut ScriptedSensors)) -> Result<(), SimError> {
        let mut state = self.shared.lock();
        let mut script = state.script;
        change(&mut script);
        if state.body.is_physical() {
            let before = &state.script;
            let sensed: [(&'static str, bool); 4] = [
                ("Accelerometer", script.accelerometer != before.accelerometer),
                ("Gyroscope", script.gyroscope != before.gyroscope),
                ("Angles", script.angles != before.angles),
                ("FSR", script.fsr != before.fsr),
            ];
            if let Some((key, _)) = sensed.iter().find(|(_, changed)| *changed) {
                return Err(SimError::SensedByPhysics(key));
            }
        }
        let check =
            SensorMap { status: script.status, robot_config: script.robot_config, ..SensorMap::default() };
        encode_sensor_map(&check, &mut [0u8; SENSOR_MAP_BYTES])?;
        state.script = script;
        Ok(())
    }

    /// [`ScriptedSensors::assign`] on the scripted sensors (`Touch[1]=1`).
    pub fn assign(&self, assignment: &str) -> Result<(), SimError> {
        let mut script = self.scripted();
        script.assign(assignment)?;
        self.script(|scripted| *scripted = script)
    }

    pub fn scripted(&self) -> ScriptedSensors {
        self.shared.lock().script
    }

    /// Ground truth of the physical robot (refused on the kinematic one): where it is, its
    /// centre of mass, whether it has fallen. For tests and tools: the robot senses nothing
    /// of it.
    pub fn truth(&self) -> Result<Truth, SimError> {
        self.shared.lock().body.truth()
    }

    /// Push the physical robot's torso with `force` (N, world frame) for `duration` of
    /// simulated time (refused on the kinematic one).
    pub fn push(&self, force: [f64; 3], duration: Duration) -> Result<(), SimError> {
        self.shared.lock().body.push(force, duration.as_secs_f64())
    }

    /// Real-time cadences: send no sensor map for `duration` (the body keeps moving).
    pub fn stall(&self, duration: Duration) {
        self.shared.lock().stall_until = Some(Instant::now() + duration);
        self.shared.changed.notify_all();
    }

    /// Real-time cadences: send each of the next `count` sensor maps `delay` after its
    /// deadline (the deadlines after stay where they were).
    pub fn delay_maps(&self, delay: Duration, count: u32) {
        self.shared.lock().late_maps = (delay, count);
    }

    /// Restart as LoLA does: close the socket and the client's connection, stay away for
    /// `down`, then listen again on the same path. The socket closes first, as when LoLA's
    /// process ends: a client reconnecting at once finds nobody listening, rather than a
    /// connection the old listener closes unserved.
    pub fn restart(&self, down: Duration) -> Result<(), SimError> {
        let generation = {
            let mut state = self.shared.lock();
            state.generation += 1;
            state.stats.restarts += 1;
            self.shared.changed.notify_all();
            state.generation
        };
        let mut acceptor = self.acceptor.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(old) = acceptor.take() {
            let _ = old.join();
        }
        let _ = std::fs::remove_file(self.socket());
        {
            let mut state = self.shared.lock();
            if let Some(id) = state.connection.as_ref().map(|connection| connection.id) {
                state.drop_connection(id);
            }
            self.shared.changed.notify_all();
        }
        tracing::info!(?down, "lolasim: restarting");
        std::thread::sleep(down);
        let listener = bind(self.socket())?;
        *acceptor = Some(spawn_acceptor(Arc::clone(&self.shared), listener, generation)?);
        tracing::info!(socket = %self.socket().display(), "lolasim: listening again");
        Ok(())
    }

    /// The commands kept: each key as the last answer that held it said.
    pub fn last_actuators(&self) -> ActuatorMap {
        self.shared.lock().kept
    }

    /// The sensor map sent last.
    pub fn last_sensors(&self) -> SensorMap {
        self.shared.lock().sensors
    }

    pub fn last_answer(&self) -> Option<Answer> {
        self.shared.lock().last_answer
    }

    /// The answers recorded since the last call, oldest first (at most
    /// `Options::recorded_answers`).
    pub fn take_answers(&self) -> Vec<Answer> {
        self.shared.lock().answers.drain(..).collect()
    }

    /// How long after its sensor map each answer came, since the last call, oldest first
    /// (at most `Options::recorded_latencies`; none when that is 0). Measured on
    /// CLOCK_MONOTONIC from just before the map's write to the return of the read that
    /// completed its answer; only first answers count (a double answer has none).
    pub fn take_latencies(&self) -> Vec<Duration> {
        // Allocated before the lock: the simulator's threads wait on it.
        let mut taken = Vec::with_capacity(self.shared.options.recorded_latencies);
        taken.extend(self.shared.lock().latencies.drain(..));
        taken
    }
}

impl Drop for LolaSim {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.stopping = true;
            if let Some(id) = state.connection.as_ref().map(|connection| connection.id) {
                state.drop_connection(id);
            }
            self.shared.changed.notify_all();
        }
        let acceptor = self.acceptor.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        for thread in [acceptor, self.cycler.take()].into_iter().flatten() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(self.socket());
    }
}
