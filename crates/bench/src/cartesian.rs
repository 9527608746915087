//! What ALMotion's Cartesian control costs: planning a setPositions (LArm, 10 cm) and a
//! positionInterpolations (LArm, 3 points) as ALMotion's planning thread plans them (the
//! robot description's model and limits, `naobroker_motion::cartesian::Planner`), and
//! ALMemory.getData round trips of another client while setPositions calls keep the
//! planning thread busy, beside the same round trips idle.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use naobroker_framework::{ClientSession, Value};
use naobroker_kinematics::{Chain, Pose, Transform, AXIS_MASK_POSITION};
use naobroker_motion::body::Body;
use naobroker_motion::cartesian::{Planner, Waypoint};
use naobroker_robot::device::{DeviceModel, RobotDescription};

use crate::helpers::{progress, start_broker, time_calls};
use crate::stats::{print, Row, Samples};

/// StandInit's left arm (rad): where both planned moves start.
const STAND_INIT_LARM: [(&str, f64); 4] =
    [("LShoulderPitch", 1.40), ("LShoulderRoll", 0.30), ("LElbowYaw", -1.39), ("LElbowRoll", -1.00)];

/// The hand moved by `offset` (m), in FRAME_TORSO.
fn moved(hand: &Transform, offset: [f64; 3]) -> Transform {
    let mut target = *hand;
    (0..3).for_each(|axis| target.translation[axis] += offset[axis]);
    target
}

/// Planning times (µs) of `calls` plans of `waypoints`, and the plan's key count.
fn time_plans(planner: &Planner, start: &[f64], waypoints: &[Waypoint], calls: usize) -> (Samples, usize) {
    let mut samples = Vec::with_capacity(calls);
    let mut keys = 0;
    for _ in 0..calls {
        let started = Instant::now();
        let plan = planner.plan(start, waypoints).expect("the LArm chain has joints");
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        keys = plan.times.len();
    }
    (Samples(samples), keys)
}

pub fn run(calls: usize, json: bool) {
    let description = DeviceModel::new(RobotDescription::nao_v6()).expect("NAO V6's description");
    let body = Body::new(&description).expect("NAO V6's body");
    let kinematics = body.kinematics.as_deref().expect("NAO V6's description has [kinematics]");
    let model = &kinematics.model;
    let limits: Vec<(f64, f64)> = model
        .joint_names()
        .iter()
        .map(|name| {
            body.joints
                .iter()
                .find(|joint| &joint.name == name)
                .map_or((0.0, 0.0), |j| (j.spec.min, j.spec.max))
        })
        .collect();
    let mut start = vec![0.0; model.joint_names().len()];
    for (name, angle) in STAND_INIT_LARM {
        start[model.joint_index(name).expect("a NAO joint")] = angle;
    }
    let mut pose = Pose::new(model);
    pose.update(model, &start);
    let hand = pose.transform(model.chain_end(Chain::LArm));
    let planner = Planner { model, chain: Chain::LArm, axis_mask: AXIS_MASK_POSITION, limits: &limits };
    // setPositions plans with a provisional 1000 s, then times the keys by speed.
    let reactive = [Waypoint { time: 1000.0, target: moved(&hand, [0.06, 0.0, 0.08]) }];
    let path = [
        Waypoint { time: 1.0, target: moved(&hand, [0.04, 0.0, 0.04]) },
        Waypoint { time: 2.0, target: moved(&hand, [0.06, 0.03, 0.06]) },
        Waypoint { time: 3.0, target: moved(&hand, [0.0, 0.03, 0.02]) },
    ];
    let plans = calls.div_ceil(10).max(10);
    progress("cartesian", format_args!("planning setPositions, {plans} plans"));
    let (set_positions, reactive_keys) = time_plans(&planner, &start, &reactive, plans);
    progress("cartesian", format_args!("planning positionInterpolations, {plans} plans"));
    let (interpolations, path_keys) = time_plans(&planner, &start, &path, plans);

    let (_broker, tcp, _ipc) = start_broker();
    let system = actix_rt::System::new();
    let (idle, busy, answers) = system.block_on(async {
        let session = ClientSession::connect(&tcp, "naobench").await.unwrap();
        let float = vec!["Bench/Float".into(), Value::F64(0.5)];
        session.call("ALMemory", "insertData", float, false).await.unwrap();
        progress("cartesian", format_args!("getData idle, {calls} calls"));
        let get = || {
            let s = session.clone();
            async move { s.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap() }
        };
        let idle = time_calls(calls, get).await;
        let mover = ClientSession::connect(&tcp, "naobench-mover").await.unwrap();
        let hand = mover.call("ALMotion", "getPosition", vec!["LArm".into(), 0.into(), false.into()], false);
        let hand: Vec<f64> = naobroker_framework::from_value(hand.await.unwrap()).unwrap();
        let busy_flag = Rc::new(Cell::new(true));
        let answers = Rc::new(RefCell::new(Vec::new()));
        let (flag, answered) = (Rc::clone(&busy_flag), Rc::clone(&answers));
        // One client keeps the planning thread busy: the hand 10 cm up and back toward the
        // chest and back again, each call answered once its task has started, the next
        // replacing it.
        let moving = actix_rt::spawn(async move {
            let targets = [[-0.06, 0.0, 0.08], [0.0, 0.0, 0.0]].map(|offset| {
                let six: Vec<Value> = (0..6)
                    .map(|axis| Value::from(hand[axis] + offset.get(axis).copied().unwrap_or(0.0)))
                    .collect();
                Value::Array(six)
            });
            while flag.get() {
                let target = targets[answered.borrow().len() % 2].clone();
                let args = vec!["LArm".into(), 0.into(), target, 0.5.into(), 7.into()];
                let started = Instant::now();
                mover.call("ALMotion", "setPositions", args, false).await.unwrap();
                answered.borrow_mut().push(started.elapsed().as_secs_f64() * 1e6);
            }
        });
        progress("cartesian", format_args!("getData while setPositions calls plan, {calls} calls"));
        let busy = time_calls(calls, get).await;
        busy_flag.set(false);
        moving.await.unwrap();
        let answers = Samples(answers.take());
        (idle, busy, answers)
    });
    let rows = vec![
        Row::latencies(
            format!("setPositions LArm 10 cm: planning ({reactive_keys} IK steps)"),
            &set_positions,
        ),
        Row::latencies(
            format!("positionInterpolations LArm 3 points: planning ({path_keys} IK steps)"),
            &interpolations,
        ),
        Row::latencies("getData, another client, ALMotion idle", &idle),
        Row::latencies(
            format!("setPositions answered (RPC, planning, task started), {}", answers.0.len()),
            &answers,
        ),
        Row::latencies("getData while setPositions calls plan", &busy),
    ];
    let notes = vec![
        format!(
            "getData while planning / idle, p50: {:.2} (planning runs on ALMotion's planning thread, not \
             the broker's: ≈ 1 but for the CPU the planning takes from a 2-core machine)",
            busy.p50() / idle.p50()
        ),
        "Planning rows: the IK path planning alone, in naobench's process, from StandInit's left arm."
            .to_owned(),
    ];
    print("cartesian", &rows, &notes, json);
}
