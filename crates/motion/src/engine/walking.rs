//! The walk in the motion cycle: a move (a velocity, or a place to reach) steers
//! naobroker-walk, which reads the feet's pressure sensors and the gyroscope and commands the
//! legs (and swings the arms no task holds) every motion cycle; the move ends when the walk
//! stands again, or at once when killed, when the robot falls, or when a task takes a leg.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_kinematics::transform::wrap_angle;
use naobroker_rtslots::{FastAccess, NotRealTimeKey, RtSlots};
use naobroker_walk::{
    FootStep, LegGeometry, Step, Walk, WalkParameters, WalkSensors, WalkState, LEFT_LEG, RIGHT_LEG,
};

use super::{Engine, EngineOutput, FromEngine};
use crate::body::Body;

/// The feet's pressure sensors the walk reads, left foot then right.
pub const FSR_KEYS: [&str; 8] = [
    "Device/SubDeviceList/LFoot/FSR/FrontLeft/Sensor/Value",
    "Device/SubDeviceList/LFoot/FSR/FrontRight/Sensor/Value",
    "Device/SubDeviceList/LFoot/FSR/RearLeft/Sensor/Value",
    "Device/SubDeviceList/LFoot/FSR/RearRight/Sensor/Value",
    "Device/SubDeviceList/RFoot/FSR/FrontLeft/Sensor/Value",
    "Device/SubDeviceList/RFoot/FSR/FrontRight/Sensor/Value",
    "Device/SubDeviceList/RFoot/FSR/RearLeft/Sensor/Value",
    "Device/SubDeviceList/RFoot/FSR/RearRight/Sensor/Value",
];

/// Within this distance (m) and angle (rad) of its place, a move to a place has arrived.
pub const ARRIVED_M: f64 = 0.01;
pub const ARRIVED_RAD: f64 = 0.03;
/// Feet carrying more than this (kg, all eight FSRs) are on the ground.
const ON_GROUND_KG: f64 = 1.0;
/// Feet off the ground this long (s) while walking: the robot was lifted, not stepping. The
/// physical model's FSRs weigh only what their spheres carry, and a foot turned onto its
/// sole's edge reads nothing: wide, turned footsteps read 0 kg for up to 0.6 s.
const OFF_GROUND_S: f64 = 1.0;
/// A leg whose stiffness falls below this cannot carry a walk.
pub const WALKING_STIFFNESS: f64 = 0.5;

/// What a move asks of the walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// Step at this size every step (forward, left, turn of one step); zero stops.
    Steps(Step),
    /// Walk to this place of FRAME_WORLD as the sensed odometry has it: x, y (m), θ (rad).
    Place([f64; 3]),
    /// Walk the planned footsteps, then stop.
    FootSteps,
}

/// A move from the API: its id, its goal, the walk's limits for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveOrder {
    pub id: u64,
    pub goal: Goal,
    pub limits: MoveLimits,
}

/// What a move config sets of the walk's parameters (the rest stay the walk's own): kept
/// small, since commands to the motion thread travel by value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveLimits {
    pub max_forward_m: f64,
    pub max_backward_m: f64,
    pub max_left_m: f64,
    pub max_turn_rad: f64,
    pub step_period_s: f64,
    pub step_height_m: f64,
    pub torso_roll_rad: f64,
    pub torso_pitch_rad: f64,
}

impl MoveLimits {
    /// The limits `parameters` have.
    pub fn of(parameters: &WalkParameters) -> MoveLimits {
        MoveLimits {
            max_forward_m: parameters.max_forward_m,
            max_backward_m: parameters.max_backward_m,
            max_left_m: parameters.max_left_m,
            max_turn_rad: parameters.max_turn_rad,
            step_period_s: parameters.step_period_s,
            step_height_m: parameters.step_height_m,
            torso_roll_rad: parameters.torso_roll_rad,
            torso_pitch_rad: parameters.torso_pitch_rad,
        }
    }

