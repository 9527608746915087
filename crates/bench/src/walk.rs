//! `naobench walk`: naobroker-walk on the physically simulated NAO (MuJoCo), one walk cycle
//! per LoLA cycle (12 ms) as ALMotion runs it, judged by the simulator's ground truth: the top
//! straight speed without a fall over runs of a few metres, the turn rate, the odometry's
//! error per metre, falls per 100 m at fixed speeds, and the walk's compute per cycle beside
//! the physics step's, measured in the same run. NAOqi's own walk (about 0.1 m/s, its default
//! MaxStepX 0.04 m) is the reference; the walk at NAOqi's default step is the peer measured
//! here.

use std::time::Instant;

use naobroker_kinematics::transform::wrap_angle;
use naobroker_kinematics::Model;
use naobroker_lola::names::JOINTS;
use naobroker_physics::{PhysicalBody, RobotModel, World};
use naobroker_posture::library::STAND_INIT;
use naobroker_walk::{LegGeometry, Step, Walk, WalkParameters, WalkSensors, LEFT_LEG, RIGHT_LEG};

use crate::helpers::progress;
use crate::stats::{print, Row, Samples};

const CYCLE_S: f64 = 0.012;
/// The forward steps tried for the top speed (m a step); NAOqi's default MaxStepX first.
const STEPS_M: [f64; 5] = [0.04, 0.05, 0.06, 0.07, 0.08];
/// The fixed speeds of the falls-per-100-m rows, as fractions of the walk's largest step.
const ENDURANCE_FRACTIONS: [f64; 3] = [0.5, 0.75, 1.0];
const ENDURANCE_M: f64 = 100.0;
/// A run that has not gone its distance in this long has stalled.
const PATIENCE_S: f64 = 120.0;

/// The robot standing at StandInit, its walk in the stance, ready to step.
struct Walker {
    body: PhysicalBody,
    walk: Walk,
    joints: [[Option<usize>; 6]; 2],
    /// The walk's compute per cycle (µs), and the physics step's.
    walk_us: Vec<f64>,
    physics_us: Vec<f64>,
}

impl Walker {
    fn new(parameters: WalkParameters, still_cycles: usize) -> Walker {
        let model = Model::nao_v6();
        let geometry = LegGeometry::from_model(&model).expect("NAO's legs");
        let mut body = PhysicalBody::new(&RobotModel::nao_v6(), World::Flat, &JOINTS)
            .expect("MuJoCo, from the README's test command");
        let angle =
            |name: &&str| STAND_INIT.joints.iter().find(|(joint, _)| joint == name).map_or(0.0, |(_, a)| *a);
        let stand_init: Vec<f64> = JOINTS.iter().map(angle).collect();
        body.ramp_to(&stand_init, 2.0, CYCLE_S);
        (0..still_cycles).for_each(|_| body.advance(CYCLE_S));
        // LoLA carries one HipYawPitch, the left one: the right leg's has no joint of its own.
        let joint = |name: &str| JOINTS.iter().position(|joint| *joint == name);
        let joints = [LEFT_LEG.map(joint), RIGHT_LEG.map(joint)];
        let legs =
            joints.map(|leg| leg.map(|index| index.map_or(0.0, |index| body.measured_position(index))));
        let legs = [legs[0], [legs[0][0], legs[1][1], legs[1][2], legs[1][3], legs[1][4], legs[1][5]]];
        let mut walk = Walk::new(geometry, parameters);
        walk.start(legs);
        let mut walker = Walker { body, walk, joints, walk_us: Vec::new(), physics_us: Vec::new() };
        for _ in 0..(1.0 / CYCLE_S) as usize {
            walker.cycle();
        }
        walker.walk_us.clear();
        walker.physics_us.clear();
        walker
    }

