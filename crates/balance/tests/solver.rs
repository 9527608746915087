//! The whole-body solver on NAO V6's model: from StandInit, the centre of mass goes over one
//! foot with the feet where they were, a foot lifts while the centre of mass stays there, a
//! torso target is followed, and a cycle allocates nothing.

use naobroker_alloc_counter::{counted, start_counting, Counting};
use naobroker_balance::{over_foot, ComGoal, Goal, Side, WholeBody, MARGIN_M};
use naobroker_kinematics::{Chain, Model, Part, Pose, Transform};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// NAOqi's StandInit (the leg and arm joints that are not zero).
fn stand_init(model: &Model) -> Vec<f64> {
    let mut angles = vec![0.0; model.joint_names().len()];
    for (name, angle) in [
        ("LHipPitch", -0.45),
        ("RHipPitch", -0.45),
        ("LKneePitch", 0.7),
        ("RKneePitch", 0.7),
        ("LAnklePitch", -0.35),
        ("RAnklePitch", -0.35),
        ("LShoulderPitch", 1.4),
        ("RShoulderPitch", 1.4),
        ("LShoulderRoll", 0.3),
        ("RShoulderRoll", -0.3),
        ("LElbowRoll", -1.0),
        ("RElbowRoll", 1.0),
    ] {
        angles[model.joint_index(name).unwrap()] = angle;
    }
    angles
}

fn wide_limits(model: &Model) -> Vec<(f64, f64)> {
    vec![(-3.0, 3.0); model.joint_names().len()]
}

/// Each foot in the ground frame for `angles` with the torso at `torso`.
fn feet_at(model: &Model, angles: &[f64], torso: &Transform) -> [Transform; 2] {
    let mut pose = Pose::new(model);
    pose.update(model, angles);
    [Chain::LLeg, Chain::RLeg].map(|chain| torso.then(&pose.transform(model.chain_end(chain))))
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn the_centre_of_mass_goes_over_the_left_foot_the_right_lifts_and_the_feet_keep_their_places() {
    let model = Model::nao_v6();
    let mut angles = stand_init(&model);
    let mut body = WholeBody::new(&model, wide_limits(&model)).unwrap();
    let (torso, feet) = body.anchor(&model, &angles);
    assert!(feet[0].translation[1] > 0.04 && feet[1].translation[1] < -0.04, "{feet:?}");
    assert!(feet[0].translation[2].abs() < 1e-9, "the soles are on the ground");
    let over_left = over_foot(&feet, Side::Left);
    let goal = Goal { torso, feet, support: [true, false], com: ComGoal::At(over_left) };
    let solved = body.solve(&model, &goal, &mut angles);
    assert!((solved.com[0] - over_left[0]).hypot(solved.com[1] - over_left[1]) < 1e-3, "{solved:?}");
    assert!(solved.polygon.depth([solved.com[0], solved.com[1]]) > MARGIN_M - 1e-3);
    assert!(solved.torso.translation[1] > torso.translation[1] + 0.03, "the torso went left");
    let placed = feet_at(&model, &angles, &solved.torso);
    for side in 0..2 {
        assert!(distance(placed[side].translation, feet[side].translation) < 1e-6, "{placed:?}");
        // One HipYawPitch for both legs: the soles turn a little (the legs cannot help it).
        assert!(placed[side].to_position6d()[5].abs() < 0.05, "{placed:?}");
    }
    // The right foot up 5 cm: it moves, the left stays, the centre of mass over the left.
    let mut lifted = feet;
    lifted[1].translation[2] += 0.05;
    let goal =
        Goal { torso: solved.torso, feet: lifted, support: [true, false], com: ComGoal::At(over_left) };
    let solved = body.solve(&model, &goal, &mut angles);
    let placed = feet_at(&model, &angles, &solved.torso);
    assert!(distance(placed[1].translation, lifted[1].translation) < 1e-6, "{placed:?}");
    assert!(distance(placed[0].translation, feet[0].translation) < 1e-6, "{placed:?}");
    assert!((solved.com[0] - over_left[0]).hypot(solved.com[1] - over_left[1]) < 1e-3, "{solved:?}");
    // The same centre of mass, computed again from the angles alone.
    let mut pose = Pose::new(&model);
    pose.update(&model, &angles);
    let com = solved.torso.apply(pose.com(&model, Part::Body));
    assert!(distance(com, solved.com) < 1e-9);
}

#[test]
fn a_torso_target_is_followed_while_the_centre_of_mass_stays_inside_both_feet() {
    let model = Model::nao_v6();
    let mut angles = stand_init(&model);
    let mut body = WholeBody::new(&model, wide_limits(&model)).unwrap();
    let (torso, feet) = body.anchor(&model, &angles);
    let mut target = torso;
    target.translation[2] -= 0.03;
    target.translation[1] -= 0.02;
    let goal = Goal { torso: target, feet, support: [true, true], com: ComGoal::Within };
    let solved = body.solve(&model, &goal, &mut angles);
    assert_eq!(solved.torso, target, "inside the polygon: no balance shift");
    let placed = feet_at(&model, &angles, &target);
    assert!(distance(placed[0].translation, feet[0].translation) < 1e-6);
    // Far to the side: the balance keeps the centre of mass inside, the torso stops short.
    target.translation[1] = -0.2;
    let goal = Goal { torso: target, feet, support: [true, true], com: ComGoal::Within };
    let solved = body.solve(&model, &goal, &mut angles);
    assert!((solved.polygon.depth([solved.com[0], solved.com[1]]) - MARGIN_M).abs() < 1e-3, "{solved:?}");
    assert!(solved.torso.translation[1] > -0.15, "stopped short of -0.2: {:?}", solved.torso);
}

#[test]
fn a_solve_allocates_nothing() {
    let model = Model::nao_v6();
    let mut angles = stand_init(&model);
    let mut body = WholeBody::new(&model, wide_limits(&model)).unwrap();
    let (torso, feet) = body.anchor(&model, &angles);
    start_counting();
    for cycle in 0..200 {
        let mut lifted = feet;
        lifted[1].translation[2] += 0.0005 * f64::from(cycle);
        let com = if cycle % 2 == 0 { ComGoal::At(over_foot(&feet, Side::Left)) } else { ComGoal::Within };
        let goal = Goal { torso, feet: lifted, support: [true, false], com };
        body.solve(&model, &goal, &mut angles);
    }
    assert_eq!(counted(), 0);
}
