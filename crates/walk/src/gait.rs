//! The walk itself, of Walk2014's family (Hengst, rUNSWift 2014): each step the swing foot
//! moves to its target on a smooth curve and lifts on a half sine while the support foot
//! slides back linearly under the body and the hips sway over it; the support changes when
//! the foot pressure sensors feel the swing foot take the weight (after half a step), not
//! when a clock says; the gyroscope damps the torso through the ankles; planned footsteps
//! (NAOqi's setFootSteps) go before the steps asked for. Pure and allocation-free: the motion
//! thread runs one [`Walk::cycle`] per motion cycle.

use naobroker_kinematics::transform::{add, axis_angle, mul, rotate, transpose};

use crate::legs::{FootPose, LegAngles, LegGeometry};
use crate::parameters::{Step, WalkParameters};

/// A foot, and the index of its values in the walk's pairs (left first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foot {
    Left = 0,
    Right = 1,
}

impl Foot {
    fn other(self) -> Foot {
        match self {
            Foot::Left => Foot::Right,
            Foot::Right => Foot::Left,
        }
    }

    /// +1 for the left foot, -1 for the right: the sign of its side in y.
    fn side(self) -> f64 {
        match self {
            Foot::Left => 1.0,
            Foot::Right => -1.0,
        }
    }
}

/// What the walk reads each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WalkSensors {
    /// The weight each foot carries (kg, left then right): the sum of its four FSRs.
    pub foot_weight_kg: [f64; 2],
    /// The inertial unit's gyroscope (rad/s, about the torso's x, y, z).
    pub gyroscope: [f64; 3],
}

/// What the walk commands each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WalkOutput {
    /// Left leg, right leg.
    pub legs: [LegAngles; 2],
    /// What the arms' ShoulderPitch adds to its standing value when the arms swing (left,
    /// right).
    pub shoulder_pitch_swing: [f64; 2],
}

/// A planned footstep (NAOqi's `setFootSteps`): the foot that swings, where it lands
/// relative to the other foot (forward, left, turn, in that foot's frame), and how long the
/// step takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootStep {
    pub foot: Foot,
    pub relative: Step,
    pub duration_s: f64,
}

/// The most footsteps the walk holds planned.
pub const MAX_FOOTSTEPS: usize = 32;

/// The plan is full: the footstep was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at most {MAX_FOOTSTEPS} footsteps can be planned")]
pub struct PlanFull;

/// Where the walk is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WalkState {
    /// Not commanding the legs.
    Idle,
    /// From the pose it was started in to its stance.
    Ramping { elapsed_s: f64 },
    /// In its stance, both feet down, ready to step.
    Standing,
    /// Stepping.
    Walking,
}

/// A foot's place relative to its place in the stance, in the body's frame: forward (m), left
/// (m), turn (rad).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Offset {
    forward: f64,
    left: f64,
    turn: f64,
}

impl Offset {
    fn toward(self, target: Offset, along: f64, turn_along: f64) -> Offset {
        Offset {
            forward: self.forward + (target.forward - self.forward) * along,
            left: self.left + (target.left - self.left) * along,
            turn: self.turn + (target.turn - self.turn) * turn_along,
        }
    }

    fn is_home(self) -> bool {
        self.forward.abs() < 1e-4 && self.left.abs() < 1e-4 && self.turn.abs() < 1e-3
    }
}

/// A joint this far (rad) from the stance takes the whole stance ramp to get there.
const RAMP_RAD: f64 = 0.3;

/// The robot's place on the ground as the walk moved it: x, y (m), θ (rad), from where it
/// started.
pub type Odometry = [f64; 3];

