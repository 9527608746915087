//! Breathing (NAOqi's idle breath animation), on the motion thread: each joint of the
//! chains breath is enabled on sways around the angle it rested at, while no task and no
//! walk drives it; a task on the joint takes it at once (breath yields), and breath takes
//! it again, from where the task left it, once the task ended. Switched off, a joint
//! finishes its breath (it is back on its rest angle at the end of a cycle) and is left
//! there. Nothing here allocates: the tables are made at start.

use super::{Channel, Engine};
use crate::body::Body;

/// Each breathing joint's share of the animation: the knees bend and the hips and ankles
/// follow by half, so that the torso stays upright over the feet; the shoulders lift the
/// arms, the elbows and the head nod a little.
const WEIGHTS: [(&str, f64); 11] = [
    ("HeadPitch", 0.5),
    ("LShoulderPitch", 1.0),
    ("RShoulderPitch", 1.0),
    ("LElbowRoll", -0.5),
    ("RElbowRoll", 0.5),
    ("LHipPitch", -0.5),
    ("RHipPitch", -0.5),
    ("LKneePitch", 1.0),
    ("RKneePitch", 1.0),
    ("LAnklePitch", -0.5),
    ("RAnklePitch", -0.5),
];

/// NAOqi's breath configuration: breaths per minute in [5, 30], amplitude in [0, 1]. At
/// amplitude 0 a joint of weight 1 moves 5° peak to peak, at 1 twice that.
pub const BPM_RANGE: (f64, f64) = (5.0, 30.0);
const LEAST_SWING_RAD: f64 = 5.0 * std::f64::consts::PI / 180.0;

/// NAOqi's rule: every amplitude at the lowest rate, only 0 at the highest, linear in between.
pub fn clipped_amplitude(bpm: f64, amplitude: f64) -> f64 {
    let (low, high) = BPM_RANGE;
    amplitude.min((high - bpm) / (high - low)).max(0.0)
}

/// The breath's state, per motor, allocated at start.
pub(super) struct Breath {
    /// `(motor, weight)` of the joints breath moves.
    joints: Vec<(usize, f64)>,
    /// Motors breath is enabled on.
    enabled: u64,
    /// Motors switched off that finish their breath.
    finishing: u64,
    bpm: f64,
    amplitude: f64,
    /// Per motor: the angle it rests at and the seconds it has breathed, while breath has it.
    rest: Vec<Option<(f64, f64)>>,
}

impl Breath {
    pub(super) fn new(body: &Body) -> Breath {
        let joints = WEIGHTS
            .iter()
            .filter_map(|(name, weight)| {
                body.motors.iter().position(|m| m.name == *name).map(|m| (m, *weight))
            })
            .collect();
        Breath {
            joints,
            enabled: 0,
            finishing: 0,
            bpm: 12.0,
            amplitude: 0.5,
            rest: vec![None; body.motors.len()],
        }
    }

    /// The motors breath can move.
    pub(super) fn motors(&self) -> u64 {
        self.joints.iter().fold(0, |mask, (motor, _)| mask | 1 << motor)
    }

    pub(super) fn enable(&mut self, motors: u64, on: bool) {
        if on {
            self.enabled |= motors;
            self.finishing &= !motors;
        } else {
            self.finishing |= self.enabled & motors;
            self.enabled &= !motors;
        }
    }

    pub(super) fn configure(&mut self, bpm: f64, amplitude: f64) {
        self.bpm = bpm.clamp(BPM_RANGE.0, BPM_RANGE.1);
        self.amplitude = clipped_amplitude(self.bpm, amplitude);
    }
}

impl Engine {
    /// The motors of `motors` a running task drives the position of.
    pub(super) fn position_owners(&self, motors: u64) -> u64 {
        (0..self.motors.len())
            .filter(|&motor| motors & (1 << motor) != 0 && self.owner(motor, Channel::Position).is_some())
            .fold(0, |mask, motor| mask | 1 << motor)
    }

    /// One breath cycle: the joints breath has (enabled or finishing, stiff, driven by no task
    /// nor the walk) sway from their rest angle: `weight · swing · (1 − cos ωt) / 2`, which
    /// starts and ends each breath at rest with no speed. The motors it drove.
    pub(super) fn breathe(&mut self, dt: f64, taken: u64) -> u64 {
        let breath = &mut self.breath;
        let swing = LEAST_SWING_RAD * (1.0 + breath.amplitude);
        let period = 60.0 / breath.bpm;
        let mut driven = 0u64;
        for index in 0..breath.joints.len() {
            let (motor, weight) = breath.joints[index];
            let bit = 1u64 << motor;
            let state = &mut self.motors[motor];
            let free =
                (breath.enabled | breath.finishing) & bit != 0 && taken & bit == 0 && state.stiffness > 0.0;
            if !free || (breath.finishing & bit != 0 && breath.rest[motor].is_none()) {
                // Taken by a task, limp, or off: breath starts again from where it is then.
                breath.rest[motor] = None;
                breath.finishing &= !bit;
                continue;
            }
            let (rest, elapsed) = *breath.rest[motor].get_or_insert((state.position, 0.0));
            let elapsed = elapsed + dt;
            let done = breath.finishing & bit != 0 && (elapsed / period).fract() < dt / period;
            let phase = if done { 0.0 } else { 2.0 * std::f64::consts::PI * elapsed / period };
            let target = rest + weight * swing * (1.0 - phase.cos()) / 2.0;
            let spec = &self.body.motors[motor].spec;
            state.position = target.max(spec.min).min(spec.max);
            state.sent_position = Some(state.position);
            state.idle_cycles = 0;
            driven |= bit;
            if done {
                breath.finishing &= !bit;
                breath.rest[motor] = None;
            } else {
                breath.rest[motor] = Some((rest, elapsed));
            }
        }
        driven
    }
}
