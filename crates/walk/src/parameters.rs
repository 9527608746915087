//! The walk's parameters: its stance, its step timing and sizes, its feedback gains; and a
//! step request clamped to what one step can do (an ellipse, as Walk2014 clamps it).

/// Everything the walk's shape depends on. The defaults are what the physically simulated
/// NAO V6 walks with (docs/walk.md says how they were found).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkParameters {
    /// One step's nominal duration (s): the swing foot lands at its end.
    pub step_period_s: f64,
    /// How high the swing foot's sole rises (m).
    pub step_height_m: f64,
    /// The hips' height above the soles while walking (m): bent knees.
    pub hip_height_m: f64,
    /// The soles' centres are this far behind the hips (m): the body's mass, forward of the
    /// hips, then sits over the feet.
    pub feet_behind_hips_m: f64,
    /// The soles' centres are this much further apart than the hips (m).
    pub extra_feet_width_m: f64,
    /// How far the hips move over the support foot at mid-step (m).
    pub sway_m: f64,
    /// The sway at the largest forward step (m), in proportion from the full sway at
    /// `full_sway_forward_m` (m) on: with the full sway, 0.07 m steps slipped and 0.08 m ones
    /// fell on the physically simulated NAO; in place, sideways, backward and in shorter
    /// steps (ALMotion's walks and footsteps), the full sway carries the weight from foot to
    /// foot, and less of it made them drift and fall.
    pub forward_sway_m: f64,
    pub full_sway_forward_m: f64,
    /// The torso's lean while walking (rad): roll (right side down), pitch (forward).
    pub torso_roll_rad: f64,
    pub torso_pitch_rad: f64,
    /// The largest step: forward (m), backward (m), sideways (m, one foot's opening step),
    /// turn (rad, the opening step).
    pub max_forward_m: f64,
    pub max_backward_m: f64,
    pub max_left_m: f64,
    pub max_turn_rad: f64,
    /// The most a step's size changes from one step to the next (m): the body accelerates
    /// over a few steps, not in one, and stops from the largest step in four.
    pub max_forward_change_m: f64,
    /// The support foot changes once the swing foot carries this fraction of the weight, after
    /// half the step period.
    pub weight_shift_fraction: f64,
    /// A step that never felt the other foot take the weight ends after this many periods.
    pub longest_step_periods: f64,
    /// Support ankle pitch (roll) per rad/s of the gyroscope's Y (X): damping of the torso's
    /// sway.
    pub ankle_pitch_gyro_gain: f64,
    pub ankle_roll_gyro_gain: f64,
    /// The gyroscope's low-pass filter: the fraction of the old value kept each cycle.
    pub gyro_smoothing: f64,
    /// From the standing pose to the walk's stance, before the first step (s), for legs
    /// whose farthest joint is 0.3 rad or more from it (nearer legs take less).
    pub stance_ramp_s: f64,
    /// Arm swing: ShoulderPitch (rad) per metre the opposite foot is ahead.
    pub arm_swing_rad_per_m: f64,
    /// How far the body really goes per metre the steps go backward: walking backward, the
    /// body's momentum carries each landing further than the step (measured on the
    /// physically simulated NAO, docs/walk.md); the odometry counts with it.
    pub backward_odometry_gain: f64,
}

impl Default for WalkParameters {
    fn default() -> Self {
        WalkParameters {
            step_period_s: 0.25,
            step_height_m: 0.02,
            hip_height_m: 0.225,
            feet_behind_hips_m: 0.0,
            extra_feet_width_m: 0.0,
            sway_m: 0.015,
            forward_sway_m: 0.0075,
            full_sway_forward_m: 0.06,
            torso_roll_rad: 0.0,
            torso_pitch_rad: 0.0,
            max_forward_m: 0.08,
            max_backward_m: 0.04,
            max_left_m: 0.03,
            max_turn_rad: 0.2,
            max_forward_change_m: 0.02,
            weight_shift_fraction: 0.5,
            longest_step_periods: 1.5,
            ankle_pitch_gyro_gain: 0.05,
            ankle_roll_gyro_gain: 0.05,
            gyro_smoothing: 0.7,
            stance_ramp_s: 0.6,
            arm_swing_rad_per_m: 6.0,
            backward_odometry_gain: 1.25,
        }
    }
}

/// One step's size, in the frame of the body at its start: forward (m), left (m), turn
/// (rad, counter-clockwise).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Step {
    pub forward: f64,
    pub left: f64,
    pub turn: f64,
}

impl Step {
    pub const ZERO: Step = Step { forward: 0.0, left: 0.0, turn: 0.0 };

    /// Within the ellipsoid the parameters' largest steps span: a step asking for more is
    /// shrunk along its own direction, so a diagonal or curved walk keeps its shape. A value
    /// that is not a number counts as zero.
    pub fn clamped(self, parameters: &WalkParameters) -> Step {
        let finite = |value: f64| if value.is_finite() { value } else { 0.0 };
        let step = Step { forward: finite(self.forward), left: finite(self.left), turn: finite(self.turn) };
        let max_forward =
            if step.forward >= 0.0 { parameters.max_forward_m } else { parameters.max_backward_m };
        let ratio = |value: f64, max: f64| if max > 0.0 { value / max } else { 0.0 };
        let extent = (ratio(step.forward, max_forward).powi(2)
            + ratio(step.left, parameters.max_left_m).powi(2)
            + ratio(step.turn, parameters.max_turn_rad).powi(2))
        .sqrt();
        let scale = if extent > 1.0 { 1.0 / extent } else { 1.0 };
        let within = |value: f64, max: f64| if max > 0.0 { value * scale } else { 0.0 };
        Step {
            forward: within(step.forward, max_forward),
            left: within(step.left, parameters.max_left_m),
            turn: within(step.turn, parameters.max_turn_rad),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_within_reach_is_kept_and_one_beyond_it_shrinks_along_its_direction() {
        let parameters = WalkParameters::default();
        let small = Step { forward: 0.01, left: 0.01, turn: 0.05 };
        assert_eq!(small.clamped(&parameters), small);
        let big = Step { forward: 1.0, left: 1.0, turn: 0.0 }.clamped(&parameters);
        assert!((big.forward / big.left - 1.0).abs() < 1e-12, "{big:?}");
        let extent = (big.forward / parameters.max_forward_m).hypot(big.left / parameters.max_left_m);
        assert!((extent - 1.0).abs() < 1e-12, "{big:?}");
        let backward = Step { forward: -1.0, ..Step::ZERO }.clamped(&parameters);
        assert!((backward.forward + parameters.max_backward_m).abs() < 1e-12);
        let nonsense = Step { forward: f64::NAN, left: f64::INFINITY, turn: 0.1 }.clamped(&parameters);
        assert_eq!(nonsense, Step { forward: 0.0, left: 0.0, turn: 0.1 });
    }
}
