//! ALMotion's whole body on the physical NAO (MuJoCo behind lolasim's LoLA, stepped, the real
//! broker): balancing on the left leg with the right foot lifted 5 cm for 5 s, NAOqi's
//! `almotion_wbKick.py` and `almotion_hulaHoop.py` (NAOqi 2.1's examples, their calls in
//! order, the `almath` products written out), judged by the simulator's ground truth alone:
//! the robot never falls, and its centre of mass stays inside the support polygon of the
//! soles on the ground every cycle (measured, the smallest margin printed).

use naobroker_balance::SupportPolygon;
use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;
use naobroker_kinematics::transform::axis_angle;
use naobroker_kinematics::Transform;
use naobroker_lolasim::{Truth, World};

/// The physical model's sole around the left ankle (robots/nao-v6.toml, `[physics.feet]
/// sole_m`): back, front, right, left (m); the right sole mirrors it.
const SOLE_M: [f64; 4] = [-0.050, 0.100, -0.03877, 0.05002];
/// An ankle this far above where it stands (m) has left the ground: a sole rolled onto its
/// edge raises its ankle by less.
const LIFTED_M: f64 = 0.01;
const FRAME_WORLD: i64 = 1;
const FRAME_ROBOT: i64 = 2;
const AXIS_MASK_ALL: i64 = 63;

/// The physical robot, awake at StandInit, every cycle judged by the ground truth.
struct Judged {
    bench: LolaBench,
    /// Each ankle's height standing.
    standing: [f64; 2],
    /// The smallest margin (m) of the centre of mass inside the support polygon so far.
    smallest_margin: f64,
    /// How far the torso went from where it stood (x, y: least and most), and how high and
    /// how far forward (x) the right ankle went, since the last `reset_reach`.
    torso_reach: [f64; 4],
    right_ankle_reach: [f64; 2],
    stood: Truth,
}

impl Judged {
    fn awake() -> Judged {
        let mut bench = LolaBench::physical(World::Flat, HOLD_NO_STALL);
        bench.steps(2);
        bench.run_motion("wakeUp");
        bench.steps(40);
        let stood = bench.sim.truth().unwrap();
        let standing = stood.ankle_heights.expect("NAO's legs");
        let mut judged = Judged {
            bench,
            standing,
            smallest_margin: f64::INFINITY,
            torso_reach: [0.0; 4],
            right_ankle_reach: [0.0; 2],
            stood,
        };
        judged.reset_reach();
        judged
    }

    /// Measure the torso's and the right ankle's moves from where they are now.
    fn reset_reach(&mut self) {
        self.stood = self.bench.sim.truth().unwrap();
        self.torso_reach = [0.0; 4];
        self.right_ankle_reach = [0.0; 2];
    }

    fn call(&self, method: &str, args: Vec<Value>) -> Value {
        self.bench.call("ALMotion", method, args)
    }

    /// The polygon of the soles on the ground, and the centre of mass's margin inside it.
    fn margin(&self) -> (f64, [bool; 2]) {
        let truth = self.bench.sim.truth().unwrap();
        let feet = truth.feet.unwrap();
        let heights = truth.ankle_heights.unwrap();
        let on_ground = [0, 1].map(|side| heights[side] < self.standing[side] + LIFTED_M);
        let mut corners = Vec::new();
        for side in 0..2 {
            if !on_ground[side] {
                continue;
            }
            let [back, front, right, left] = SOLE_M;
            let (right, left) = if side == 0 { (right, left) } else { (-left, -right) };
            let [x, y, yaw] = feet[side];
            let (sin, cos) = yaw.sin_cos();
            for (dx, dy) in [(back, right), (front, right), (front, left), (back, left)] {
                corners.push([x + dx * cos - dy * sin, y + dx * sin + dy * cos]);
            }
        }
        let polygon = SupportPolygon::hull(&corners);
        (polygon.depth([truth.com[0], truth.com[1]]), on_ground)
    }

    /// One LoLA cycle: the robot must stand, its centre of mass over its support.
    fn step(&mut self) {
        self.bench.step();
        let truth = self.bench.sim.truth().unwrap();
        assert!(!truth.fallen, "fell: {truth:?}");
        let (margin, on_ground) = self.margin();
        assert!(
            margin > 0.0,
            "the centre of mass left the support polygon ({on_ground:?}) by {margin} m: {truth:?}"
        );
        self.smallest_margin = self.smallest_margin.min(margin);
        let (dx, dy) = (truth.torso[0] - self.stood.torso[0], truth.torso[1] - self.stood.torso[1]);
        let reach = &mut self.torso_reach;
        *reach = [reach[0].min(dx), reach[1].max(dx), reach[2].min(dy), reach[3].max(dy)];
        let right = truth.feet.unwrap()[1][0] - self.stood.feet.unwrap()[1][0];
        let up = truth.ankle_heights.unwrap()[1] - self.stood.ankle_heights.unwrap()[1];
        self.right_ankle_reach = [self.right_ankle_reach[0].max(up), self.right_ankle_reach[1].max(right)];
    }