/// The walk engine. See the module's documentation.
#[derive(Debug, Clone)]
pub struct Walk {
    geometry: LegGeometry,
    parameters: WalkParameters,
    state: WalkState,
    /// The legs' angles when [`Walk::start`] was called: the ramp starts there.
    ramp_from: [LegAngles; 2],
    /// The stance the ramp ends in, solved once when it starts.
    ramp_to: [LegAngles; 2],
    /// How long the ramp lasts: the stance ramp's duration for the farthest joint.
    ramp_s: f64,
    support: Foot,
    elapsed_s: f64,
    start: [Offset; 2],
    target: [Offset; 2],
    offsets: [Offset; 2],
    /// The step under way.
    step: Step,
    /// The step asked for: the next one is planned from it. Zero: stop.
    wanted: Step,
    /// The footsteps planned and not begun, `planned[next..planned_len]`.
    planned: [FootStep; MAX_FOOTSTEPS],
    planned_len: usize,
    next_planned: usize,
    /// The step under way's duration: the period, or its footstep's.
    step_period_s: f64,
    /// The step under way is a planned footstep.
    footstep: bool,
    /// Filtered gyroscope x, y.
    gyro: [f64; 2],
    odometry: Odometry,
    steps_taken: u64,
    yaw_pitch: f64,
    output: WalkOutput,
}

impl Walk {
    pub fn new(geometry: LegGeometry, parameters: WalkParameters) -> Walk {
        let mut walk = Walk {
            geometry,
            parameters,
            state: WalkState::Idle,
            ramp_from: [[0.0; 6]; 2],
            ramp_to: [[0.0; 6]; 2],
            ramp_s: 0.0,
            support: Foot::Left,
            elapsed_s: 0.0,
            start: [Offset::default(); 2],
            target: [Offset::default(); 2],
            offsets: [Offset::default(); 2],
            step: Step::ZERO,
            wanted: Step::ZERO,
            planned: [FootStep { foot: Foot::Left, relative: Step::ZERO, duration_s: 0.0 }; MAX_FOOTSTEPS],
            planned_len: 0,
            next_planned: 0,
            step_period_s: parameters.step_period_s,
            footstep: false,
            gyro: [0.0; 2],
            odometry: [0.0; 3],
            steps_taken: 0,
            yaw_pitch: 0.0,
            output: WalkOutput::default(),
        };
        walk.output.legs = walk.stance();
        walk
    }

    pub fn parameters(&self) -> &WalkParameters {
        &self.parameters
    }

    /// New parameters, from the next step on; a ramp under way ends in their stance.
    pub fn set_parameters(&mut self, parameters: WalkParameters) {
        self.parameters = parameters;
        if let WalkState::Ramping { .. } = self.state {
            // The stance moved with them (its lean, its height): the ramp ends in the new one.
            self.ramp_to = self.stance();
        }
    }

    pub fn state(&self) -> WalkState {
        self.state
    }

    /// Where the walk has moved the robot since it was made (executed steps, not sensed).
    pub fn odometry(&self) -> Odometry {
        self.odometry
    }

    /// Steps begun since the walk was made.
    pub fn steps_taken(&self) -> u64 {
        self.steps_taken
    }

    /// The step under way (zero when not stepping).
    pub fn current_step(&self) -> Step {
        if self.state == WalkState::Walking {
            self.step
        } else {
            Step::ZERO
        }
    }

    /// How long the step under way lasts (s).
    pub fn step_period_s(&self) -> f64 {
        self.step_period_s
    }

    /// The leg angles of the walk's stance, both feet home.
    pub fn stance(&self) -> [LegAngles; 2] {
        self.legs_at([Offset::default(); 2])
    }

    /// The leg angles with both feet down at `offsets`.
    fn legs_at(&self, offsets: [Offset; 2]) -> [LegAngles; 2] {
        let (left, right) = self.geometry.solve(
            &self.foot(Foot::Left, offsets, 0.0, 0.0),
            &self.foot(Foot::Right, offsets, 0.0, 0.0),
            self.yaw_pitch,
        );
        [left, right]
    }

