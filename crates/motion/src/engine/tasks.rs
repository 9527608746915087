//! The engine's tasks: commands from the API (start, kill), each running task's tracks turned
//! into this cycle's values, and the tasks that end handed back whole for the API side to
//! free: nothing is allocated or freed here.

use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::time::DcmTime;

use super::walking::MoveOutcome;
use super::{
    arrived, limit_step, postponed, Channel, Engine, EngineOutput, FromEngine, MotionTask, ToEngine,
    TrackEntry,
};

/// A task the engine runs.
pub(super) struct Running {
    task: Box<MotionTask>,
    started_at: Option<DcmTime>,
    /// `task.tracks[..live]` still run, in their order; those after were taken by a newer
    /// task or killed, and stay in the task until the API side frees it.
    live: usize,
    /// A blocking call's: later blocking calls on its joints wait for it (`postponed.rs`).
    blocking: bool,
}

impl Running {
    fn tracks(&self) -> &[TrackEntry] {
        &self.task.tracks[..self.live]
    }

    /// Stop the tracks `stopped` picks; the others keep their order.
    fn stop_tracks(&mut self, stopped: impl Fn(&TrackEntry) -> bool) {
        let mut kept = 0;
        for index in 0..self.live {
            if !stopped(&self.task.tracks[index]) {
                self.task.tracks.swap(kept, index);
                kept += 1;
            }
        }
        self.live = kept;
    }

    fn stop(&mut self) {
        self.live = 0;
    }
}

/// The value a track of `channel` drives, in a motor's `[position, stiffness]`.
fn slot(channel: Channel) -> usize {
    match channel {
        Channel::Position => 0,
        Channel::Stiffness => 1,
    }
}

impl Engine {
    /// Whether the running task at `index` is a blocking call's.
    pub(super) fn is_blocking(&self, index: usize) -> bool {
        self.running[index].blocking
    }

    /// The running task driving `motor`'s `channel`, if any.
    pub(super) fn owner(&self, motor: usize, channel: Channel) -> Option<usize> {
        self.running.iter().position(|r| r.tracks().iter().any(|t| t.motor == motor && t.channel == channel))
    }

    /// Apply a command from the API; the tasks it ends go into `output`.
    pub fn command(&mut self, command: ToEngine, output: &mut EngineOutput) {
        match command {
            ToEngine::Start(task) | ToEngine::StartWhenFree(task) if self.fall.under_way() => {
                // The fall manager has priority over every task until the fall is over.
                output.reports.push(FromEngine::Finished { id: task.id, completed: false });
                output.retired.push(task);
            }
            ToEngine::Start(task) => self.start_task(task, false, output),
            ToEngine::StartWhenFree(task) => self.start_when_free(task, output),
            ToEngine::Kill(id) => {
                self.whole_body_kill(Some(id), output);
                self.end_postponed(|task| task.id == id, output);
                self.running.iter_mut().filter(|r| r.task.id == id).for_each(Running::stop);
                self.reap(output, false);
            }
            ToEngine::KillAll => {
                self.kill_all(output);
                self.kill_move(MoveOutcome::Killed, output);
            }
            ToEngine::KillMotors(mask) => {
                self.end_postponed(|task| postponed::uses(task, mask), output);
                self.walk_yields_to(mask, output);
                if mask & self.whole_body.as_ref().map_or(0, |control| control.leg_motors()) != 0 {
                    self.whole_body_kill(None, output);
                }
                for running in &mut self.running {
                    if running.tracks().iter().any(|t| mask & (1 << t.motor) != 0) {
                        running.stop();
                    }
                }
                self.reap(output, false);
            }
            ToEngine::Move(order) => self.start_move(order, output),
            ToEngine::StopMove => self.stop_move(),
            ToEngine::KillMove => self.kill_move(MoveOutcome::Killed, output),
            ToEngine::MoveArms(enabled) => self.set_move_arms(enabled),
            ToEngine::PlanFootStep { step, clear } => self.plan_footstep(step, clear),
            ToEngine::WholeBody(order) => self.whole_body_order(order, output),
            ToEngine::Breath { motors, on } => self.breath.enable(motors, on),
            ToEngine::BreathConfig { bpm, amplitude } => self.breath.configure(bpm, amplitude),
        }
    }

    /// Start `task` now (a blocking call's, or a reactive one's): it takes its resources from
    /// the tasks using them.
    pub(super) fn start_task(&mut self, task: Box<MotionTask>, blocking: bool, output: &mut EngineOutput) {
        let (positions, stiffnesses) = (task.mask(Channel::Position), task.mask(Channel::Stiffness));
        self.walk_yields_to(positions, output);
        for running in &mut self.running {
            running.stop_tracks(|t| {
                let mask = if t.channel == Channel::Position { positions } else { stiffnesses };
                mask & (1 << t.motor) != 0
            });
        }
        self.reap(output, false);
        let live = task.tracks.len();
        self.running.push(Running { task, started_at: None, live, blocking });
    }

