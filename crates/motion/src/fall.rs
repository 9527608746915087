//! The fall manager's detection and sequence, run in the motion cycle: past the tilt
//! threshold, tasks are killed, a protective posture is driven for `PROTECT_MS`, then
//! every joint's stiffness goes off (docs/motion.md, "Fall manager").

use serde::Deserialize;

use crate::body::Body;

/// `[motion.fall_manager]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FallManagerConfig {
    /// On at start-up (NAOqi's default); `setFallManagerEnabled` changes it at run time.
    pub enabled: bool,
    /// Tilt (rad, |AngleX| or |AngleY|) past which the robot is falling.
    pub tilt_rad: f64,
}

impl Default for FallManagerConfig {
    fn default() -> Self {
        FallManagerConfig { enabled: true, tilt_rad: 0.6 }
    }
}

/// The inertial unit's torso angles the fall manager reads.
pub const ANGLE_KEYS: [&str; 2] = [
    "Device/SubDeviceList/InertialSensor/AngleX/Sensor/Value",
    "Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value",
];

/// How long the protective posture is driven before the stiffness goes off.
const PROTECT_MS: i32 = 100;

/// The robot is upright again (and the fall manager armed) below this fraction of the threshold.
const UPRIGHT_FRACTION: f64 = 0.5;

/// Which way the robot falls: the larger of the two angles decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Front,
    Back,
    Left,
    Right,
}

impl Direction {
    /// NAO's AngleY is positive leaning forward, AngleX positive leaning right.
    fn of(angle_x: f64, angle_y: f64) -> Direction {
        if angle_y.abs() >= angle_x.abs() {
            if angle_y > 0.0 {
                Direction::Front
            } else {
                Direction::Back
            }
        } else if angle_x > 0.0 {
            Direction::Right
        } else {
            Direction::Left
        }
    }

    fn posture_column(self) -> usize {
        match self {
            Direction::Front => 0,
            Direction::Back => 1,
            Direction::Left | Direction::Right => 2,
        }
    }
}

/// Protective targets per joint (rad) for a fall to the front, to the back, to a side;
/// `None`: the joint is left where it is. Falling forward the head goes back and the arms
/// reach forward; falling backward or sideways the head tucks in and the arms fold in
/// front of the torso; backward the hips also bend, to sit into the fall.
const PROTECTIVE_POSTURE: &[(&str, [Option<f64>; 3])] = &[
    ("HeadYaw", [Some(0.0), Some(0.0), Some(0.0)]),
    ("HeadPitch", [Some(-0.5), Some(0.5), Some(0.5)]),
    ("LShoulderPitch", [Some(0.0), Some(0.8), Some(0.8)]),
    ("LShoulderRoll", [Some(0.3), Some(0.15), Some(0.15)]),
    ("LElbowYaw", [Some(0.0), Some(-1.4), Some(-1.4)]),
    ("LElbowRoll", [Some(-0.5), Some(-1.2), Some(-1.2)]),
    ("RShoulderPitch", [Some(0.0), Some(0.8), Some(0.8)]),
    ("RShoulderRoll", [Some(-0.3), Some(-0.15), Some(-0.15)]),
    ("RElbowYaw", [Some(0.0), Some(1.4), Some(1.4)]),
    ("RElbowRoll", [Some(0.5), Some(1.2), Some(1.2)]),
    ("LHipPitch", [None, Some(-0.7), None]),
    ("RHipPitch", [None, Some(-0.7), None]),
];

/// What the fall manager asks of this motion cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallStep {
    Idle,
    /// A fall starts: kill every task, then drive the protective posture.
    Started(Direction),
    /// Keep driving the protective posture.
    Protecting(Direction),
    /// The posture was held long enough: every stiffness off; the fall is over.
    Finished,
    /// The robot is upright: the fall manager is armed (again).
    Upright,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not armed until the robot is seen upright (at start-up, after a fall, after
    /// being switched on): a robot lying down is not falling.
    WaitingUpright,
    Armed,
    Protecting {
        cycles_left: u32,
        direction: Direction,
    },
}

/// Detection and sequencing: pure, one `step` per motion cycle.
#[derive(Debug)]
pub struct FallDetector {
    tilt_rad: f64,
    protect_cycles: u32,
    phase: Phase,
    enabled_seen: bool,
}

impl FallDetector {
    pub fn new(tilt_rad: f64, period_ms: i32, enabled: bool) -> FallDetector {
        let protect_cycles = (PROTECT_MS + period_ms - 1) / period_ms.max(1);
        FallDetector {
            tilt_rad,
            protect_cycles: protect_cycles.max(1) as u32,
            phase: Phase::WaitingUpright,
            enabled_seen: enabled,
        }
    }

    /// A fall under way: tasks are refused until it is over.
    pub fn protecting(&self) -> bool {
        matches!(self.phase, Phase::Protecting { .. })
    }