    /// The walk's own parameters with these limits.
    pub fn parameters(&self) -> WalkParameters {
        WalkParameters {
            max_forward_m: self.max_forward_m,
            max_backward_m: self.max_backward_m,
            max_left_m: self.max_left_m,
            max_turn_rad: self.max_turn_rad,
            step_period_s: self.step_period_s,
            step_height_m: self.step_height_m,
            torso_roll_rad: self.torso_roll_rad,
            torso_pitch_rad: self.torso_pitch_rad,
            ..WalkParameters::default()
        }
    }
}

/// How a move ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveOutcome {
    /// It stopped where it was asked to, or was asked to stop, and stands.
    Arrived,
    /// Another move took its place.
    Replaced,
    /// Killed: `killMove`, `killAll`, or a task that took a leg.
    Killed,
    /// The fall manager stopped it.
    Fell,
    /// A leg lost its stiffness.
    Limp,
    /// The feet left the ground (foot contact protection).
    LeftTheGround,
    /// A sonar saw an obstacle within the security distance (external collision protection).
    Obstacle,
}

/// What the API reads of the walk without asking: whether it moves, the odometry (from the
/// executed steps, and with the gyroscope's heading), the place at the end of the step under
/// way and the velocity. Each value is its own atomic: a reader may see two values of
/// consecutive cycles side by side, a millimetre apart at a walk's speed.
#[derive(Debug, Default)]
pub struct WalkShared {
    /// The robot can walk: it has legs and a kinematic model.
    available: bool,
    active: AtomicBool,
    /// Footsteps planned and not begun.
    planned: AtomicU64,
    /// Odometry x, y, θ; sensed odometry x, y, θ; next place x, y, θ; velocity x, y, θ.
    values: [AtomicU64; 12],
}

impl WalkShared {
    pub(super) fn new(available: bool) -> WalkShared {
        WalkShared { available, ..WalkShared::default() }
    }

    /// The robot has what the walk needs: legs and a kinematic model.
    pub fn available(&self) -> bool {
        self.available
    }

    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Footsteps planned and not begun.
    pub fn planned(&self) -> u64 {
        self.planned.load(Ordering::Acquire)
    }

    fn triple(&self, first: usize) -> [f64; 3] {
        [0, 1, 2].map(|index| f64::from_bits(self.values[first + index].load(Ordering::Acquire)))
    }

    /// FRAME_WORLD's robot: from the executed steps (`use_sensors` false) or with the
    /// gyroscope's heading.
    pub fn position(&self, use_sensors: bool) -> [f64; 3] {
        self.triple(if use_sensors { 3 } else { 0 })
    }

    /// Where the robot will be when the step under way ends.
    pub fn next_position(&self) -> [f64; 3] {
        self.triple(6)
    }

    /// The walk's velocity in FRAME_ROBOT: m/s, m/s, rad/s.
    pub fn velocity(&self) -> [f64; 3] {
        self.triple(9)
    }

    fn store(&self, first: usize, values: [f64; 3]) {
        for (index, value) in values.into_iter().enumerate() {
            self.values[first + index].store(value.to_bits(), Ordering::Release);
        }
    }
}

/// The walk and what it drives, made at start.
pub(super) struct Walking {
    walk: Walk,
    /// Per leg, its joints' motors in [`LEFT_LEG`] order (the right HipYawPitch: none, the
    /// left one's motor moves it).
    legs: [[Option<usize>; 6]; 2],
    leg_motors: u64,
    shoulders: [Option<usize>; 2],
    /// Each shoulder's pitch when the walk started: the swing is about it.
    shoulder_rest: [f64; 2],
    pub(super) arms_enabled: [bool; 2],
    fsr: Option<FastAccess>,
    fsr_read: [f64; 8],
    order: Option<MoveOrder>,
    /// The gyroscope's heading, integrated while the robot moves, and the sensed odometry.
    sensed: [f64; 3],
    /// The feet's sensors have felt the robot's weight: its gyroscope sees its turns, and
    /// foot contact protection can tell a robot lifted up.
    felt_ground: bool,
    /// How long the feet have carried nothing (s).
    off_ground_s: f64,
    last_odometry: [f64; 3],
}