    /// Tasks give up the positions of `motors` (a walk takes the legs); their other tracks go on.
    pub(super) fn release_positions(&mut self, motors: u64, output: &mut EngineOutput) {
        for running in &mut self.running {
            running.stop_tracks(|t| t.channel == Channel::Position && motors & (1 << t.motor) != 0);
        }
        self.reap(output, false);
    }

    pub(super) fn kill_all(&mut self, output: &mut EngineOutput) {
        self.whole_body_kill(None, output);
        self.end_postponed(|_| true, output);
        self.running.iter_mut().for_each(Running::stop);
        self.reap(output, false);
    }

    /// Hand the tasks without a live track back, in their order.
    fn reap(&mut self, output: &mut EngineOutput, completed: bool) {
        let mut index = 0;
        while index < self.running.len() {
            if self.running[index].live == 0 {
                let ended = self.running.remove(index);
                output.reports.push(FromEngine::Finished { id: ended.task.id, completed });
                output.retired.push(ended.task);
            } else {
                index += 1;
            }
        }
    }

    /// Every running task's values for `target_time`; the tasks that arrive end. Positions
    /// go out after collision protection; stiffness goes into `request` here. Returns the
    /// motors whose `(positions, stiffness)` were driven.
    pub(super) fn run_tasks(
        &mut self,
        now: DcmTime,
        target_time: DcmTime,
        request: &mut Request,
        output: &mut EngineOutput,
    ) -> (u64, u64) {
        let dt = f64::from(self.period_ms) / 1000.0;
        let (mut positions_sent, mut stiffness_sent) = (0u64, 0u64);
        for running in &mut self.running {
            if running.started_at.is_none() {
                let mut delay = 0;
                for track in running.tracks() {
                    let state = &mut self.motors[track.motor];
                    let value = match track.channel {
                        Channel::Position => state.position,
                        Channel::Stiffness => state.stiffness,
                    };
                    self.task_start[track.motor][slot(track.channel)] = value;
                    if track.channel == Channel::Position && state.smart_lowered {
                        // Restore the stiffness first; the motion starts one cycle later.
                        state.smart_lowered = false;
                        let value = state.stiffness;
                        let command = TimedCommand { time: target_time, value };
                        let actuator = self.body.motors[track.motor].stiffness_actuator;
                        request.push_command(actuator, UpdateType::ClearAll, command);
                        state.sent_stiffness = Some(value);
                        stiffness_sent |= 1 << track.motor;
                        delay = self.period_ms;
                    }
                }
                running.started_at = Some(now.wrapping_add(delay));
            }
            let started = running.started_at.unwrap_or(now);
            let elapsed = f64::from(target_time.wrapping_sub(started)) / 1000.0;
            if elapsed <= 0.0 {
                continue;
            }
            let mut all_done = true;
            for entry in running.tracks() {
                let motor = &self.body.motors[entry.motor];
                let state = &mut self.motors[entry.motor];
                let start = self.task_start[entry.motor][slot(entry.channel)];
                let current = match entry.channel {
                    Channel::Position => state.position,
                    Channel::Stiffness => state.stiffness,
                };
                let mut value = entry.track.value(start, current, elapsed, dt);
                if entry.relative {
                    value += start;
                }
                if !value.is_finite() {
                    // Never reaches a clamp (NaN bounds panic) nor the DCM: the joint holds.
                    value = current;
                }
                match entry.channel {
                    Channel::Position => {
                        let step = motor.spec.max_velocity * dt;
                        value = limit_step(state.position, value, step);
                        value = value.max(motor.spec.min).min(motor.spec.max);
                        state.position = value;
                        state.sent_position = Some(value);
                        state.idle_cycles = 0;
                        positions_sent |= 1 << entry.motor;
                        all_done &= arrived(&entry.track, value, motor.spec.min, motor.spec.max, elapsed);
                    }
                    Channel::Stiffness => {
                        value = value.clamp(0.0, 1.0);
                        state.stiffness = value;
                        state.sent_stiffness = Some(value);
                        state.external_stiffness = false;
                        state.smart_lowered = false;
                        stiffness_sent |= 1 << entry.motor;
                        let command = TimedCommand { time: target_time, value };
                        request.push_command(motor.stiffness_actuator, UpdateType::ClearAll, command);
                        all_done &= arrived(&entry.track, value, 0.0, 1.0, elapsed);
                    }
                }
            }
            if all_done {
                running.stop();
            }
        }
        self.reap(output, true);
        (positions_sent, stiffness_sent)
    }
}
