//! One simulated joint: stiffness-scaled first-order following with a speed limit.

/// Time constant of a joint at full stiffness, in seconds.
pub const TIME_CONSTANT_S: f64 = 0.03;
/// Below this stiffness a joint is limp: it no longer follows its command.
pub const LIMP_STIFFNESS: f64 = 0.05;

/// A joint's range (rad) and top speed (rad/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointLimits {
    pub min: f64,
    pub max: f64,
    pub max_velocity: f64,
}

#[derive(Debug, Clone)]
pub struct SimJoint {
    limits: JointLimits,
    position: f64,
    stiffness: f64,
    current: f64,
}

impl SimJoint {
    /// At 0 rad (or the nearest limit), limp.
    pub fn new(limits: JointLimits) -> SimJoint {
        SimJoint { limits, position: 0.0f64.clamp(limits.min, limits.max), stiffness: 0.0, current: 0.0 }
    }

    /// Follow `target` for `dt_s` seconds: a first-order step whose rate grows with the
    /// stiffness, at most the joint's top speed, within its range. Limp below
    /// [`LIMP_STIFFNESS`]: the joint stays where it is and draws no current.
    pub fn drive(&mut self, target: f64, stiffness: f64, dt_s: f64) {
        let stiffness = stiffness.clamp(0.0, 1.0);
        self.stiffness = stiffness;
        let error = target - self.position;
        if stiffness < LIMP_STIFFNESS {
            self.current = 0.0;
            return;
        }
        let follow = (dt_s * stiffness / TIME_CONSTANT_S).min(1.0);
        let limit = self.limits.max_velocity * dt_s;
        self.position =
            (self.position + (error * follow).clamp(-limit, limit)).clamp(self.limits.min, self.limits.max);
        self.current = stiffness * (error.abs() * 2.0).min(1.5);
    }

    /// The true angle, rad (a sensor adds noise: [`crate::SimBody::measured_position`]).
    pub fn position(&self) -> f64 {
        self.position
    }

    /// The stiffness applied at the last step, 0..1.
    pub fn stiffness(&self) -> f64 {
        self.stiffness
    }

    /// Motor current, A: the stiffness times the effort of the last step.
    pub fn current(&self) -> f64 {
        self.current
    }

    /// Motor temperature, °C: 30 at rest, warmer with the current.
    pub fn temperature(&self) -> f64 {
        30.0 + 10.0 * self.current
    }

    pub fn limits(&self) -> JointLimits {
        self.limits
    }
}