    /// Take the legs from `legs` (their angles now) to the stance, then step as asked.
    pub fn start(&mut self, legs: [LegAngles; 2]) {
        if self.state == WalkState::Idle {
            let stance = self.stance();
            let farthest = legs
                .iter()
                .flatten()
                .zip(stance.iter().flatten())
                .map(|(from, to)| (from - to).abs())
                .fold(0.0, f64::max);
            // A joint RAMP_RAD away takes the whole ramp; legs already in the stance, none.
            self.ramp_s = self.parameters.stance_ramp_s * (farthest / RAMP_RAD).min(1.0);
            self.ramp_from = legs;
            self.ramp_to = stance;
            self.state = WalkState::Ramping { elapsed_s: 0.0 };
            self.offsets = [Offset::default(); 2];
            self.gyro = [0.0; 2];
        }
    }

    /// Step as `step` asks, from the next step on (clamped to the largest step). Zero stops
    /// the walk once the feet are side by side again.
    pub fn request(&mut self, step: Step) {
        self.wanted = step.clamped(&self.parameters);
    }

    /// Plan `step` after those planned (`clear`: instead of them); the walk takes the planned
    /// footsteps before the steps [`Walk::request`] asks for.
    pub fn plan(&mut self, step: FootStep, clear: bool) -> Result<(), PlanFull> {
        if clear {
            self.planned_len = 0;
            self.next_planned = 0;
        }
        if self.planned_len == MAX_FOOTSTEPS && self.next_planned > 0 {
            self.planned.copy_within(self.next_planned..self.planned_len, 0);
            self.planned_len -= self.next_planned;
            self.next_planned = 0;
        }
        if self.planned_len == MAX_FOOTSTEPS {
            return Err(PlanFull);
        }
        self.planned[self.planned_len] = step;
        self.planned_len += 1;
        Ok(())
    }

    /// Footsteps planned and not begun.
    pub fn planned(&self) -> usize {
        self.planned_len - self.next_planned
    }

    /// Stop commanding the legs at once, wherever they are; the plan is dropped.
    pub fn kill(&mut self) {
        self.state = WalkState::Idle;
        self.wanted = Step::ZERO;
        self.step = Step::ZERO;
        self.planned_len = 0;
        self.next_planned = 0;
    }

    /// One motion cycle of `dt` seconds: the legs' angles for its end.
    pub fn cycle(&mut self, dt: f64, sensors: &WalkSensors) -> &WalkOutput {
        let keep = self.parameters.gyro_smoothing;
        for (filtered, raw) in self.gyro.iter_mut().zip(&sensors.gyroscope[..2]) {
            let raw = if raw.is_finite() { *raw } else { 0.0 };
            *filtered = keep * *filtered + (1.0 - keep) * raw;
        }
        match self.state {
            WalkState::Idle => {}
            WalkState::Ramping { elapsed_s } => self.ramp(elapsed_s + dt),
            WalkState::Standing => {
                if self.wanted != Step::ZERO || self.planned() > 0 {
                    self.state = WalkState::Walking;
                    let first_swing = match self.planned() {
                        0 => self.opening_foot(self.wanted).unwrap_or(Foot::Right),
                        _ => self.planned[self.next_planned].foot,
                    };
                    self.begin_step(first_swing.other());
                    self.advance(dt, sensors);
                } else {
                    self.output.legs = self.legs_at(self.offsets);
                    self.output.shoulder_pitch_swing = [0.0; 2];
                }
            }
            WalkState::Walking => self.advance(dt, sensors),
        }
        &self.output
    }

    fn ramp(&mut self, elapsed_s: f64) {
        let along = if self.ramp_s > 0.0 { (elapsed_s / self.ramp_s).min(1.0) } else { 1.0 };
        let eased = along * along * (3.0 - 2.0 * along);
        for (leg, (from, to)) in self.output.legs.iter_mut().zip(self.ramp_from.iter().zip(&self.ramp_to)) {
            for (angle, (from, to)) in leg.iter_mut().zip(from.iter().zip(to)) {
                *angle = from + (to - from) * eased;
            }
        }
        self.state = if along >= 1.0 { WalkState::Standing } else { WalkState::Ramping { elapsed_s } };
    }

