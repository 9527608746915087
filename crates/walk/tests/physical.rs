//! The walk on the physically simulated NAO (MuJoCo), driven as the motion thread drives it
//! under LoLA: one walk cycle per 12 ms, the feet's pressure sensors and the gyroscope read
//! back. Judged by the simulator's ground truth alone.

use naobroker_kinematics::transform::wrap_angle;
use naobroker_kinematics::Model;
use naobroker_physics::{PhysicalBody, RobotModel, Truth, World};
use naobroker_posture::library::{self, Posture};
use naobroker_walk::{LegGeometry, Step, Walk, WalkParameters, WalkSensors, WalkState, LEFT_LEG, RIGHT_LEG};

const JOINTS: [&str; 25] = naobroker_lola::names::JOINTS;
const CYCLE_S: f64 = 0.012;

fn joint(name: &str) -> Option<usize> {
    JOINTS.iter().position(|&joint| joint == name)
}

fn angle(posture: &Posture, name: &str) -> f64 {
    posture.joints.iter().find(|(joint, _)| *joint == name).map(|(_, angle)| *angle).unwrap()
}

/// The robot woken from its crouch to StandInit in 2 s, then still for 1.2 s.
fn standing() -> PhysicalBody {
    let mut body = PhysicalBody::new(&RobotModel::nao_v6(), World::Flat, &JOINTS).expect("MuJoCo");
    let stand_init: Vec<f64> = JOINTS.iter().map(|name| angle(&library::STAND_INIT, name)).collect();
    body.ramp_to(&stand_init, 2.0, CYCLE_S);
    body.ramp_to(&stand_init, 1.2, CYCLE_S);
    body
}

/// A walking robot under test, and its yaw as the simulator measures it, unwrapped.
struct Walker {
    body: PhysicalBody,
    walk: Walk,
    yaw: f64,
    last_yaw: f64,
}

impl Walker {
    /// Standing at StandInit, then in the walk's stance.
    fn new(parameters: WalkParameters) -> Walker {
        let geometry = LegGeometry::from_model(&Model::nao_v6()).unwrap();
        let body = standing();
        let last_yaw = body.truth().torso[5];
        let mut walker = Walker { body, walk: Walk::new(geometry, parameters), yaw: last_yaw, last_yaw };
        let legs = [LEFT_LEG, RIGHT_LEG].map(|names| {
            names.map(|name| {
                // One motor moves both HipYawPitch joints: LoLA carries the left one.
                let name = if name == "RHipYawPitch" { "LHipYawPitch" } else { name };
                walker.body.measured_position(joint(name).unwrap())
            })
        });
        walker.walk.start(legs);
        assert!(walker.run(1.0), "fell going to the walk's stance");
        assert_eq!(walker.walk.state(), WalkState::Standing);
        walker
    }

    fn sensors(&self) -> WalkSensors {
        WalkSensors {
            foot_weight_kg: self.body.fsr().map(|foot| foot.iter().sum()),
            gyroscope: self.body.inertial().gyroscope,
        }
    }

    /// `seconds` of walk cycles; false as soon as the robot falls.
    fn run(&mut self, seconds: f64) -> bool {
        for _ in 0..(seconds / CYCLE_S).round() as usize {
            let sensors = self.sensors();
            let output = *self.walk.cycle(CYCLE_S, &sensors);
            for (names, angles) in [(LEFT_LEG, output.legs[0]), (RIGHT_LEG, output.legs[1])] {
                for (name, angle) in names.iter().zip(angles) {
                    if let Some(index) = joint(name) {
                        self.body.command(index, angle, 1.0);
                    }
                }
            }
            for (arm, name) in ["LShoulderPitch", "RShoulderPitch"].into_iter().enumerate() {
                let standing = angle(&library::STAND_INIT, name);
                self.body.command(joint(name).unwrap(), standing + output.shoulder_pitch_swing[arm], 1.0);
            }
            self.body.advance(CYCLE_S);
            let yaw = self.body.truth().torso[5];
            let turned = yaw - self.last_yaw;
            self.yaw += wrap_angle(turned);
            self.last_yaw = yaw;
            if self.body.truth().fallen {
                return false;
            }
        }
        true
    }

