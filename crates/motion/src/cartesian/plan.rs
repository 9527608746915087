//! Cartesian paths turned into joint key frames (API side, may allocate): each segment of
//! a chain end's path is cut into short steps along a straight line (the rotation turning
//! about one axis), each step solved by inverse kinematics from the step before, so that the
//! chain end moves close to the line; a step's time follows a smooth profile that starts
//! and stops each segment at rest.

use naobroker_kinematics::transform::{between, mul, rotation_vector, transpose};
use naobroker_kinematics::{solve, Chain, IkError, Model, Pose, Transform};

/// Longest straight step between two solved points (m), and largest turn (rad).
const STEP_POSITION: f64 = 0.005;
const STEP_ROTATION: f64 = 0.05;
/// At most one solved point per this much time (s): two motion cycles.
const STEP_TIME: f64 = 0.04;

/// One point of a path: the chain end's target (FRAME_TORSO) at `time` s from the start.
#[derive(Debug, Clone, Copy)]
pub struct Waypoint {
    pub time: f64,
    pub target: Transform,
}

/// Joint key frames for the chain's moving joints.
#[derive(Debug, Clone, PartialEq)]
pub struct JointPlan {
    /// Model indices of the chain's joints that have an axis.
    pub joints: Vec<usize>,
    /// Key times (s), increasing, > 0.
    pub times: Vec<f64>,
    /// Per joint of `joints`, its angle at each key time.
    pub angles: Vec<Vec<f64>>,
    /// The last waypoint was reached (within the solver's tolerance); else the nearest pose.
    pub reached: bool,
}

/// What the model, the chain and its limits are: a path planning's fixed inputs.
pub struct Planner<'a> {
    pub model: &'a Model,
    pub chain: Chain,
    pub axis_mask: u8,
    /// Per model joint (min, max).
    pub limits: &'a [(f64, f64)],
}

impl Planner<'_> {
    /// Key frames moving the chain end from where `start` (model angles) puts it through
    /// `waypoints`.
    pub fn plan(&self, start: &[f64], waypoints: &[Waypoint]) -> Result<JointPlan, IkError> {
        let model = self.model;
        let end = model.chain_end(self.chain);
        let mut pose = Pose::new(model);
        pose.update(model, start);
        let mut from = pose.transform(end);
        let mut angles = start.to_vec();
        let joints: Vec<usize> = model
            .chain_joints(self.chain)
            .iter()
            .copied()
            .filter(|&joint| model.joint_axis(joint).is_some())
            .collect();
        let mut plan =
            JointPlan { angles: vec![Vec::new(); joints.len()], joints, times: Vec::new(), reached: true };
        let mut from_time = 0.0;
        for waypoint in waypoints {
            let (target, reachable) = self.reachable(&mut pose, &angles, &waypoint.target)?;
            let steps = steps(&from, &target, waypoint.time - from_time);
            for step in 1..=steps {
                let fraction = f64::from(step) / f64::from(steps);
                let step_target = between(&from, &target, smooth(fraction));
                let solution = solve(model, self.chain, &step_target, self.axis_mask, &angles, self.limits)?;
                for (&joint, &angle) in model.chain_joints(self.chain).iter().zip(&solution.angles) {
                    angles[joint] = angle;
                }
                plan.reached = reachable && solution.reached;
                plan.times.push(from_time + (waypoint.time - from_time) * fraction);
                for (keys, &joint) in plan.angles.iter_mut().zip(&plan.joints) {
                    keys.push(angles[joint]);
                }
            }
            from = target;
            from_time = waypoint.time;
        }
        Ok(plan)
    }
}

impl Planner<'_> {
    /// `target`, or when it is out of reach the nearest pose the solver finds from
    /// `angles`: the steps then head in a straight line for a pose they can reach (and
    /// each does not search the whole range again). Whether `target` itself is reachable.
    fn reachable(
        &self,
        pose: &mut Pose,
        angles: &[f64],
        target: &Transform,
    ) -> Result<(Transform, bool), IkError> {
        let solution = solve(self.model, self.chain, target, self.axis_mask, angles, self.limits)?;
        if solution.reached {
            return Ok((*target, true));
        }
        let mut nearest = angles.to_vec();
        for (&joint, &angle) in self.model.chain_joints(self.chain).iter().zip(&solution.angles) {
            nearest[joint] = angle;
        }
        pose.update(self.model, &nearest);
        Ok((pose.transform(self.model.chain_end(self.chain)), false))
    }
}

/// How many solved points a segment gets: enough for short steps, at most one per
/// `STEP_TIME`, at least one.
fn steps(from: &Transform, to: &Transform, seconds: f64) -> u32 {
    let distance = norm(sub(to.translation, from.translation));
    let turn = norm(rotation_vector(&mul(&transpose(&from.rotation), &to.rotation)));
    let wanted = (distance / STEP_POSITION).max(turn / STEP_ROTATION).ceil();
    let room = (seconds / STEP_TIME).floor();
    wanted.min(room).clamp(1.0, 1000.0) as u32
}