    /// The foot whose swing opens a step of `step` sideways or turning (the left one to go left
    /// or turn left), if it does either.
    fn opening_foot(&self, step: Step) -> Option<Foot> {
        let sideways = if step.left.abs() > 1e-6 { step.left } else { step.turn };
        if sideways.abs() <= 1e-6 {
            None
        } else if sideways > 0.0 {
            Some(Foot::Left)
        } else {
            Some(Foot::Right)
        }
    }

    /// A new step: the next planned footstep, or one on `support` as asked, the other foot
    /// swinging.
    fn begin_step(&mut self, support: Foot) {
        if self.next_planned < self.planned_len {
            let footstep = self.planned[self.next_planned];
            self.next_planned += 1;
            self.begin_footstep(footstep);
            return;
        }
        self.step_period_s = self.parameters.step_period_s;
        self.footstep = false;
        let swing = support.other();
        let parameters = &self.parameters;
        let change = parameters.max_forward_change_m;
        let mut step = self.wanted;
        step.forward = step.forward.clamp(self.step.forward - change, self.step.forward + change);
        self.step = step;
        let mut swing_target = Offset { forward: step.forward / 2.0, ..Offset::default() };
        let mut support_target = Offset { forward: -step.forward / 2.0, ..Offset::default() };
        // Sideways and turning steps open with the foot on that side and close with the
        // other: the opening step spreads the feet by the whole step, the closing one brings
        // them together.
        if self.opens(swing, step.left) {
            swing_target.left = step.left;
            support_target.left = -step.left;
        }
        if self.opens(swing, step.turn) {
            swing_target.turn = step.turn;
            support_target.turn = -step.turn;
        }
        self.set_targets(support, swing_target, support_target);
    }

    /// A footstep: the body ends between the feet, the swing foot where the step puts it
    /// relative to the support foot.
    fn begin_footstep(&mut self, footstep: FootStep) {
        let (swing, support) = (footstep.foot, footstep.foot.other());
        let Step { forward, left, turn } = footstep.relative;
        let width = 2.0 * self.geometry.left_hip[1] + self.parameters.extra_feet_width_m;
        // What the step adds to the stance's width, towards the swing foot's side.
        let spread = left - swing.side() * width;
        self.step = Step { forward, left: spread / 2.0, turn: turn / 2.0 };
        self.step_period_s = footstep.duration_s;
        self.footstep = true;
        let half = Offset { forward: forward / 2.0, left: spread / 2.0, turn: turn / 2.0 };
        let opposite = Offset { forward: -half.forward, left: -half.left, turn: -half.turn };
        self.set_targets(support, half, opposite);
    }

    fn set_targets(&mut self, support: Foot, swing_target: Offset, support_target: Offset) {
        let swing = support.other();
        self.support = support;
        self.elapsed_s = 0.0;
        self.start = self.offsets;
        self.target[swing as usize] = swing_target;
        self.target[support as usize] = support_target;
        self.steps_taken += 1;
    }

    fn opens(&self, swing: Foot, value: f64) -> bool {
        value * swing.side() > 0.0
    }