    /// One walk cycle and one physics cycle; false when the robot has fallen.
    fn cycle(&mut self) -> bool {
        let fsr = self.body.fsr();
        let sensors = WalkSensors {
            foot_weight_kg: fsr.map(|foot| foot.iter().sum()),
            gyroscope: self.body.inertial().gyroscope,
        };
        let started = Instant::now();
        let output = *self.walk.cycle(CYCLE_S, &sensors);
        self.walk_us.push(started.elapsed().as_secs_f64() * 1e6);
        for (leg, angles) in self.joints.iter().zip(output.legs) {
            for (joint, angle) in leg.iter().zip(angles) {
                if let Some(joint) = joint {
                    self.body.command(*joint, angle, 1.0);
                }
            }
        }
        let started = Instant::now();
        self.body.advance(CYCLE_S);
        self.physics_us.push(started.elapsed().as_secs_f64() * 1e6);
        !self.body.truth().fallen
    }

    fn place(&self) -> [f64; 2] {
        let torso = self.body.truth().torso;
        [torso[0], torso[1]]
    }
}

fn parameters(max_forward_m: f64) -> WalkParameters {
    WalkParameters { max_forward_m, ..WalkParameters::default() }
}

/// How a straight run went.
struct Run {
    fell: bool,
    /// Truth: metres from where it started.
    walked: f64,
    /// Truth: metres a second from the first step to the distance.
    speed: f64,
    /// |odometry − truth| per metre walked.
    odometry_error: f64,
}

fn straight(max_forward_m: f64, distance_m: f64, still_cycles: usize, compute: &mut Compute) -> Run {
    let mut walker = Walker::new(parameters(max_forward_m), still_cycles);
    let start = walker.place();
    let odometry_start = walker.walk.odometry()[0];
    walker.walk.request(Step { forward: max_forward_m, ..Step::ZERO });
    let mut cycles = 0usize;
    let mut fell = false;
    loop {
        if !walker.cycle() {
            fell = true;
            break;
        }
        cycles += 1;
        let [x, y] = walker.place();
        if (x - start[0]).hypot(y - start[1]) >= distance_m || cycles as f64 * CYCLE_S > PATIENCE_S {
            break;
        }
    }
    let [x, y] = walker.place();
    let walked = (x - start[0]).hypot(y - start[1]);
    let odometry = walker.walk.odometry()[0] - odometry_start;
    compute.add(&mut walker);
    Run {
        fell,
        walked,
        speed: walked / (cycles as f64 * CYCLE_S),
        odometry_error: (odometry - walked).abs() / walked.max(1e-9),
    }
}

/// Every cycle's compute, over every run.
#[derive(Default)]
struct Compute {
    walk_us: Vec<f64>,
    physics_us: Vec<f64>,
}

impl Compute {
    fn add(&mut self, walker: &mut Walker) {
        self.walk_us.append(&mut walker.walk_us);
        self.physics_us.append(&mut walker.physics_us);
    }
}

/// Turning in place at the largest turning step for `seconds`: rad/s by the truth, and the
/// odometry's error per radian.
fn turn_rate(seconds: f64, compute: &mut Compute) -> (f64, f64, bool) {
    let mut walker = Walker::new(WalkParameters::default(), 0);
    walker.walk.request(Step { turn: WalkParameters::default().max_turn_rad, ..Step::ZERO });
    let (mut turned, mut last) = (0.0, walker.body.truth().torso[5]);
    let odometry_start = walker.walk.odometry()[2];
    let mut fell = false;
    for _ in 0..(seconds / CYCLE_S) as usize {
        if !walker.cycle() {
            fell = true;
            break;
        }
        let yaw = walker.body.truth().torso[5];
        let step = yaw - last;
        turned += wrap_angle(step);
        last = yaw;
    }
    let odometry = walker.walk.odometry()[2] - odometry_start;
    compute.add(&mut walker);
    (turned / seconds, (odometry - turned).abs() / turned.abs().max(1e-9), fell)
}

/// Walk `distance_m` straight at `max_forward_m` a step in legs of at most 25 m, standing the
/// robot up again after each fall: the falls, and the metres walked.
fn endurance(max_forward_m: f64, distance_m: f64, compute: &mut Compute) -> (u64, f64) {
    let (mut walked, mut falls) = (0.0, 0u64);
    for attempt in 0..100 {
        if walked >= distance_m {
            break;
        }
        let run = straight(max_forward_m, (distance_m - walked).min(25.0), 3 * attempt, compute);
        walked += run.walked;
        falls += u64::from(run.fell);
    }
    (falls, walked)
}