impl Walking {
    /// For a body with legs and a kinematic model; `None` without them.
    pub(super) fn new(body: &Body, slots: &Arc<RtSlots>) -> Result<Option<Walking>, NotRealTimeKey> {
        let Some(kinematics) = &body.kinematics else { return Ok(None) };
        let Ok(geometry) = LegGeometry::from_model(&kinematics.model) else { return Ok(None) };
        let motor = |name: &str| body.joints.iter().find(|joint| joint.name == name).map(|joint| joint.motor);
        let legs = [LEFT_LEG, RIGHT_LEG].map(|names| names.map(motor));
        if legs[0].iter().any(Option::is_none) {
            return Ok(None);
        }
        let legs = [legs[0], [None, legs[1][1], legs[1][2], legs[1][3], legs[1][4], legs[1][5]]];
        let leg_motors = legs.iter().flatten().flatten().fold(0u64, |mask, motor| mask | 1 << motor);
        let has_fsr = FSR_KEYS.iter().all(|key| slots.layout().index_of(key).is_some());
        let fsr = if has_fsr { Some(slots.fast_access(&FSR_KEYS)?) } else { None };
        Ok(Some(Walking {
            walk: Walk::new(geometry, WalkParameters::default()),
            legs,
            leg_motors,
            shoulders: [motor("LShoulderPitch"), motor("RShoulderPitch")],
            shoulder_rest: [0.0; 2],
            arms_enabled: [true; 2],
            fsr,
            fsr_read: [0.0; 8],
            order: None,
            sensed: [0.0; 3],
            felt_ground: false,
            off_ground_s: 0.0,
            last_odometry: [0.0; 3],
        }))
    }

    /// The motors the walk drives while it walks.
    pub(super) fn leg_motors(&self) -> u64 {
        self.leg_motors
    }

    pub(super) fn is_active(&self) -> bool {
        self.walk.state() != WalkState::Idle
    }

    /// The step `goal` asks for now, from where the walk has taken the robot.
    fn wanted_step(&self, goal: Goal) -> Step {
        match goal {
            Goal::Steps(step) => step,
            Goal::FootSteps => Step::ZERO,
            Goal::Place(place) => {
                // Steered by the sensed odometry: the feet slip when they turn, the
                // gyroscope sees it.
                let [forward, left, turn] = relative(self.sensed, place);
                let turn = wrap_angle(turn);
                if forward.hypot(left) < ARRIVED_M && turn.abs() < ARRIVED_RAD {
                    return Step::ZERO;
                }
                // Sideways and turning steps move the body twice per two steps (they open then
                // close): half of what is left, per step.
                Step { forward, left: left / 2.0, turn: turn / 2.0 }
            }
        }
    }

    /// The walk's cycle: the legs' (and free swinging arms') positions into `motors`; the
    /// motors it drove. A move whose walk stands again where it was asked ends here.
    fn drive(
        &mut self,
        dt: f64,
        gyroscope: [f64; 3],
        arm_owners: [bool; 2],
        motors: &mut [super::MotorState],
        body: &Body,
        output: &mut EngineOutput,
    ) -> u64 {
        if !self.is_active() {
            return 0;
        }
        if let Some(order) = self.order {
            self.walk.request(self.wanted_step(order.goal));
        }
        if let Some(fsr) = &self.fsr {
            fsr.read(&mut self.fsr_read);
        }
        let foot = |first: usize| self.fsr_read[first..first + 4].iter().sum::<f64>();
        let sensors = WalkSensors { foot_weight_kg: [foot(0), foot(4)], gyroscope };
        let commanded = *self.walk.cycle(dt, &sensors);
        let mut driven = 0u64;
        for (leg, angles) in self.legs.iter().zip(commanded.legs) {
            for (motor, angle) in leg.iter().zip(angles) {
                let Some(motor) = *motor else { continue };
                let spec = &body.motors[motor].spec;
                let state = &mut motors[motor];
                state.position = angle.clamp(spec.min, spec.max);
                state.sent_position = Some(state.position);
                state.idle_cycles = 0;
                driven |= 1 << motor;
            }
        }
        for (arm, held) in arm_owners.into_iter().enumerate() {
            let Some(motor) = self.shoulders[arm] else { continue };
            if self.arms_enabled[arm] && !held {
                let spec = &body.motors[motor].spec;
                let state = &mut motors[motor];
                let angle = self.shoulder_rest[arm] + commanded.shoulder_pitch_swing[arm];
                state.position = angle.clamp(spec.min, spec.max);
                state.sent_position = Some(state.position);
                state.idle_cycles = 0;
                driven |= 1 << motor;
            }
        }
        let standing_still = self.walk.state() == WalkState::Standing;
        if let Some(order) = self.order {
            if standing_still && self.wanted_step(order.goal) == Step::ZERO && self.walk.planned() == 0 {
                self.order = None;
                self.walk.kill();
                output.reports.push(FromEngine::MoveEnded { id: order.id, outcome: MoveOutcome::Arrived });
            }
        } else if standing_still {
            self.walk.kill();
        }
        driven
    }
}

