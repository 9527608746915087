//! The fall manager's detection and sequence, run in the motion cycle: past the tilt
//! threshold, tasks are killed, a protective posture is driven for `PROTECT_MS`, every
//! joint's stiffness goes off, and the fall is over once the gyroscope shows the body at
//! rest on the ground (docs/motion.md, "Fall manager").

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

/// The inertial unit's angular velocities (rad/s), which tell when a fall is over; a robot
/// without them ends its falls with the stiffness cut.
pub const GYROSCOPE_KEYS: [&str; 3] = [
    "Device/SubDeviceList/InertialSensor/GyroscopeX/Sensor/Value",
    "Device/SubDeviceList/InertialSensor/GyroscopeY/Sensor/Value",
    "Device/SubDeviceList/InertialSensor/GyroscopeZ/Sensor/Value",
];

/// How long the protective posture is driven before the stiffness goes off.
const PROTECT_MS: i32 = 100;

/// The body is at rest below this angular velocity (rad/s) on every axis. A NAO toppling
/// from standing turns at several rad/s before it lands (a rigid body of NAO's 0.57 m
/// pivoting on its feet reaches about 7 rad/s at the ground), and a roll or a bounce after
/// landing still turns at more than 1; one lying still reads only the gyroscope's noise
/// and the limp joints settling, well below 0.5.
const AT_REST_RAD_S: f64 = 0.5;

/// Consecutive motion cycles at rest, counted after the stiffness cut, that end the fall:
/// a single quiet reading may be the turning point of a rock or a bounce, where the angular
/// velocity crosses zero; five in a row (100 ms at 20 ms) outlast such a turning point.
const AT_REST_CYCLES: u32 = 5;

/// The fall is over this long after it started at the latest, still moving or not: a robot
/// that never reads still (rolling down a slope, picked up, a gyroscope noisy or stuck)
/// still gets `robotHasFallen` and its tasks back. A NAO falling from standing lies on the
/// floor within about a second.
const SETTLE_CAP_MS: i32 = 3000;

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
    /// The posture was held long enough: every stiffness off. `fallen`: the fall is over
    /// too (a robot without a gyroscope cannot tell when it lies still).
    StiffnessOff {
        fallen: bool,
    },
    /// Limp, the body not yet at rest: nothing to drive, tasks still refused.
    Settling,
    /// The body is at rest on the ground (or the cap passed): the fall is over.
    Fallen,
    /// The robot is upright: the fall manager is armed (again).
    Upright,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not armed until the robot is seen upright (at start-up, after a fall, after
    /// being switched on): a robot lying down is not falling.
    WaitingUpright,
    Armed,
    /// A fall under way, `cycle` motion cycles after the one that saw it start; `at_rest`:
    /// the consecutive cycles since the stiffness cut whose gyroscope read the body still.
    Falling {
        cycle: u32,
        direction: Direction,
        at_rest: u32,
    },
}

/// Detection and sequencing: pure, one `step` per motion cycle.
#[derive(Debug)]
pub struct FallDetector {
    tilt_rad: f64,
    /// The cycle of a fall at which the stiffness goes off (the posture held until then).
    cut_cycle: u32,
    /// The cycle of a fall at which it is over whatever the gyroscope says.
    cap_cycle: u32,
    phase: Phase,
    enabled_seen: bool,
}

/// Motion cycles of `period_ms` covering `ms`, at least one.
fn cycles_for(ms: i32, period_ms: i32) -> u32 {
    let period_ms = period_ms.max(1);
    ((ms + period_ms - 1) / period_ms).max(1) as u32
}

impl FallDetector {
    pub fn new(tilt_rad: f64, period_ms: i32, enabled: bool) -> FallDetector {
        FallDetector {
            tilt_rad,
            cut_cycle: cycles_for(PROTECT_MS, period_ms),
            cap_cycle: cycles_for(SETTLE_CAP_MS, period_ms),
            phase: Phase::WaitingUpright,
            enabled_seen: enabled,
        }
    }

    /// A fall under way, from its start until it is over: tasks are refused meanwhile.
    pub fn under_way(&self) -> bool {
        matches!(self.phase, Phase::Falling { .. })
    }

    /// One motion cycle, on the inertial unit's torso angles and, when the robot has one,
    /// its gyroscope (rad/s about x, y, z). `enabled`: the switch as the API last set it.
    /// A fall under way always completes, even if the switch goes off meanwhile.
    pub fn step(
        &mut self,
        enabled: bool,
        angle_x: f64,
        angle_y: f64,
        gyroscope: Option<[f64; 3]>,
    ) -> FallStep {
        if enabled != self.enabled_seen {
            self.enabled_seen = enabled;
            if !self.under_way() {
                self.phase = Phase::WaitingUpright;
            }
        }
        match self.phase {
            Phase::Falling { cycle, direction, at_rest } => {
                self.fall_goes_on(cycle + 1, direction, at_rest, gyroscope)
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
                if angle_x.abs() > self.tilt_rad || angle_y.abs() > self.tilt_rad {
                    let direction = Direction::of(angle_x, angle_y);
                    self.phase = Phase::Falling { cycle: 0, direction, at_rest: 0 };
                    FallStep::Started(direction)
                } else {
                    FallStep::Idle
                }
            }
        }
    }