    fn advance(&mut self, dt: f64, sensors: &WalkSensors) {
        self.elapsed_s += dt;
        let period = self.step_period_s;
        let along = (self.elapsed_s / period).min(1.0);
        let (swing, support) = (self.support.other(), self.support);
        let smooth = smooth_step(along);
        let before = self.offsets[support as usize];
        self.offsets[swing as usize] =
            self.start[swing as usize].toward(self.target[swing as usize], smooth, smooth);
        self.offsets[support as usize] =
            self.start[support as usize].toward(self.target[support as usize], along, smooth);
        self.integrate_odometry(before, self.offsets[support as usize]);
        let lift = self.parameters.step_height_m * (std::f64::consts::PI * along).sin();
        let sway = -support.side() * self.sway() * (std::f64::consts::PI * along).sin();
        let lifts = match swing {
            Foot::Left => [lift, 0.0],
            Foot::Right => [0.0, lift],
        };
        let left = self.foot(Foot::Left, self.offsets, lifts[0], sway);
        let right = self.foot(Foot::Right, self.offsets, lifts[1], sway);
        let (mut left, mut right) = self.geometry.solve(&left, &right, self.yaw_pitch);
        self.yaw_pitch = left[0];
        for leg in [&mut left, &mut right] {
            leg[4] += self.parameters.ankle_pitch_gyro_gain * self.gyro[1];
            leg[5] += self.parameters.ankle_roll_gyro_gain * self.gyro[0];
        }
        self.output.legs = [left, right];
        let ahead = (self.offsets[0].forward - self.offsets[1].forward) / 2.0;
        let swing_rad = self.parameters.arm_swing_rad_per_m * ahead;
        self.output.shoulder_pitch_swing = [swing_rad, -swing_rad];
        if self.support_changes(sensors, swing) {
            // Footsteps end where they put the feet; steps asked for, with the feet side by
            // side again.
            let feet_home = self.offsets.iter().all(|offset| offset.is_home());
            if self.wanted == Step::ZERO && (feet_home || self.footstep) && self.planned() == 0 {
                self.state = WalkState::Standing;
                self.step = Step::ZERO;
            } else {
                self.begin_step(swing);
            }
        }
    }

    /// The sway of the step under way: the full sway in place, sideways, backward and up to
    /// the full-sway step forward, less beyond it the longer the step.
    fn sway(&self) -> f64 {
        let parameters = &self.parameters;
        let beyond = self.step.forward - parameters.full_sway_forward_m;
        let range = parameters.max_forward_m - parameters.full_sway_forward_m;
        let fraction = if range > 0.0 { (beyond / range).clamp(0.0, 1.0) } else { 0.0 };
        parameters.sway_m + (parameters.forward_sway_m - parameters.sway_m) * fraction
    }

    /// The swing foot has landed and taken the weight, or the step has lasted too long.
    fn support_changes(&self, sensors: &WalkSensors, swing: Foot) -> bool {
        let period = self.step_period_s;
        if self.elapsed_s >= self.parameters.longest_step_periods * period {
            return true;
        }
        let [left, right] = sensors.foot_weight_kg.map(|kg| if kg.is_finite() { kg.max(0.0) } else { 0.0 });
        let total = left + right;
        let on_swing = if swing == Foot::Left { left } else { right };
        self.elapsed_s >= period / 2.0
            && total > 0.0
            && on_swing >= self.parameters.weight_shift_fraction * total
    }

    /// The body moves as the support foot, fixed on the ground, moves the other way under it.
    fn integrate_odometry(&mut self, before: Offset, after: Offset) {
        let [x, y, theta] = &mut self.odometry;
        let (mut forward, left) = (before.forward - after.forward, before.left - after.left);
        if forward < 0.0 {
            forward *= self.parameters.backward_odometry_gain;
        }
        let (sin, cos) = theta.sin_cos();
        *x += forward * cos - left * sin;
        *y += forward * sin + left * cos;
        *theta += before.turn - after.turn;
    }

    /// `foot`'s sole in FRAME_TORSO: its stance place moved by its offset, the sway and the lift.
    fn foot(&self, foot: Foot, offsets: [Offset; 2], lift: f64, sway: f64) -> FootPose {
        let offset = offsets[foot as usize];
        let parameters = &self.parameters;
        let [hip_x, hip_y, hip_z] = self.geometry.left_hip;
        let width = hip_y + parameters.extra_feet_width_m / 2.0;
        let upright = [
            -parameters.feet_behind_hips_m + offset.forward,
            foot.side() * width + offset.left + sway,
            -parameters.hip_height_m + lift,
        ];
        // The torso leans about the hips' centre: the feet turn the other way in its frame.
        let lean = transpose(&mul(
            &axis_angle([1.0, 0.0, 0.0], parameters.torso_roll_rad),
            &axis_angle([0.0, 1.0, 0.0], parameters.torso_pitch_rad),
        ));
        FootPose {
            position: add([hip_x, 0.0, hip_z], rotate(&lean, upright)),
            rotation: mul(&lean, &axis_angle([0.0, 0.0, 1.0], offset.turn)),
        }
    }
}

