//! The motion engine: tasks turn into timed DCM commands, once per motion cycle.
//! It is pure (no thread, no clock): the motion thread drives it, tests too.

use std::sync::Arc;

use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::time::DcmTime;
use naobroker_rtslots::{FastAccess, NotRealTimeKey, RtSlots};

use crate::body::Body;
use crate::collision::ArmJoints;
use crate::fall::{self, Direction, FallDetector, FallManagerConfig, FallStep, Posture};
use crate::reflexes::Switches;
use crate::self_collision::{Arm, CollisionLevels};
use crate::trajectory::Track;

pub mod breath;
mod cartesian_steps;
mod obstacles;
mod postponed;
mod reflex_steps;
mod smart_stiffness;
mod tasks;
#[cfg(test)]
pub(crate) mod tests;
pub mod walking;
pub mod whole_body;

/// What a track drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Position,
    Stiffness,
}

#[derive(Debug, Clone)]
pub struct TrackEntry {
    pub motor: usize,
    pub channel: Channel,
    pub track: Track,
    /// Values are relative to the value at start (`angleInterpolation(..., isAbsolute=false)`).
    pub relative: bool,
}

/// A motion task: tracks on some motors, started at the next motion cycle.
#[derive(Debug, Clone)]
pub struct MotionTask {
    pub id: u64,
    pub tracks: Vec<TrackEntry>,
}

impl MotionTask {
    pub fn mask(&self, channel: Channel) -> u64 {
        self.tracks.iter().filter(|t| t.channel == channel).fold(0, |mask, t| mask | 1 << t.motor)
    }
}

/// Commands from ALMotion's API to the engine.
#[derive(Debug)]
pub enum ToEngine {
    /// A reactive call: the task takes its joints from the tasks using them, at once.
    Start(Box<MotionTask>),
    /// A blocking call: the task waits until no running task uses its joints (NAOqi's
    /// "postponed until the resource is freed"); see `engine/postponed.rs`.
    StartWhenFree(Box<MotionTask>),
    Kill(u64),
    KillAll,
    /// Kill every task using one of these motors.
    KillMotors(u64),
    /// Walk: this move replaces the one under way.
    Move(walking::MoveOrder),
    /// End the walk once the feet are side by side again.
    StopMove,
    /// End the walk at once.
    KillMove,
    /// Whether the walk swings each arm (left, right) that no task holds.
    MoveArms([bool; 2]),
    /// Breath on (`true`) or off on these motors.
    Breath {
        motors: u64,
        on: bool,
    },
    /// The breath's rate (breaths per minute) and amplitude, checked by the API.
    BreathConfig {
        bpm: f64,
        amplitude: f64,
    },
    /// Plan a footstep after those planned (`clear`: instead of them); a move with
    /// [`walking::Goal::FootSteps`] walks them.
    PlanFootStep {
        step: naobroker_walk::FootStep,
        clear: bool,
    },
    /// The whole body: its settings, paths and `wbGoToBalance`.
    WholeBody(whole_body::Order),
}

/// What the motion thread reports, in cycle order: `PreProcess`, then what the cycle did,
/// then `Cycle` (its postProcess).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromEngine {
    /// A cycle starts: its sensors are not read yet.
    PreProcess { cycle: u64, time: DcmTime },
    /// The task ended: completed (`true`) or killed/replaced (`false`).
    Finished { id: u64, completed: bool },
    /// The fall manager saw a fall: tasks killed, protective posture under way.
    Falling { time: DcmTime, direction: Direction },
    /// The fall is over: every stiffness was sent off and the body came to rest (or the
    /// fall manager stopped waiting for it to).
    Fallen { time: DcmTime },
    /// The robot is upright: the fall manager is armed.
    Upright,
    /// A move ended.
    MoveEnded { id: u64, outcome: walking::MoveOutcome },
    /// The cycle's intentions went to the DCM.
    Cycle { cycle: u64, time: DcmTime },
}

/// What the engine hands out: its reports in cycle order, and the tasks it is done with,
/// whole, for the API side to free (the motion thread never frees).
#[derive(Debug, Default)]
pub struct EngineOutput {
    pub reports: Vec<FromEngine>,
    pub retired: Vec<Box<MotionTask>>,
}