impl Engine {
    /// A move replaces the one under way; it takes the legs from every task.
    pub(super) fn start_move(&mut self, order: MoveOrder, output: &mut EngineOutput) {
        let Some(walking) = &mut self.walking else {
            output.reports.push(FromEngine::MoveEnded { id: order.id, outcome: MoveOutcome::Killed });
            return;
        };
        if let Some(previous) = walking.order.replace(order) {
            output.reports.push(FromEngine::MoveEnded { id: previous.id, outcome: MoveOutcome::Replaced });
        }
        walking.walk.set_parameters(order.limits.parameters());
        if !walking.is_active() {
            let legs = walking.legs;
            let left = legs[0].map(|motor| motor.map_or(0.0, |motor| self.motors[motor].position));
            let mut right = legs[1].map(|motor| motor.map_or(0.0, |motor| self.motors[motor].position));
            right[0] = left[0];
            walking.walk.start([left, right]);
            walking.shoulder_rest =
                walking.shoulders.map(|motor| motor.map_or(0.0, |m| self.motors[m].position));
        }
        let mask = walking.leg_motors;
        self.release_positions(mask, output);
    }

    pub(super) fn plan_footstep(&mut self, step: FootStep, clear: bool) {
        if let Some(walking) = &mut self.walking {
            // The API never plans more than the walk holds: a step past it is dropped.
            let _ = walking.walk.plan(step, clear);
        }
    }

    pub(super) fn set_move_arms(&mut self, enabled: [bool; 2]) {
        if let Some(walking) = &mut self.walking {
            walking.arms_enabled = enabled;
        }
    }

    /// `stopMove`: the walk ends once the feet are side by side; the move ends then.
    pub(super) fn stop_move(&mut self) {
        if let Some(order) = self.walking.as_mut().and_then(|walking| walking.order.as_mut()) {
            order.goal = Goal::Steps(Step::ZERO);
        }
    }

    /// Stop the walk at once, the legs where they are; its move ends with `outcome`.
    pub(super) fn kill_move(&mut self, outcome: MoveOutcome, output: &mut EngineOutput) {
        let Some(walking) = &mut self.walking else { return };
        walking.walk.kill();
        if let Some(order) = walking.order.take() {
            output.reports.push(FromEngine::MoveEnded { id: order.id, outcome });
        }
    }

    /// A task on a leg's position while walking kills the walk: the task has the joint.
    pub(super) fn walk_yields_to(&mut self, positions: u64, output: &mut EngineOutput) {
        let walking = self.walking.as_ref().is_some_and(|walking| walking.is_active());
        if walking && positions & self.walking.as_ref().map_or(0, Walking::leg_motors) != 0 {
            self.kill_move(MoveOutcome::Killed, output);
        }
    }