/// 0 to 1 with no speed at either end.
fn smooth_step(along: f64) -> f64 {
    along * along * (3.0 - 2.0 * along)
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_kinematics::Model;

    const CYCLE_S: f64 = 0.012;

    /// A walk in its stance, asked to step forward.
    fn stepping() -> Walk {
        let mut walk =
            Walk::new(LegGeometry::from_model(&Model::nao_v6()).unwrap(), WalkParameters::default());
        walk.start(walk.stance());
        let both_feet = WalkSensors { foot_weight_kg: [2.5, 2.5], ..WalkSensors::default() };
        while walk.state() != WalkState::Standing {
            walk.cycle(CYCLE_S, &both_feet);
        }
        walk.request(Step { forward: 0.04, ..Step::ZERO });
        walk
    }

    /// Cycles until the second step begins, with the weight where `weight` puts it.
    fn first_step_cycles(walk: &mut Walk, weight: impl Fn(Foot, f64) -> [f64; 2]) -> usize {
        walk.cycle(CYCLE_S, &WalkSensors::default());
        let swing = walk.support.other();
        let mut cycles = 1;
        while walk.steps_taken() == 1 {
            let sensors =
                WalkSensors { foot_weight_kg: weight(swing, walk.elapsed_s), ..WalkSensors::default() };
            walk.cycle(CYCLE_S, &sensors);
            cycles += 1;
        }
        cycles
    }

    #[test]
    fn the_support_changes_when_the_swing_foot_takes_the_weight_not_when_a_clock_says() {
        let period = WalkParameters::default().step_period_s;
        let on = |foot: Foot| if foot == Foot::Left { [5.0, 0.0] } else { [0.0, 5.0] };
        // The swing foot lands early, at 60 % of the step: the step ends there.
        let early = first_step_cycles(&mut stepping(), |swing, elapsed| {
            if elapsed > 0.6 * period {
                on(swing)
            } else {
                on(swing.other())
            }
        });
        assert_eq!(early, (0.6 * period / CYCLE_S).ceil() as usize + 1);
        // Weight on the swing foot before half the step is not a landing.
        let never_before_half = first_step_cycles(&mut stepping(), |swing, _| on(swing));
        assert_eq!(never_before_half, (0.5 * period / CYCLE_S).ceil() as usize);
        // The swing foot never takes the weight: the step ends after its longest.
        let longest = WalkParameters::default().longest_step_periods * period;
        let stuck = first_step_cycles(&mut stepping(), |swing, _| on(swing.other()));
        assert_eq!(stuck, (longest / CYCLE_S).ceil() as usize);
    }

    #[test]
    fn stopping_brings_the_feet_side_by_side_and_the_odometry_counts_the_steps() {
        let mut walk = stepping();
        let mut support = [5.0, 0.0];
        for _ in 0..10 {
            let steps = walk.steps_taken();
            while walk.steps_taken() == steps {
                walk.cycle(CYCLE_S, &WalkSensors { foot_weight_kg: support, ..WalkSensors::default() });
                if walk.elapsed_s >= walk.parameters.step_period_s {
                    support.reverse();
                }
            }
        }
        walk.request(Step::ZERO);
        for _ in 0..200 {
            walk.cycle(CYCLE_S, &WalkSensors { foot_weight_kg: support, ..WalkSensors::default() });
            if walk.elapsed_s >= walk.parameters.step_period_s {
                support.reverse();
            }
        }
        assert_eq!(walk.state(), WalkState::Standing);
        assert!(walk.offsets.iter().all(|offset| offset.is_home()), "{:?}", walk.offsets);
        let [x, y, theta] = walk.odometry();
        assert!(x > 0.3 && y.abs() < 1e-9 && theta.abs() < 1e-9, "{:?}", walk.odometry());
        assert_eq!(walk.output.legs, walk.stance());
    }
}