    /// One motion cycle. `enabled`: the switch as the API last set it; `legs_stiff`:
    /// whether the robot holds itself up (a limp robot tilting is carried, not falling).
    /// A fall under way always completes, even if the switch goes off meanwhile.
    pub fn step(&mut self, enabled: bool, angle_x: f64, angle_y: f64, legs_stiff: bool) -> FallStep {
        if enabled != self.enabled_seen {
            self.enabled_seen = enabled;
            if !self.protecting() {
                self.phase = Phase::WaitingUpright;
            }
        }
        match self.phase {
            Phase::Protecting { cycles_left: 0, .. } => {
                self.phase = Phase::WaitingUpright;
                FallStep::Finished
            }
            Phase::Protecting { cycles_left, direction } => {
                self.phase = Phase::Protecting { cycles_left: cycles_left - 1, direction };
                FallStep::Protecting(direction)
            }
            _ if !enabled => FallStep::Idle,
            Phase::WaitingUpright => {
                let upright = self.tilt_rad * UPRIGHT_FRACTION;
                if angle_x.abs() < upright && angle_y.abs() < upright {
                    self.phase = Phase::Armed;
                    FallStep::Upright
                } else {
                    FallStep::Idle
                }
            }
            Phase::Armed => {
                let tilted = angle_x.abs() > self.tilt_rad || angle_y.abs() > self.tilt_rad;
                if tilted && legs_stiff {
                    let direction = Direction::of(angle_x, angle_y);
                    self.phase = Phase::Protecting { cycles_left: self.protect_cycles - 1, direction };
                    FallStep::Started(direction)
                } else {
                    FallStep::Idle
                }
            }
        }
    }
}

/// The protective posture resolved to motors: `(motor, [front, back, side])`.
pub type Posture = Vec<(usize, [Option<f64>; 3])>;

/// The protective posture on `body`'s motors (joints it lacks are left out).
pub fn protective_posture(body: &Body) -> Posture {
    PROTECTIVE_POSTURE
        .iter()
        .filter_map(|(name, targets)| {
            let motor = body.motors.iter().position(|motor| motor.name == *name)?;
            Some((
                motor,
                targets.map(|target| {
                    target.map(|t| t.clamp(body.motors[motor].spec.min, body.motors[motor].spec.max))
                }),
            ))
        })
        .collect()
}

/// The target of one posture entry for a fall in `direction`.
pub fn target(entry: &(usize, [Option<f64>; 3]), direction: Direction) -> Option<f64> {
    entry.1[direction.posture_column()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::tests::intrusion_at;
    use crate::collision::Arm;

    fn run(detector: &mut FallDetector, cycles: usize, angles: (f64, f64), stiff: bool) -> Vec<FallStep> {
        (0..cycles).map(|_| detector.step(true, angles.0, angles.1, stiff)).collect()
    }

    #[test]
    fn a_fall_kills_protects_for_100_ms_then_cuts_the_stiffness_once() {
        let mut detector = FallDetector::new(0.6, 20, true);
        assert_eq!(run(&mut detector, 2, (0.0, 0.0), true), [FallStep::Upright, FallStep::Idle]);
        let steps = run(&mut detector, 7, (0.0, 0.9), true);
        assert_eq!(steps[0], FallStep::Started(Direction::Front));
        assert_eq!(steps[1..5], [FallStep::Protecting(Direction::Front); 4]);
        assert_eq!(steps[5..], [FallStep::Finished, FallStep::Idle], "still tilted: not re-armed");
        assert_eq!(run(&mut detector, 2, (0.0, 0.0), true), [FallStep::Upright, FallStep::Idle]);
    }

    #[test]
    fn direction_follows_the_larger_angle() {
        for (angles, direction) in [
            ((0.1, 0.7), Direction::Front),
            ((0.1, -0.7), Direction::Back),
            ((0.7, 0.2), Direction::Right),
            ((-0.7, 0.2), Direction::Left),
        ] {
            let mut detector = FallDetector::new(0.6, 20, true);
            detector.step(true, 0.0, 0.0, true);
            assert_eq!(detector.step(true, angles.0, angles.1, true), FallStep::Started(direction));
        }
    }

    #[test]
    fn a_limp_robot_a_robot_lying_down_or_a_disabled_manager_does_not_fall() {
        let mut detector = FallDetector::new(0.6, 20, true);
        assert_eq!(run(&mut detector, 3, (1.5, 0.0), true), [FallStep::Idle; 3], "lying since start-up");
        assert_eq!(run(&mut detector, 1, (0.0, 0.0), false), [FallStep::Upright]);
        assert_eq!(run(&mut detector, 3, (0.0, 0.9), false), [FallStep::Idle; 3], "limp: carried");
        assert_eq!(detector.step(false, 0.0, 0.9, true), FallStep::Idle, "switched off");
        assert_eq!(detector.step(true, 0.0, 0.9, true), FallStep::Idle, "switched on while tilted");
        assert_eq!(detector.step(true, 0.0, 0.2, true), FallStep::Upright);
        assert_eq!(detector.step(true, 0.0, -0.9, true), FallStep::Started(Direction::Back));
        assert_eq!(detector.step(false, 0.0, -0.9, true), FallStep::Protecting(Direction::Back), "completes");
    }

    #[test]
    fn the_protective_arms_stay_clear_of_the_body() {
        let posture = |name: &str, column: usize| {
            PROTECTIVE_POSTURE.iter().find(|(joint, _)| *joint == name).unwrap().1[column].unwrap()
        };
        for column in 0..3 {
            for (arm, prefix) in [(Arm::Left, "L"), (Arm::Right, "R")] {
                let angles = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll"]
                    .map(|joint| posture(&format!("{prefix}{joint}"), column));
                assert_eq!(intrusion_at(arm, angles), 0.0, "{arm:?}, column {column}");
            }
        }
    }
}