impl EngineOutput {
    /// Room for `capacity` reports and as many tasks ([`Engine::max_reports`]): filled and
    /// emptied every cycle, it never grows.
    pub fn with_capacity(capacity: usize) -> EngineOutput {
        EngineOutput { reports: Vec::with_capacity(capacity), retired: Vec::with_capacity(capacity) }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MotorState {
    position: f64,
    stiffness: f64,
    sent_position: Option<f64>,
    sent_stiffness: Option<f64>,
    idle_cycles: u32,
    smart_lowered: bool,
    /// Stiffness driven by someone else through the DCM: smart stiffness stays away.
    external_stiffness: bool,
}

/// Blocking calls' tasks that may wait for their joints at once: ALMotion's API refuses
/// one more (`module/client.rs`), so the engine's room for them never runs out.
pub const POSTPONED_TASKS: usize = 64;

/// Differences smaller than the DCM's rounding are not someone else's commands.
const SAME_VALUE: f64 = 1e-3;

/// `value`, at most `step` away from `from`. `f64::clamp` panics on a bound that is not a
/// number, and the motion thread must never panic: a `value` that is not a finite number
/// keeps `from`, and a `from` that is not one takes `value`.
fn limit_step(from: f64, value: f64, step: f64) -> f64 {
    match (from.is_finite(), value.is_finite()) {
        (_, false) => from,
        (false, true) => value,
        (true, true) => value.max(from - step).min(from + step),
    }
}

/// A `Toward` track is done on its target, the others at their last key.
fn arrived(track: &Track, value: f64, min: f64, max: f64, elapsed: f64) -> bool {
    match track {
        Track::Toward { target, .. } => (value - target.clamp(min, max)).abs() < 1e-9,
        track => elapsed >= track.duration(),
    }
}

pub struct Engine {
    body: Arc<Body>,
    period_ms: i32,
    /// Room for every task that can run at once, reserved at start: [`Engine::command`].
    running: Vec<tasks::Running>,
    /// Blocking calls' tasks waiting for their joints, in the order they came; room for
    /// [`POSTPONED_TASKS`], reserved at start. Boxed: each task's allocation comes from the
    /// API and goes back to it whole, to be freed there, never on the motion thread.
    #[allow(clippy::vec_box)]
    postponed: Vec<Box<MotionTask>>,
    motors: Vec<MotorState>,
    /// Per motor: its `[position, stiffness]` when the task driving it started (one task
    /// drives a motor's channel at a time).
    task_start: Vec<[f64; 2]>,
    switches: Arc<Switches>,
    actuators: FastAccess,
    currents: FastAccess,
    /// Each motor's position sensor, read once a cycle: the sensed pose of the Cartesian
    /// data, and where a limp joint is held when stiffened.
    position_sensors: FastAccess,
    sensed: Vec<f64>,
    /// Values read each cycle: positions then stiffnesses as the DCM sends them.
    read: Vec<f64>,
    currents_read: Vec<f64>,
    /// AngleX, AngleY, when the robot has an inertial unit.
    angles: Option<FastAccess>,
    /// GyroscopeX, Y, Z, when the robot has them: they tell when a fall is over.
    gyroscope: Option<FastAccess>,
    /// The sonars' distances, when the robot has them: external collision protection.
    sonars: Option<FastAccess>,
    /// The idle breath animation.
    breath: breath::Breath,
    fall: FallDetector,
    protective: Posture,
    arms: [Option<ArmJoints>; 2],
    /// Position commands at the start of the cycle: an arm's last safe pose.
    previous: Vec<f64>,
    collision_stops: u64,
    /// Each arm's `isCollision` level, published every cycle.
    collision_levels: Arc<CollisionLevels>,
    cycle: u64,
    /// Forward kinematics of the sensed and commanded angles, with a kinematic model.
    cartesian: Option<cartesian_steps::CartesianState>,
    /// The walk, for a body with legs and a kinematic model.
    walking: Option<walking::Walking>,
    walk_shared: Arc<walking::WalkShared>,
    /// The whole body, for a body with NAO's legs and a kinematic model.
    whole_body: Option<whole_body::WholeBodyControl>,
}

impl Engine {
    pub fn new(
        body: Arc<Body>,
        slots: &Arc<RtSlots>,
        period_ms: i32,
        fall_config: &FallManagerConfig,
    ) -> Result<Engine, NotRealTimeKey> {
        let mut keys: Vec<&str> = body.motors.iter().map(|m| m.position_key.as_str()).collect();
        keys.extend(body.motors.iter().map(|m| m.stiffness_key.as_str()));
        let actuators = slots.fast_access(&keys)?;
        let current_keys: Vec<&str> = body.motors.iter().map(|m| m.current_key.as_str()).collect();
        let currents = slots.fast_access(&current_keys)?;
        let sensor_keys: Vec<&str> = body.motors.iter().map(|m| m.sensor_key.as_str()).collect();
        let position_sensors = slots.fast_access(&sensor_keys)?;
        let count = body.motors.len();
        let has_angles = fall::ANGLE_KEYS.iter().all(|key| slots.layout().index_of(key).is_some());
        let angles = if has_angles { Some(slots.fast_access(&fall::ANGLE_KEYS)?) } else { None };
        let has_gyroscope = fall::GYROSCOPE_KEYS.iter().all(|key| slots.layout().index_of(key).is_some());
        let gyroscope = if has_gyroscope { Some(slots.fast_access(&fall::GYROSCOPE_KEYS)?) } else { None };
        let arms = Arm::BOTH.map(|arm| ArmJoints::find(&body, arm));
        let switches =
            Arc::new(Switches::new(has_angles, fall_config.enabled, arms.map(|arm| arm.is_some())));
        let cartesian = cartesian_steps::CartesianState::new(&body);
        let walking = walking::Walking::new(&body, slots)?;
        let walk_shared = Arc::new(walking::WalkShared::new(walking.is_some()));
        let whole_body = whole_body::WholeBodyControl::new(&body);
        let breath = breath::Breath::new(&body);
        let mut engine = Engine {
            protective: fall::protective_posture(&body),
            body,
            period_ms,
            // Each running task drives a motor's channel no other task drives, and a task
            // just started may drive none until the next reap.
            running: Vec::with_capacity(2 * count + 1),
            postponed: Vec::with_capacity(POSTPONED_TASKS),
            motors: vec![MotorState::default(); count],
            task_start: vec![[0.0; 2]; count],
            fall: FallDetector::new(fall_config.tilt_rad, period_ms, switches.fall_manager()),
            switches,
            read: vec![0.0; 2 * count],
            currents_read: vec![0.0; count],
            actuators,
            currents,
            position_sensors,
            sensed: vec![0.0; count],
            angles,
            gyroscope,
            sonars: obstacles::sonars(slots)?,
            breath,
            arms,
            previous: vec![0.0; count],
            collision_stops: 0,
            collision_levels: Arc::default(),
            cycle: 0,
            cartesian,
            walking,
            walk_shared,
            whole_body,
        };
        engine.actuators.read(&mut engine.read);
        engine.position_sensors.read(&mut engine.sensed);
        for (index, motor) in engine.motors.iter_mut().enumerate() {
            motor.position = engine.read[index];
            motor.stiffness = engine.read[count + index];
        }
        engine.update_cartesian();
        engine.update_commanded_pose();
        Ok(engine)
    }

    /// How many motors it drives.
    pub fn motors(&self) -> usize {
        self.motors.len()
    }

    pub fn position(&self, motor: usize) -> f64 {
        self.motors[motor].position
    }

    pub fn stiffness(&self, motor: usize) -> f64 {
        self.motors[motor].stiffness
    }

    /// The stiffness ALMotion commands: smart stiffness's lowered value while it holds
    /// the joint lower than its nominal stiffness.
    pub fn commanded_stiffness(&self, motor: usize) -> f64 {
        let state = &self.motors[motor];
        match state.sent_stiffness {
            Some(sent) if state.smart_lowered => sent,
            _ => state.stiffness,
        }
    }

    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// What the API reads of the walk.
    pub fn walk_shared(&self) -> &Arc<walking::WalkShared> {
        &self.walk_shared
    }

    /// The most reports one cycle makes after its `PreProcess`, with `commands` taken in:
    /// each running task ends at most once (those running before, at most one per motor and
    /// channel, since a new task takes its joints from the others, and those started by
    /// the commands), plus the fall manager's report and `Cycle`, and the move that ends in
    /// the cycle, and every postponed task. As many tasks are handed back, at most.
    pub fn max_reports(&self, commands: usize) -> usize {
        2 * self.motors.len() + commands + POSTPONED_TASKS + 3 + whole_body::MAX_REPORTS
    }

    /// Motion cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    /// Each arm's `isCollision` level, as the last cycle left it.
    pub fn collision_levels(&self) -> &Arc<CollisionLevels> {
        &self.collision_levels
    }

    /// Motion cycles in which an arm was held at its last safe pose.
    pub fn collision_stops(&self) -> u64 {
        self.collision_stops
    }

    /// One motion cycle at DCM time `now`: intentions for `now + period` go into `request`.
    pub fn cycle(&mut self, now: DcmTime, request: &mut Request, output: &mut EngineOutput) {
        self.cycle += 1;
        let target_time = now.wrapping_add(self.period_ms);
        let dt = f64::from(self.period_ms) / 1000.0;
        self.actuators.read(&mut self.read);
        self.currents.read(&mut self.currents_read);
        self.follow_the_dcm();
        self.position_sensors.read(&mut self.sensed);
        self.previous.iter_mut().zip(&self.motors).for_each(|(previous, state)| *previous = state.position);
        self.update_cartesian();
        let mut positions_sent = 0u64;
        let mut stiffness_sent = 0u64;
        match self.fall_step() {
            FallStep::Started(direction) => {
                self.kill_all(output);
                self.kill_move(walking::MoveOutcome::Fell, output);
                output.reports.push(FromEngine::Falling { time: now, direction });
                positions_sent |= self.drive_protective_posture(direction, dt);
            }
            FallStep::Protecting(direction) => positions_sent |= self.drive_protective_posture(direction, dt),
            FallStep::StiffnessOff { fallen } => {
                stiffness_sent = self.all_stiffness_off(target_time, request);
                if fallen {
                    output.reports.push(FromEngine::Fallen { time: now });
                }
            }
            FallStep::Fallen => output.reports.push(FromEngine::Fallen { time: now }),
            FallStep::Upright => output.reports.push(FromEngine::Upright),
            FallStep::Settling | FallStep::Idle => {}
        }
        self.start_postponed(output);
        let (positions, stiffness) = self.run_tasks(now, target_time, request, output);
        positions_sent |= positions;
        stiffness_sent |= stiffness;
        positions_sent |= self.whole_body_step(dt, output);
        self.stop_before_obstacles(output);
        positions_sent |= self.walk_step(dt, output);
        let taken = positions_sent | self.position_owners(self.breath.motors());
        positions_sent |= self.breathe(dt, taken);
        self.update_commanded_pose();
        self.hold_arms_out_of_the_body(positions_sent);
        for motor in 0..self.motors.len() {
            if positions_sent & (1 << motor) != 0 {
                let command = TimedCommand { time: target_time, value: self.motors[motor].position };
                request.push_command(
                    self.body.motors[motor].position_actuator,
                    UpdateType::ClearAll,
                    command,
                );
            }
        }
        self.hold_where_stiffened(stiffness_sent, positions_sent, now, request);
        self.smart_stiffness_step(positions_sent, stiffness_sent, target_time, request);
        output.reports.push(FromEngine::Cycle { cycle: self.cycle, time: now });
    }

    /// Joints ALMotion stiffens this cycle while the DCM still has them limp, whose position
    /// no task sends: the command model takes their sensed angle, and it goes to the DCM at
    /// once (merged: commands of others for later stay), before the stiffness rises, so that
    /// waking a limp robot holds the pose it was left in instead of jumping to the last
    /// angles the DCM was sent (0 after start-up).
    fn hold_where_stiffened(
        &mut self,
        stiffened: u64,
        positions_sent: u64,
        now: DcmTime,
        request: &mut Request,
    ) {
        let count = self.motors.len();
        for motor in 0..count {
            let bit = 1 << motor;
            if stiffened & bit != 0 && positions_sent & bit == 0 && self.read[count + motor] == 0.0 {
                let state = &mut self.motors[motor];
                state.position = self.sensed[motor];
                state.sent_position = Some(state.position);
                let command = TimedCommand { time: now, value: state.position };
                request.push_command(self.body.motors[motor].position_actuator, UpdateType::Merge, command);
            }
        }
    }

    /// Refresh the command model from what the DCM actually sends: a joint someone else
    /// drove through the DCM resumes from there, without a jump.
    fn follow_the_dcm(&mut self) {
        let count = self.motors.len();
        let walked =
            self.walking.as_ref().filter(|walking| walking.is_active()).map_or(0, |w| w.leg_motors())
                | self.whole_body_motors();
        for motor in 0..count {
            let (dcm_position, dcm_stiffness) = (self.read[motor], self.read[count + motor]);
            if self.owner(motor, Channel::Position).is_none() && walked & (1 << motor) == 0 {
                let state = &mut self.motors[motor];
                if state.sent_position.is_none_or(|sent| (sent - dcm_position).abs() > SAME_VALUE) {
                    state.position = dcm_position;
                    state.sent_position = None;
                }
            }
            if self.owner(motor, Channel::Stiffness).is_none() {
                let state = &mut self.motors[motor];
                if let Some(sent) = state.sent_stiffness {
                    if (sent - dcm_stiffness).abs() > SAME_VALUE {
                        state.external_stiffness = true;
                        state.smart_lowered = false;
                        state.stiffness = dcm_stiffness;
                        state.sent_stiffness = None;
                    }
                } else if !state.smart_lowered {
                    state.stiffness = dcm_stiffness;
                }
            }
        }
    }
}