fn row(name: String, speed: f64, falls: f64, metres: f64, odometry_error: f64, turn_rate: f64) -> Row {
    Row {
        name,
        fields: vec![
            ("m/s (p50)", speed),
            ("falls", falls),
            ("metres", metres),
            ("odometry error / m (p50)", odometry_error),
            ("rad/s", turn_rate),
        ],
    }
}

pub fn run(runs: usize, distance_m: f64, json: bool) {
    let mut rows = Vec::new();
    let mut compute = Compute::default();
    let mut top: Option<(f64, f64)> = None;
    let mut naoqi_step_speed = f64::NAN;
    for max_forward_m in STEPS_M {
        progress("walk", format!("{runs} runs of {distance_m} m at {max_forward_m} m a step"));
        let outcomes: Vec<Run> =
            (0..runs).map(|run| straight(max_forward_m, distance_m, 7 * run, &mut compute)).collect();
        let falls = outcomes.iter().filter(|run| run.fell).count();
        let walked: f64 = outcomes.iter().map(|run| run.walked).sum();
        let standing: Vec<&Run> = outcomes.iter().filter(|run| !run.fell).collect();
        let speed = Samples(standing.iter().map(|run| run.speed).collect()).p50();
        let error = Samples(standing.iter().map(|run| run.odometry_error).collect()).p50();
        if max_forward_m == STEPS_M[0] {
            naoqi_step_speed = speed;
        }
        if falls == 0 && top.is_none_or(|(_, fastest)| speed > fastest) {
            top = Some((max_forward_m, speed));
        }
        let name = format!("straight, {max_forward_m} m a step, {runs} × {distance_m} m");
        rows.push(row(name, speed, falls as f64, walked, error, f64::NAN));
    }
    progress("walk", "turning in place for 10 s");
    let (rate, turn_error, turn_fell) = turn_rate(10.0, &mut compute);
    let turn = WalkParameters::default().max_turn_rad;
    rows.push(row(
        format!("turning in place, {turn} rad a step (error / rad)"),
        f64::NAN,
        f64::from(u8::from(turn_fell)),
        0.0,
        turn_error,
        rate,
    ));
    let largest = WalkParameters::default().max_forward_m;
    for fraction in ENDURANCE_FRACTIONS {
        let step = fraction * largest;
        progress("walk", format!("{ENDURANCE_M} m at {step:.3} m a step"));
        let (falls, walked) = endurance(step, ENDURANCE_M, &mut compute);
        let name = format!("falls per {ENDURANCE_M} m, {step:.3} m a step");
        rows.push(row(name, f64::NAN, falls as f64 * ENDURANCE_M / walked, walked, f64::NAN, f64::NAN));
    }
    let walk = Samples(compute.walk_us);
    let physics = Samples(compute.physics_us);
    let mut notes = vec![format!(
        "The walk's compute per 12 ms cycle: p50 {:.1} µs, p99 {:.1} µs ({:.2} % of the cycle at p99; \
         on NAO V6's Atom, several times slower, still under {:.1} %); the physics step beside it (peer, \
         same run): p50 {:.0} µs, p99 {:.0} µs.",
        walk.p50(),
        walk.p99(),
        100.0 * walk.p99() / 12_000.0,
        100.0 * 10.0 * walk.p99() / 12_000.0,
        physics.p50(),
        physics.p99(),
    )];
    match top {
        Some((step, speed)) => notes.push(format!(
            "Top straight speed without a fall in {runs} runs of {distance_m} m: {speed:.3} m/s at {step} m \
             a step, {:.2}× the walk at NAOqi's default step (0.04 m) measured here; NAOqi's own walk: about \
             0.1 m/s.",
            speed / naoqi_step_speed
        )),
        None => notes.push(format!("No step size went {runs} runs of {distance_m} m without a fall.")),
    }
    print("walk", &rows, &notes, json);
}