    /// One walk cycle: the legs' (and swinging arms') positions go into the command model.
    /// Returns the motors it drove.
    pub(super) fn walk_step(&mut self, dt: f64, output: &mut EngineOutput) -> u64 {
        let gyroscope =
            self.gyroscope.as_ref().map_or([0.0; 3], |gyro| [gyro.get(0), gyro.get(1), gyro.get(2)]);
        let limp = self.walking.as_ref().is_some_and(|walking| {
            walking.is_active()
                && (0..self.motors.len()).any(|motor| {
                    walking.leg_motors & (1 << motor) != 0 && self.motors[motor].stiffness < WALKING_STIFFNESS
                })
        });
        if limp {
            self.kill_move(MoveOutcome::Limp, output);
        }
        let arm_owners = [0, 1].map(|arm| {
            let shoulder = self.walking.as_ref().and_then(|walking| walking.shoulders[arm]);
            shoulder.is_some_and(|motor| self.owner(motor, super::Channel::Position).is_some())
        });
        let protect = self.switches.foot_contact_protection();
        let Some(walking) = &mut self.walking else { return 0 };
        let driven = walking.drive(dt, gyroscope, arm_owners, &mut self.motors, &self.body, output);
        walking.sense(gyroscope, dt);
        if walking.lifted(dt) && protect {
            self.kill_move(MoveOutcome::LeftTheGround, output);
        }
        if let Some(walking) = &self.walking {
            self.walk_shared.publish(walking);
        }
        driven
    }
}

/// `place` (x, y, θ) moved by `by`: forward, left (m) in its own frame, and turned (rad).
pub fn displaced([x, y, theta]: [f64; 3], [forward, left, turn]: [f64; 3]) -> [f64; 3] {
    let (sin, cos) = theta.sin_cos();
    [x + forward * cos - left * sin, y + forward * sin + left * cos, theta + turn]
}

/// Where `to` is seen from `from` (both x, y, θ): forward, left (m), turned (rad).
pub fn relative(from: [f64; 3], to: [f64; 3]) -> [f64; 3] {
    let (sin, cos) = from[2].sin_cos();
    let (dx, dy) = (to[0] - from[0], to[1] - from[1]);
    [dx * cos + dy * sin, -dx * sin + dy * cos, to[2] - from[2]]
}

impl Walking {
    /// The sensed odometry: the executed steps' displacement turned by the gyroscope's
    /// heading. The gyroscope tells how a robot on its feet turned; a robot whose feet have
    /// never carried anything (a simulator without a body) turned as its steps did, as far as
    /// anything can tell. Once felt, the ground stays: a hop or a lifted foot is no reason to
    /// stop believing the gyroscope.
    fn sense(&mut self, gyroscope: [f64; 3], dt: f64) {
        let odometry = self.walk.odometry();
        let [forward, left, turned] = relative(self.last_odometry, odometry);
        self.felt_ground |= self.fsr.is_some() && self.fsr_read.iter().sum::<f64>() > ON_GROUND_KG;
        let turned = if self.is_active() && self.felt_ground && gyroscope[2].is_finite() {
            gyroscope[2] * dt
        } else {
            turned
        };
        let [x, y, theta] = displaced(self.sensed, [forward, left, 0.0]);
        self.sensed = [x, y, theta + turned];
        self.last_odometry = odometry;
    }
}

impl Walking {
    /// The feet have carried nothing for [`OFF_GROUND_S`] while walking, though they have felt
    /// the ground before (a simulator without a body never lifts its robot).
    fn lifted(&mut self, dt: f64) -> bool {
        if !self.is_active() || self.fsr_read.iter().sum::<f64>() > ON_GROUND_KG {
            self.off_ground_s = 0.0;
            return false;
        }
        self.off_ground_s += dt;
        self.felt_ground && self.off_ground_s >= OFF_GROUND_S
    }
}

impl WalkShared {
    /// The odometry, its sensed twin, the next place and the velocity, for the API.
    fn publish(&self, walking: &Walking) {
        let odometry = walking.walk.odometry();
        let step = walking.walk.current_step();
        let period = walking.walk.step_period_s();
        let next = displaced(odometry, [step.forward, step.left, step.turn]);
        let wrapped = |[x, y, theta]: [f64; 3]| [x, y, wrap_angle(theta)];
        self.store(0, wrapped(odometry));
        self.store(3, wrapped(walking.sensed));
        self.store(6, wrapped(next));
        self.store(9, [step.forward / period, step.left / period, step.turn / period]);
        self.planned.store(walking.walk.planned() as u64, Ordering::Release);
        self.active.store(walking.is_active() || walking.order.is_some(), Ordering::Release);
    }
}