    fn steps(&mut self, n: usize) {
        (0..n).for_each(|_| self.step());
    }

    /// Post a blocking call of ALMotion and step while it runs.
    fn run(&mut self, method: &str, args: Vec<Value>) -> usize {
        self.run_of("ALMotion", method, args)
    }

    /// Post a blocking call of `module` and step while it runs.
    fn run_of(&mut self, module: &str, method: &str, args: Vec<Value>) -> usize {
        let task = self.bench.session.post(module, method, args).unwrap();
        let mut steps = 0;
        while self.bench.call(module, "isRunning", vec![task.into()]) == Value::from(true) {
            assert!(steps < 5000, "{method} still runs after 60 s");
            self.step();
            steps += 1;
        }
        steps
    }

    /// NAOqi's examples' start: `wakeUp`, then `goToPosture("StandInit", 0.5)`.
    fn go_to_stand_init(&mut self) {
        self.run("wakeUp", vec![]);
        self.run_of("ALRobotPosture", "goToPosture", vec!["StandInit".into(), 0.5.into()]);
    }

    fn report_margin(&self) {
        println!(
            "the centre of mass stayed at least {:.1} mm inside the support polygon",
            self.smallest_margin * 1e3
        );
    }

    fn transform(&self, effector: &str, frame: i64) -> Transform {
        let value = self.call("getTransform", vec![effector.into(), frame.into(), false.into()]);
        let numbers: Vec<f64> = value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        Transform::from_matrix16(&numbers.try_into().unwrap()).unwrap()
    }

    fn right_ankle_lift(&self) -> f64 {
        self.bench.sim.truth().unwrap().ankle_heights.unwrap()[1] - self.standing[1]
    }
}

fn matrix(transform: &Transform) -> Value {
    Value::Array(transform.to_matrix16().iter().map(|&v| Value::from(v)).collect())
}

fn numbers(values: &[f64]) -> Value {
    Value::Array(values.iter().map(|&v| Value::from(v)).collect())
}

fn shift(x: f64, y: f64, z: f64) -> Transform {
    Transform::translation([x, y, z])
}

fn turn(axis: [f64; 3], angle: f64) -> Transform {
    Transform { rotation: axis_angle(axis, angle), translation: [0.0; 3] }
}

#[test]
fn on_the_left_leg_the_right_foot_lifted_5_cm_for_5_s_the_robot_stands() {
    let mut robot = Judged::awake();
    robot.call("wbEnable", vec![true.into()]);
    robot.call("wbFootState", vec!["Fixed".into(), "Legs".into()]);
    robot.call("wbEnableBalanceConstraint", vec![true.into(), "Legs".into()]);
    let steps = robot.run("wbGoToBalance", vec!["LLeg".into(), 2.5.into()]);
    assert!((205..=215).contains(&steps), "wbGoToBalance blocks its 2.5 s: {steps} cycles of 12 ms");
    let (margin, on_ground) = robot.margin();
    assert_eq!(on_ground, [true, true]);
    let com = robot.bench.sim.truth().unwrap().com;
    let left = robot.bench.sim.truth().unwrap().feet.unwrap()[0];
    assert!(
        (com[1] - left[1]).abs() < 0.02,
        "the centre of mass over the left foot: {com:?}, {left:?} ({margin})"
    );
    robot.call("wbFootState", vec!["Free".into(), "RLeg".into()]);
    let foot = robot.transform("RLeg", FRAME_ROBOT);
    let lifted = shift(0.0, 0.0, 0.05).then(&foot);
    let args = vec!["RLeg".into(), FRAME_ROBOT.into(), matrix(&lifted), AXIS_MASK_ALL.into(), 1.5.into()];
    robot.run("transformInterpolations", args);
    let mut lowest = f64::INFINITY;
    for _ in 0..417 {
        robot.step();
        let (_, on_ground) = robot.margin();
        assert_eq!(on_ground, [true, false], "on the left foot alone");
        lowest = lowest.min(robot.right_ankle_lift());
    }
    assert!(lowest > 0.04, "the right foot held up 5 cm for 5 s (lowest {lowest} m)");
    println!("the right ankle held between {lowest:.4} m and {:.4} m up", robot.right_ankle_reach[0]);
    let args = vec!["RLeg".into(), FRAME_ROBOT.into(), matrix(&foot), AXIS_MASK_ALL.into(), 1.5.into()];
    robot.run("transformInterpolations", args);
    robot.call("wbFootState", vec!["Fixed".into(), "Legs".into()]);
    robot.run("wbGoToBalance", vec!["Legs".into(), 2.0.into()]);
    robot.steps(100);
    assert_eq!(robot.margin().1, [true, true], "back on both feet");
    robot.call("wbEnable", vec![false.into()]);
    robot.steps(100);
    robot.report_margin();
}