/// Smoothstep: from rest to rest, 1.5 times the mean speed at the middle.
fn smooth(fraction: f64) -> f64 {
    fraction * fraction * (3.0 - 2.0 * fraction)
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use naobroker_kinematics::AXIS_MASK_POSITION;

    use super::*;

    fn limits(model: &Model) -> Vec<(f64, f64)> {
        // NAO V6's LArm ranges (robots/nao-v6.toml), the rest wide open.
        model
            .joint_names()
            .iter()
            .map(|name| match name.as_str() {
                "LShoulderPitch" => (-2.0857, 2.0857),
                "LShoulderRoll" => (-0.3142, 1.3265),
                "LElbowYaw" => (-2.0857, 2.0857),
                "LElbowRoll" => (-1.5446, -0.0349),
                "LWristYaw" => (-1.8238, 1.8238),
                _ => (-3.0, 3.0),
            })
            .collect()
    }

    #[test]
    fn the_hand_follows_a_straight_line_and_arrives() {
        let model = Model::nao_v6();
        let limits = limits(&model);
        let mut start = vec![0.0; model.joint_names().len()];
        let index = |name: &str| model.joint_index(name).unwrap();
        start[index("LShoulderPitch")] = 0.3;
        start[index("LElbowRoll")] = -0.8;
        let mut pose = Pose::new(&model);
        pose.update(&model, &start);
        let end = model.chain_end(Chain::LArm);
        let from = pose.transform(end);
        let mut target = from;
        target.translation[1] += 0.04;
        target.translation[2] += 0.03;
        let planner =
            Planner { model: &model, chain: Chain::LArm, axis_mask: AXIS_MASK_POSITION, limits: &limits };
        let plan = planner.plan(&start, &[Waypoint { time: 2.0, target }]).unwrap();
        assert!(plan.reached);
        assert!(plan.times.len() >= 10, "a 5 cm segment in 5 mm steps: {}", plan.times.len());
        assert_eq!(plan.times.last(), Some(&2.0));
        assert!(plan.joints.iter().all(|&j| model.chain_joints(Chain::LArm).contains(&j)));
        assert!(!plan.joints.contains(&index("LHand")), "the hand's fingers move nothing");
        // Every solved point lies on the line from start to target, and the last on it.
        let mut angles = start.clone();
        for key in 0..plan.times.len() {
            for (joint, keys) in plan.joints.iter().zip(&plan.angles) {
                angles[*joint] = keys[key];
            }
            pose.update(&model, &angles);
            let at = pose.transform(end).translation;
            let along = sub(at, from.translation);
            let line = sub(target.translation, from.translation);
            let t = (along[0] * line[0] + along[1] * line[1] + along[2] * line[2]) / norm(line).powi(2);
            let off = norm(sub(along, line.map(|v| v * t)));
            assert!(off < 1e-3, "key {key}: {off} m off the line");
        }
        assert!(norm(sub(pose.transform(end).translation, target.translation)) < 1e-3);
    }

    #[test]
    fn an_out_of_reach_target_heads_straight_for_the_nearest_pose() {
        let model = Model::nao_v6();
        let limits = limits(&model);
        let start = vec![0.0; model.joint_names().len()];
        let far = Transform::translation([1.0, 0.5, 0.3]);
        let planner =
            Planner { model: &model, chain: Chain::LArm, axis_mask: AXIS_MASK_POSITION, limits: &limits };
        let plan = planner.plan(&start, &[Waypoint { time: 3.0, target: far }]).unwrap();
        assert!(!plan.reached);
        let mut angles = start.clone();
        for (joint, keys) in plan.joints.iter().zip(&plan.angles) {
            angles[*joint] = *keys.last().unwrap();
        }
        let mut pose = Pose::new(&model);
        pose.update(&model, &angles);
        let end = pose.transform(model.chain_end(Chain::LArm)).translation;
        let shoulder = [0.0, 0.098, 0.1];
        let reach = norm(sub(end, shoulder));
        assert!(reach > 0.2, "stretched toward it: {reach} m from the shoulder");
        let toward = sub(far.translation, shoulder);
        let cosine = (0..3).map(|i| sub(end, shoulder)[i] * toward[i]).sum::<f64>() / (reach * norm(toward));
        assert!(cosine > 0.99, "pointing at it: {cosine}");
    }

    #[test]
    fn steps_are_short_and_no_closer_than_two_motion_cycles() {
        let from = Transform::IDENTITY;
        let to = Transform::translation([0.1, 0.0, 0.0]);
        assert_eq!(steps(&from, &to, 10.0), 20, "10 cm in 5 mm steps");
        assert_eq!(steps(&from, &to, 0.2), 5, "0.2 s holds five 40 ms steps");
        assert_eq!(steps(&from, &from, 1.0), 1);
        let halfway = between(&from, &Transform::from_position6d([0.0, 0.0, 0.0, 0.0, 0.0, 1.0]), 0.5);
        assert!((halfway.to_position6d()[5] - 0.5).abs() < 1e-12);
    }
}