    /// Walk `step`s for `seconds`, then stop: false if it fell or never came to a stand.
    fn walk(&mut self, step: Step, seconds: f64) -> bool {
        self.walk.request(step);
        let walked = self.run(seconds);
        self.walk.request(Step::ZERO);
        walked && self.run(1.5) && self.walk.state() == WalkState::Standing
    }

    /// x, y (m), yaw (rad, unwrapped) from where the walk started.
    fn moved(&self, from: &Truth, from_yaw: f64) -> [f64; 3] {
        let truth = self.body.truth();
        [truth.torso[0] - from.torso[0], truth.torso[1] - from.torso[1], self.yaw - from_yaw]
    }

    fn truth(&self) -> Truth {
        self.body.truth()
    }
}

fn walker() -> Walker {
    Walker::new(WalkParameters::default())
}

#[test]
fn it_walks_forward_2_m_at_its_top_speed_and_its_odometry_is_within_a_tenth() {
    let mut walker = walker();
    let (from, yaw) = (walker.truth(), walker.yaw);
    let fastest = Step { forward: 1.0, ..Step::ZERO };
    assert!(walker.walk(fastest, 10.0), "fell: {:?}", walker.truth());
    let [x, y, turned] = walker.moved(&from, yaw);
    let odometry = walker.walk.odometry();
    assert!(x > 1.8, "walked {x} m forward in 10 s");
    assert!(y.abs() < 0.2 && turned.abs() < 0.2, "drifted {y} m, turned {turned} rad");
    assert!((odometry[0] - x).abs() < 0.1 * x, "odometry {odometry:?}, walked {x} m");
}

#[test]
fn it_walks_backward_and_sideways_both_ways_without_falling() {
    for (step, seconds) in [
        (Step { forward: -1.0, ..Step::ZERO }, 4.0),
        (Step { left: 1.0, ..Step::ZERO }, 4.0),
        (Step { left: -1.0, ..Step::ZERO }, 4.0),
    ] {
        let mut walker = walker();
        let (from, yaw) = (walker.truth(), walker.yaw);
        assert!(walker.walk(step, seconds), "{step:?} fell: {:?}", walker.truth());
        let [x, y, _] = walker.moved(&from, yaw);
        let along = if step.forward != 0.0 { x * step.forward.signum() } else { y * step.left.signum() };
        assert!(along > 0.4, "{step:?}: moved {x}, {y} m");
    }
}

#[test]
fn it_turns_a_full_circle_in_place_both_ways() {
    for turn in [1.0, -1.0] {
        let mut walker = walker();
        let (from, yaw) = (walker.truth(), walker.yaw);
        let step = Step { turn, ..Step::ZERO };
        let mut seconds = 0.0;
        walker.walk.request(step);
        while walker.moved(&from, yaw)[2].abs() < std::f64::consts::TAU {
            assert!(walker.run(0.5), "turning {turn} fell: {:?}", walker.truth());
            seconds += 0.5;
            assert!(seconds < 30.0, "turned {:?} in 30 s", walker.moved(&from, yaw));
        }
        walker.walk.request(Step::ZERO);
        assert!(walker.run(1.5) && walker.walk.state() == WalkState::Standing);
        let [x, y, _] = walker.moved(&from, yaw);
        assert!(x.hypot(y) < 0.25, "turning in place wandered {x}, {y} m");
    }
}

#[test]
fn it_starts_and_stops_20_times_without_falling() {
    let mut walker = walker();
    for time in 0..20 {
        let step = Step { forward: 0.04, left: 0.0, turn: if time % 2 == 0 { 0.2 } else { -0.2 } };
        assert!(walker.walk(step, 1.0), "start and stop {time} fell: {:?}", walker.truth());
    }
}