    /// Cycle `cycle` of a fall: the posture, then the cut, then waiting for the body to
    /// rest (the cycles before the cut do not count: the joints still held the body).
    fn fall_goes_on(
        &mut self,
        cycle: u32,
        direction: Direction,
        at_rest: u32,
        gyroscope: Option<[f64; 3]>,
    ) -> FallStep {
        let (step, at_rest) = if cycle < self.cut_cycle {
            (FallStep::Protecting(direction), 0)
        } else if cycle == self.cut_cycle {
            (FallStep::StiffnessOff { fallen: gyroscope.is_none() }, 0)
        } else {
            // A reading that is not a number is not at rest: the cap ends such a fall.
            let still = gyroscope.is_some_and(|rates| rates.iter().all(|rate| rate.abs() < AT_REST_RAD_S));
            let at_rest = if still { at_rest + 1 } else { 0 };
            let over = at_rest >= AT_REST_CYCLES || cycle >= self.cap_cycle;
            (if over { FallStep::Fallen } else { FallStep::Settling }, at_rest)
        };
        self.phase = match step {
            FallStep::StiffnessOff { fallen: true } | FallStep::Fallen => Phase::WaitingUpright,
            _ => Phase::Falling { cycle, direction, at_rest },
        };
        step
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
    use crate::self_collision::tests::clearance_at;
    use crate::self_collision::Arm;

    /// The gyroscope of a body lying still, and of one toppling over.
    const STILL: Option<[f64; 3]> = Some([0.0; 3]);
    const TUMBLING: Option<[f64; 3]> = Some([0.2, 3.0, -0.4]);

    fn run(
        detector: &mut FallDetector,
        cycles: usize,
        angles: (f64, f64),
        gyroscope: Option<[f64; 3]>,
    ) -> Vec<FallStep> {
        (0..cycles).map(|_| detector.step(true, angles.0, angles.1, gyroscope)).collect()
    }

    /// A detector on a 20 ms cycle that has seen the robot upright.
    fn armed() -> FallDetector {
        let mut detector = FallDetector::new(0.6, 20, true);
        assert_eq!(detector.step(true, 0.0, 0.0, STILL), FallStep::Upright);
        detector
    }

    #[test]
    fn a_fall_kills_protects_for_100_ms_cuts_the_stiffness_then_ends_once_at_rest() {
        let mut detector = FallDetector::new(0.6, 20, true);
        assert_eq!(run(&mut detector, 2, (0.0, 0.0), STILL), [FallStep::Upright, FallStep::Idle]);
        let steps = run(&mut detector, 6, (0.0, 0.9), TUMBLING);
        assert_eq!(steps[0], FallStep::Started(Direction::Front));
        assert_eq!(steps[1..5], [FallStep::Protecting(Direction::Front); 4]);
        assert_eq!(steps[5], FallStep::StiffnessOff { fallen: false }, "100 ms after the start");
        assert_eq!(run(&mut detector, 20, (0.0, 1.5), TUMBLING), [FallStep::Settling; 20], "still turning");
        // Just under the threshold on every axis, either sign: the fifth such cycle ends it.
        let quiet = Some([0.49, -0.49, 0.3]);
        assert_eq!(run(&mut detector, 4, (0.0, 1.5), quiet), [FallStep::Settling; 4]);
        assert!(detector.under_way(), "tasks still refused");
        assert_eq!(run(&mut detector, 1, (0.0, 1.5), quiet), [FallStep::Fallen]);
        assert!(!detector.under_way());
        assert_eq!(run(&mut detector, 2, (0.0, 1.5), STILL), [FallStep::Idle; 2], "lying: not re-armed");
        assert_eq!(run(&mut detector, 2, (0.0, 0.0), STILL), [FallStep::Upright, FallStep::Idle]);
    }

    #[test]
    fn at_rest_is_five_cycles_in_a_row_after_the_cut_under_half_a_radian_per_second_on_every_axis() {
        // Still from the start: the cycles before the cut do not count.
        let mut detector = armed();
        let steps = run(&mut detector, 11, (0.9, 0.0), STILL);
        assert_eq!(steps[0], FallStep::Started(Direction::Right));
        assert_eq!(steps[5], FallStep::StiffnessOff { fallen: false });
        assert_eq!(steps[6..10], [FallStep::Settling; 4]);
        assert_eq!(steps[10], FallStep::Fallen, "200 ms after the start at the earliest");
        // One axis at 0.5, or a reading that is not a number, starts the count again.
        for moving in [[0.5, 0.0, 0.0], [0.0, -0.5, 0.0], [0.0, 0.0, 0.5], [f64::NAN, 0.0, 0.0]] {
            let mut detector = armed();
            assert_eq!(
                run(&mut detector, 6, (0.0, 0.9), TUMBLING)[5],
                FallStep::StiffnessOff { fallen: false }
            );
            assert_eq!(run(&mut detector, 4, (0.0, 1.5), STILL), [FallStep::Settling; 4]);
            assert_eq!(run(&mut detector, 1, (0.0, 1.5), Some(moving)), [FallStep::Settling], "{moving:?}");
            assert_eq!(run(&mut detector, 4, (0.0, 1.5), STILL), [FallStep::Settling; 4], "{moving:?}");
            assert_eq!(run(&mut detector, 1, (0.0, 1.5), STILL), [FallStep::Fallen], "{moving:?}");
        }
    }

    #[test]
    fn a_fall_is_over_3_s_after_it_started_even_if_the_body_never_rests() {
        for (period_ms, cut, cap) in [(20, 5, 150), (12, 9, 250)] {
            let mut detector = FallDetector::new(0.6, period_ms, true);
            detector.step(true, 0.0, 0.0, STILL);
            let steps = run(&mut detector, cap + 2, (0.0, -0.9), TUMBLING);
            assert_eq!(steps[0], FallStep::Started(Direction::Back), "{period_ms} ms");
            assert_eq!(steps[cut], FallStep::StiffnessOff { fallen: false }, "{period_ms} ms");
            assert!(steps[cut + 1..cap].iter().all(|&step| step == FallStep::Settling), "{period_ms} ms");
            assert_eq!(
                steps[cap..],
                [FallStep::Fallen, FallStep::Idle],
                "{period_ms} ms: 3 s after the start"
            );
        }
    }

    #[test]
    fn without_a_gyroscope_the_fall_ends_with_the_stiffness_cut() {
        let mut detector = FallDetector::new(0.6, 20, true);
        detector.step(true, 0.0, 0.0, None);
        let steps = run(&mut detector, 7, (0.0, 0.9), None);
        assert_eq!(steps[1..5], [FallStep::Protecting(Direction::Front); 4]);
        assert_eq!(steps[5..], [FallStep::StiffnessOff { fallen: true }, FallStep::Idle]);
        assert!(!detector.under_way());
    }

    #[test]
    fn direction_follows_the_larger_angle() {
        for (angles, direction) in [
            ((0.1, 0.7), Direction::Front),
            ((0.1, -0.7), Direction::Back),
            ((0.7, 0.2), Direction::Right),
            ((-0.7, 0.2), Direction::Left),
        ] {
            let mut detector = armed();
            assert_eq!(detector.step(true, angles.0, angles.1, STILL), FallStep::Started(direction));
        }
    }

    #[test]
    fn a_robot_lying_down_or_a_disabled_manager_does_not_fall() {
        let mut detector = FallDetector::new(0.6, 20, true);
        assert_eq!(run(&mut detector, 3, (1.5, 0.0), STILL), [FallStep::Idle; 3], "lying since start-up");
        assert_eq!(run(&mut detector, 1, (0.0, 0.0), STILL), [FallStep::Upright]);
        assert_eq!(detector.step(false, 0.0, 0.9, TUMBLING), FallStep::Idle, "switched off");
        assert_eq!(detector.step(true, 0.0, 0.9, TUMBLING), FallStep::Idle, "switched on while tilted");
        assert_eq!(detector.step(true, 0.0, 0.2, STILL), FallStep::Upright);
        assert_eq!(detector.step(true, 0.0, -0.9, TUMBLING), FallStep::Started(Direction::Back));
        let protecting = FallStep::Protecting(Direction::Back);
        assert_eq!(detector.step(false, 0.0, -0.9, TUMBLING), protecting, "completes");
        let steps: Vec<FallStep> = (0..6).map(|_| detector.step(false, 0.0, -1.5, STILL)).collect();
        let end = [FallStep::StiffnessOff { fallen: false }, FallStep::Settling, FallStep::Settling];
        assert_eq!(steps[3..], end, "switched off, it still waits for the body to rest");
        assert!(detector.under_way());
    }

    /// One motion cycle of `engine` at `time`: its reports.
    #[test]
    fn the_protective_arms_stay_clear_of_the_body() {
        let posture = |name: &str, column: usize| {
            PROTECTIVE_POSTURE.iter().find(|(joint, _)| *joint == name).unwrap().1[column].unwrap()
        };
        for column in 0..3 {
            for (arm, prefix) in [(Arm::Left, "L"), (Arm::Right, "R")] {
                let angles = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll"]
                    .map(|joint| posture(&format!("{prefix}{joint}"), column));
                let clearance = clearance_at(arm, angles);
                assert!(
                    clearance >= crate::self_collision::MARGIN_M,
                    "{arm:?}, column {column}: {clearance} m"
                );
            }
        }
    }
}
