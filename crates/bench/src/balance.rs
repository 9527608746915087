//! What the whole body costs the motion cycle: one `naobroker-balance` solve (the centre of
//! mass held over the left foot while the right foot rises, as `wbGoToBalance` and a foot's
//! path ask every cycle), beside its parts measured in the same run: one closed-form solve of
//! both legs (the walk's, which a balance round repeats) and one forward kinematics with the
//! centre of mass.

use std::time::Instant;

use naobroker_balance::{over_foot, ComGoal, Goal, Side, WholeBody};
use naobroker_kinematics::{Chain, Part, Pose};
use naobroker_motion::body::Body;
use naobroker_posture::library::STAND_INIT;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_walk::{FootPose, LegGeometry};

use crate::stats::{print, Row, Samples};

/// Time `calls` runs of `run(call)` (µs each).
fn time(calls: usize, mut run: impl FnMut(usize)) -> Samples {
    Samples(
        (0..calls)
            .map(|call| {
                let started = Instant::now();
                run(call);
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

pub fn run(calls: usize, json: bool) {
    let description = DeviceModel::new(RobotDescription::nao_v6()).expect("NAO V6's description");
    let body = Body::new(&description).expect("NAO V6's body");
    let kinematics = body.kinematics.as_deref().expect("NAO V6's description has [kinematics]");
    let model = &kinematics.model;
    let limits = model
        .joint_names()
        .iter()
        .map(|name| {
            let joint = body.joints.iter().find(|joint| &joint.name == name);
            joint.map_or((0.0, 0.0), |joint| (joint.spec.min, joint.spec.max))
        })
        .collect();
    let mut angles = vec![0.0; model.joint_names().len()];
    // NAOqi's StandInit, from ALRobotPosture's library (its hands are not in the model).
    for &(name, angle) in STAND_INIT.joints {
        if let Some(index) = model.joint_index(name) {
            angles[index] = angle;
        }
    }
    let mut solver = WholeBody::new(model, limits).expect("NAO's legs");
    let (torso, feet) = solver.anchor(model, &angles);
    let over_left = over_foot(&feet, Side::Left);
    eprintln!("balance: {calls} whole-body solves, the right foot rising 0 to 5 cm");
    let solves = time(calls, |call| {
        let mut lifted = feet;
        lifted[1].translation[2] += 0.05 * (call % 100) as f64 / 100.0;
        let goal = Goal { torso, feet: lifted, support: [true, false], com: ComGoal::At(over_left) };
        std::hint::black_box(solver.solve(model, &goal, &mut angles));
    });
    eprintln!("balance: {calls} solves of both legs alone (the walk's inverse kinematics)");
    let geometry = LegGeometry::from_model(model).expect("NAO's legs");
    let mut pose = Pose::new(model);
    pose.update(model, &angles);
    let in_torso = |chain: Chain| {
        let sole = pose.transform(model.chain_end(chain));
        FootPose { position: sole.translation, rotation: sole.rotation }
    };
    let (left, right) = (in_torso(Chain::LLeg), in_torso(Chain::RLeg));
    let legs = time(calls, |_| {
        std::hint::black_box(geometry.solve(&left, &right, 0.0));
    });
    eprintln!("balance: {calls} forward kinematics with the centre of mass");
    let forward = time(calls, |_| {
        pose.update(model, &angles);
        std::hint::black_box(pose.com(model, Part::Body));
    });
    let ratio = solves.p50() / (legs.p50() + forward.p50());
    let notes = vec![format!(
        "a solve costs {ratio:.1} × one legs' solve plus one forward kinematics (p50): the balance's rounds"
    )];
    let rows = [
        Row::latencies("whole-body solve (over the left foot, the right rising)", &solves),
        Row::latencies("both legs' closed-form inverse kinematics", &legs),
        Row::latencies("forward kinematics and centre of mass", &forward),
    ];
    print("balance", &rows, &notes, json);
}
