//! Inverse kinematics round trips: configurations within the limits → forward kinematics →
//! target → solve from another start → forward kinematics again lands on the target; out of
//! reach, the nearest solution within limits.

mod common;

use common::{limits, spread};
use naobroker_kinematics::{solve, Chain, IkError, Model, Pose, Transform, AXIS_MASK_ALL};

/// Round trips of `count` configurations of `chain` with `mask`; returns how many reached.
fn round_trips(chain: Chain, mask: u8, count: usize) -> usize {
    let model = Model::nao_v6();
    let limits = limits(&model);
    let mut pose = Pose::new(&model);
    let mut reached = 0;
    for k in 0..count {
        let goal = spread(&limits, k, 0.02);
        pose.update(&model, &goal);
        let target = pose.transform(model.chain_end(chain));
        let start = spread(&limits, k + 1000, 0.0);
        let solution = solve(&model, chain, &target, mask, &start, &limits).expect("a valid request");
        for (&joint, &angle) in model.chain_joints(chain).iter().zip(&solution.angles) {
            let (min, max) = limits[joint];
            assert!(
                angle >= min && angle <= max,
                "{}: {angle} outside [{min}, {max}]",
                model.joint_names()[joint]
            );
        }
        let mut solved = start.clone();
        for (&joint, &angle) in model.chain_joints(chain).iter().zip(&solution.angles) {
            solved[joint] = angle;
        }
        pose.update(&model, &solved);
        let end = pose.transform(model.chain_end(chain));
        let (position, rotation) = masked_distance(&target, &end, mask);
        // The solver measures rotation by its rotation vector, this test by Position6D
        // angles: the two agree near the target.
        let reported = (position - solution.position_error).abs() < 1e-9
            && (rotation - solution.rotation_error).abs() < 1e-3;
        assert!(reported, "{solution:?} reports its error: measured {position} m {rotation} rad");
        if solution.reached {
            assert!(position < 1e-3 && rotation < 0.01, "{chain:?} #{k}: {position} m {rotation} rad");
            reached += 1;
        }
    }
    reached
}

/// Distance and angle between two frames over the masked axes, measured independently
/// of the solver: position differences, and Position6D angle differences for the head's
/// rotation-only masks, the full angle between orientations when all three are masked.
fn masked_distance(target: &Transform, end: &Transform, mask: u8) -> (f64, f64) {
    let mut position = 0.0;
    for axis in 0..3 {
        if mask & (1 << axis) != 0 {
            position += (target.translation[axis] - end.translation[axis]).powi(2);
        }
    }
    let relative = target.then(&end.inverse());
    let trace = relative.rotation[0][0] + relative.rotation[1][1] + relative.rotation[2][2];
    let full_angle = ((trace - 1.0) / 2.0).clamp(-1.0, 1.0).acos();
    let rotation = if mask & 56 == 56 {
        full_angle
    } else if mask & 56 == 0 {
        0.0
    } else {
        let a = target.to_position6d();
        let b = end.to_position6d();
        let mut sum = 0.0;
        for axis in 3..6 {
            if mask & (1 << axis) != 0 {
                let difference = (a[axis] - b[axis] + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
                sum += difference * difference;
            }
        }
        sum.sqrt()
    };
    (position.sqrt(), rotation)
}

#[test]
fn head_reaches_every_gaze_its_own_joints_give() {
    let count = 40;
    assert_eq!(round_trips(Chain::Head, 16 | 32, count), count);
}

#[test]
fn arms_reach_every_position_their_own_joints_give() {
    let count = 40;
    assert_eq!(round_trips(Chain::LArm, 7, count), count);
    assert_eq!(round_trips(Chain::RArm, 7, count), count);
}

#[test]
fn arms_reach_every_position_and_orientation_their_own_joints_give() {
    let count = 40;
    assert_eq!(round_trips(Chain::LArm, AXIS_MASK_ALL, count), count);
    assert_eq!(round_trips(Chain::RArm, AXIS_MASK_ALL, count), count);
}

#[test]
fn legs_reach_every_foot_pose_their_own_joints_give() {
    let count = 30;
    assert_eq!(round_trips(Chain::LLeg, AXIS_MASK_ALL, count), count);
    assert_eq!(round_trips(Chain::RLeg, AXIS_MASK_ALL, count), count);
}

#[test]
fn out_of_reach_gives_the_nearest_solution_within_limits() {
    let model = Model::nao_v6();
    let limits = limits(&model);
    // Half a metre in front of the left shoulder (0, 98, 100) mm: the arm, 219 mm from the
    // shoulder to the hand at most, stretches towards it.
    let target = Transform::translation([0.5, 0.098, 0.1]);
    let start = vec![0.0f64; model.joint_names().len()];
    let clamped: Vec<f64> = start.iter().zip(&limits).map(|(a, &(min, max))| a.clamp(min, max)).collect();
    let solution = solve(&model, Chain::LArm, &target, 7, &clamped, &limits).unwrap();
    assert!(!solution.reached);
    assert!(solution.position_error > 0.27 && solution.position_error < 0.29, "{solution:?}");
    for (&joint, &angle) in model.chain_joints(Chain::LArm).iter().zip(&solution.angles) {
        let (min, max) = limits[joint];
        assert!(angle >= min && angle <= max, "{angle} outside [{min}, {max}]");
    }
}

#[test]
fn malformed_requests_are_refused() {
    let model = Model::nao_v6();
    let limits = limits(&model);
    let start = vec![0.0; model.joint_names().len()];
    let target = Transform::IDENTITY;
    assert_eq!(solve(&model, Chain::Head, &target, 0, &start, &limits), Err(IkError::EmptyAxisMask(0)));
    assert_eq!(
        solve(&model, Chain::Head, &target, 7, &start[1..], &limits),
        Err(IkError::StartLength { given: start.len() - 1, expected: start.len() })
    );
    assert_eq!(
        solve(&model, Chain::Head, &target, 7, &start, &limits[1..]),
        Err(IkError::LimitsLength { given: limits.len() - 1, expected: limits.len() })
    );
    let nowhere = Transform::translation([f64::NAN, 0.0, 0.0]);
    assert_eq!(solve(&model, Chain::Head, &nowhere, 7, &start, &limits), Err(IkError::NotFinite));
}
