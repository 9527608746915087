//! A simulated NAO body, without I/O: joints that follow their commands with stiffness-scaled
//! first-order dynamics and speed limits and go limp below a stiffness, measured angles with a
//! little deterministic noise, motor currents and temperatures that follow the effort, and a
//! sonar that echoes once triggered.
//!
//! It works on plain per-joint values (radians, stiffness 0..1, seconds), so that every
//! simulator shares one model: the DCM's `sim` backend (`naobroker-backend-sim`'s
//! `SimRobot`, which converts its devices' values) and the LoLA simulator
//! (`naobroker-lolasim`, which drives it from LoLA's arrays). Nothing allocates after [`SimBody::new`].
//!
//! ```
//! use naobroker_simbody::{JointLimits, SimBody};
//!
//! let mut body = SimBody::new(&[JointLimits { min: -2.0, max: 2.0, max_velocity: 8.0 }]);
//! for _ in 0..100 {
//!     body.drive(0, 1.0, 1.0, 0.01);
//! }
//! assert!((body.joint(0).position() - 1.0).abs() < 1e-3);
//! ```
#![deny(unsafe_code)]

mod joint;
mod noise;

pub use joint::{JointLimits, SimJoint, LIMP_STIFFNESS, TIME_CONSTANT_S};
pub use noise::Noise;

/// How far the noise moves a measured angle at most, in radians.
pub const POSITION_NOISE_RAD: f64 = 0.0005;
/// The simulated room: an obstacle 0.8 m in front of the robot.
pub const SONAR_ECHO_M: f64 = 0.8;

/// The simulated joints, their measurement noise and the sonar.
#[derive(Debug, Clone)]
pub struct SimBody {
    joints: Vec<SimJoint>,
    noise: Noise,
    /// Distance the sonar reports once a measurement was triggered.
    sonar_echo_m: Option<f64>,
}

impl SimBody {
    /// One joint per limits, at 0 rad (or the nearest limit), limp.
    pub fn new(limits: &[JointLimits]) -> SimBody {
        SimBody {
            joints: limits.iter().map(|&limits| SimJoint::new(limits)).collect(),
            noise: Noise::default(),
            sonar_echo_m: None,
        }
    }

    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    pub fn joint(&self, joint: usize) -> &SimJoint {
        &self.joints[joint]
    }

    /// Move `joint` for `dt_s` seconds towards `target` (rad) with `stiffness` (clamped to 0..1).
    pub fn drive(&mut self, joint: usize, target: f64, stiffness: f64, dt_s: f64) {
        self.joints[joint].drive(target, stiffness, dt_s);
    }

    /// The angle a sensor measures now: the joint's, with noise (each call draws anew, so
    /// runs that read in the same order repeat exactly).
    pub fn measured_position(&mut self, joint: usize) -> f64 {
        let noise = self.noise.draw() * POSITION_NOISE_RAD;
        self.joints[joint].position() + noise
    }

    /// Start the sonar: from now on it hears the room's echo.
    pub fn trigger_sonar(&mut self) {
        self.sonar_echo_m = Some(SONAR_ECHO_M);
    }

    /// The distance the sonar reports, once triggered.
    pub fn sonar_echo(&self) -> Option<f64> {
        self.sonar_echo_m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: JointLimits = JointLimits { min: -1.0, max: 1.0, max_velocity: 2.0 };

    #[test]
    fn a_stiff_joint_reaches_its_target_within_its_limits() {
        let mut body = SimBody::new(&[LIMITS, LIMITS]);
        for _ in 0..200 {
            body.drive(0, 0.5, 1.0, 0.01);
            body.drive(1, 3.0, 1.0, 0.01);
        }
        assert!((body.joint(0).position() - 0.5).abs() < 1e-6);
        assert_eq!(body.joint(1).position(), 1.0, "clamped to its maximum");
    }

    #[test]
    fn speed_is_limited_and_limp_joints_stay() {
        let mut body = SimBody::new(&[LIMITS, LIMITS]);
        body.drive(0, 1.0, 1.0, 0.1);
        assert!((body.joint(0).position() - 0.2).abs() < 1e-12, "2 rad/s for 0.1 s");
        assert!(body.joint(0).current() > 0.0);
        assert_eq!(body.joint(0).temperature(), 30.0 + 10.0 * body.joint(0).current());
        body.drive(1, 1.0, LIMP_STIFFNESS / 2.0, 0.1);
        assert_eq!(body.joint(1).position(), 0.0);
        assert_eq!(body.joint(1).current(), 0.0);
        assert_eq!(body.joint(1).stiffness(), LIMP_STIFFNESS / 2.0);
    }

    #[test]
    fn noise_is_small_and_repeats() {
        let mut first = SimBody::new(&[LIMITS]);
        let mut second = SimBody::new(&[LIMITS]);
        for _ in 0..100 {
            let measured = first.measured_position(0);
            assert!(measured.abs() <= POSITION_NOISE_RAD);
            assert_eq!(measured, second.measured_position(0));
        }
    }

    #[test]
    fn the_sonar_echoes_once_triggered() {
        let mut body = SimBody::new(&[]);
        assert_eq!(body.sonar_echo(), None);
        body.trigger_sonar();
        assert_eq!(body.sonar_echo(), Some(SONAR_ECHO_M));
    }
}