/// NAOqi 2.1's `almotion_wbKick.py`: wakeUp, StandInit, the whole body on with both feet
/// fixed and the balance over both, the centre of mass to the left leg in 2.5 s, the right
/// foot free; its path from its transform in FRAME_WORLD: up 7 cm turned 5° about y, 8 cm
/// forward up there, back; at 1.2, 1.6, 2.3 s; a second's pause, then rest.
#[test]
fn naoqi_wb_kick_runs_without_a_fall() {
    let mut robot = Judged::awake();
    robot.go_to_stand_init();
    robot.call("wbEnable", vec![true.into()]);
    robot.call("wbFootState", vec!["Fixed".into(), "Legs".into()]);
    robot.call("wbEnableBalanceConstraint", vec![true.into(), "Legs".into()]);
    robot.run("wbGoToBalance", vec!["LLeg".into(), 2.5.into()]);
    robot.call("wbFootState", vec!["Free".into(), "RLeg".into()]);
    let (dx, dz, dwy) = (0.08, 0.07, 5.0f64.to_radians());
    let current = robot.transform("RLeg", FRAME_WORLD);
    let first = current.then(&shift(0.0, 0.0, dz)).then(&turn([0.0, 1.0, 0.0], dwy));
    let second = current.then(&shift(dx, 0.0, dz));
    let path = Value::Array(vec![matrix(&first), matrix(&second), matrix(&current)]);
    let args = vec!["RLeg".into(), FRAME_WORLD.into(), path, AXIS_MASK_ALL.into(), numbers(&[1.2, 1.6, 2.3])];
    robot.reset_reach();
    let steps = robot.run("transformInterpolations", args);
    assert!((188..=198).contains(&steps), "the kick's 2.3 s: {steps} cycles");
    let [up, forward] = robot.right_ankle_reach;
    assert!(up > 0.06 && forward > 0.07, "the foot kicked: {up} m up, {forward} m forward");
    robot.steps(83);
    robot.run("rest", vec![]);
    robot.steps(100);
    robot.report_margin();
}

/// NAOqi 2.1's `almotion_hulaHoop.py`: wakeUp, StandInit, the torso's transform in
/// FRAME_ROBOT; four targets about its position, 3 cm forward bent back 8°, right bent left,
/// back bent forward, left bent right; twice round, forward once more and back, 0.5 s each,
/// with `transformInterpolations` (the whole body not enabled: both feet stay); rest.
#[test]
fn naoqi_hula_hoop_runs_without_a_fall() {
    let mut robot = Judged::awake();
    robot.go_to_stand_init();
    let current = robot.transform("Torso", FRAME_ROBOT);
    let (dx, dy, dwx, dwy) = (0.03, 0.03, 8.0f64.to_radians(), 8.0f64.to_radians());
    let at = shift(current.translation[0], current.translation[1], current.translation[2]);
    let targets = [
        at.then(&shift(dx, 0.0, 0.0)).then(&turn([0.0, 1.0, 0.0], -dwy)),
        at.then(&shift(0.0, -dy, 0.0)).then(&turn([1.0, 0.0, 0.0], -dwx)),
        at.then(&shift(-dx, 0.0, 0.0)).then(&turn([0.0, 1.0, 0.0], dwy)),
        at.then(&shift(0.0, dy, 0.0)).then(&turn([1.0, 0.0, 0.0], dwx)),
    ];
    let mut path: Vec<Value> = targets.iter().chain(&targets).map(matrix).collect();
    path.push(matrix(&targets[0]));
    path.push(matrix(&current));
    let times: Vec<f64> = (1..=path.len()).map(|i| i as f64 * 0.5).collect();
    let args =
        vec!["Torso".into(), FRAME_ROBOT.into(), Value::Array(path), AXIS_MASK_ALL.into(), numbers(&times)];
    robot.reset_reach();
    let steps = robot.run("transformInterpolations", args);
    assert!((412..=422).contains(&steps), "the hoop's 5 s: {steps} cycles");
    let [back, forward, right, left] = robot.torso_reach;
    let swung = [-back, forward, -right, left];
    assert!(swung.iter().all(|&reach| reach > 0.015), "the torso swung round: {swung:?} m");
    println!("the torso swung {swung:.3?} m (back, forward, right, left)");
    robot.run("rest", vec![]);
    robot.steps(100);
    robot.report_margin();
}
