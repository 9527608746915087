//! Self-collision of the arms (NAOqi's collision protection and `isCollision`): each arm's
//! shapes against the torso, the head and the other arm, all taken from the robot
//! description's collision shapes (`[[physics.shape]]`) and placed by the kinematic model
//! at the pose ALMotion commands. Every shape is a capsule: a segment and a radius (a sphere
//! is a capsule of no length; a cylinder, the capsule along its axis with its ends drawn in
//! by the radius, so that it reaches no further along the axis than the cylinder does).
//! docs/motion.md, "Collision protection", has the numbers; `collision.rs` finds each arm's
//! motors.

use std::sync::atomic::{AtomicU8, Ordering};

use naobroker_kinematics::{Frame, Pose};
use naobroker_robot::physics::{PhysicsDescription, ShapeKind, Touches};

/// Closer than this (m) between an arm and the body, `isCollision` says `"near"` (StandInit's
/// arms are clear of the torso, the head and each other: `"none"`).
pub const NEAR_M: f64 = 0.01;
/// Collision protection keeps a clear arm at least this far (m) from the body: an arm
/// whose new pose comes closer than this, and closer than it was, is held.
pub const MARGIN_M: f64 = 0.005;

/// The two arm chains, as `setCollisionProtectionEnabled` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    Left,
    Right,
}

impl Arm {
    pub const BOTH: [Arm; 2] = [Arm::Left, Arm::Right];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn chain(self) -> &'static str {
        match self {
            Arm::Left => "LArm",
            Arm::Right => "RArm",
        }
    }

    fn other(self) -> Arm {
        match self {
            Arm::Left => Arm::Right,
            Arm::Right => Arm::Left,
        }
    }
}

/// What `isCollision` answers for an arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    Near,
    Collision,
}

impl Level {
    /// The level of an arm whose shapes are `clearance` (m) from the body's.
    pub fn of(clearance: f64) -> Level {
        if clearance <= 0.0 {
            Level::Collision
        } else if clearance < NEAR_M {
            Level::Near
        } else {
            Level::None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Near => "near",
            Level::Collision => "collision",
        }
    }
}

/// Each arm's level at the motion cycle's last commanded pose: the motion thread stores,
/// `isCollision` loads.
#[derive(Debug, Default)]
pub struct CollisionLevels([AtomicU8; 2]);

impl CollisionLevels {
    pub fn set(&self, arm: Arm, level: Level) {
        self.0[arm.index()].store(level as u8, Ordering::Release);
    }

    pub fn get(&self, arm: Arm) -> Level {
        match self.0[arm.index()].load(Ordering::Acquire) {
            0 => Level::None,
            1 => Level::Near,
            _ => Level::Collision,
        }
    }
}

/// A capsule on a link: the segment `from`→`to` in the link's frame (m) and a radius.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Capsule {
    frame: Frame,
    from: [f64; 3],
    to: [f64; 3],
    radius: f64,
}

impl Capsule {
    /// The segment's ends in the torso frame, at `pose`.
    fn placed(&self, pose: &Pose) -> ([f64; 3], [f64; 3]) {
        let transform = pose.transform(self.frame);
        (transform.apply(self.from), transform.apply(self.to))
    }
}

/// The shapes collision protection works with: each arm's, and the body's the arms may meet.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionShapes {
    arms: [Vec<Capsule>; 2],
    body: Vec<Capsule>,
}

/// A description's shapes that collision protection cannot read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    #[error("[[physics.shape]] {index}: {message}")]
    Shape { index: usize, message: String },
}

impl CollisionShapes {
    /// From the description's `[physics]`: the arms' shapes that touch the body
    /// (`touches = "world_and_body"` on an arm's link) and the torso's and the head's shapes
    /// for the arms (`touches = "arms"`). `None` without a kinematic model or such shapes.
    pub fn from_description(
        body_joints: &[(String, String)],
        model: &naobroker_kinematics::Model,
        physics: Option<&PhysicsDescription>,
    ) -> Result<Option<CollisionShapes>, ShapeError> {
        let Some(physics) = physics else { return Ok(None) };
        let mut shapes = CollisionShapes { arms: [Vec::new(), Vec::new()], body: Vec::new() };
        for (index, entry) in physics.shapes.iter().enumerate() {
            let error = |message: String| ShapeError::Shape { index, message };
            let to_arm = match entry.touches {
                Touches::WorldAndBody => true,
                Touches::Arms => false,
                Touches::World => continue,
            };
            let frame = model.frame(&entry.link).ok_or_else(|| error(format!("no link {:?}", entry.link)))?;
            let (from, to, radius) = match entry.kind {
                ShapeKind::Sphere { centre_m, radius_m } => (centre_m, centre_m, radius_m),
                ShapeKind::Capsule { from_m, to_m, radius_m } => (from_m, to_m, radius_m),
                ShapeKind::Cylinder { from_m, to_m, radius_m } => {
                    let (from, to) = drawn_in(from_m, to_m, radius_m);
                    (from, to, radius_m)
                }
                ShapeKind::Box { .. } => {
                    return Err(error("a box is no shape collision protection reads".into()))
                }
            };
            if !(radius.is_finite() && radius >= 0.0) {
                return Err(error("expected radius_m, a finite number ≥ 0".into()));
            }
            let capsule = Capsule { frame, from, to, radius };
            let chain = body_joints.iter().find(|(joint, _)| *joint == entry.link).map(|(_, c)| c.as_str());
            match (to_arm, chain) {
                (true, Some("LArm")) => shapes.arms[0].push(capsule),
                (true, Some("RArm")) => shapes.arms[1].push(capsule),
                // The torso's and the head's; the legs' are left out: NAOqi protects the arms
                // from the torso, the head and each other, and its postures rest the hands on
                // the knees (Crouch) or the thighs (Sit).
                (false, chain) if entry.link == "Torso" || chain == Some("Head") => shapes.body.push(capsule),
                _ => {}
            }
        }
        let none = shapes.arms.iter().all(Vec::is_empty) || shapes.body.is_empty();
        Ok((!none).then_some(shapes))
    }

    /// Whether `arm` has shapes.
    pub fn has_arm(&self, arm: Arm) -> bool {
        !self.arms[arm.index()].is_empty()
    }

    /// The least distance (m) between `arm`'s shapes and the body's or the other arm's, at
    /// `pose`: negative when they overlap. Allocation-free (the motion cycle calls it).
    pub fn clearance(&self, arm: Arm, pose: &Pose) -> f64 {
        let mut clearance = f64::INFINITY;
        for capsule in &self.arms[arm.index()] {
            let (a0, a1) = capsule.placed(pose);
            for other in self.body.iter().chain(&self.arms[arm.other().index()]) {
                let (b0, b1) = other.placed(pose);
                let distance = segment_distance(a0, a1, b0, b1) - capsule.radius - other.radius;
                clearance = clearance.min(distance);
            }
        }
        clearance
    }
}

/// A cylinder's axis with both ends drawn in by `radius` (a point when it is shorter).
fn drawn_in(from: [f64; 3], to: [f64; 3], radius: f64) -> ([f64; 3], [f64; 3]) {
    let axis = sub(to, from);
    let length = dot(axis, axis).sqrt();
    if length <= 2.0 * radius {
        let middle = [0, 1, 2].map(|i| 0.5 * (from[i] + to[i]));
        return (middle, middle);
    }
    let inward = radius / length;
    ([0, 1, 2].map(|i| from[i] + inward * axis[i]), [0, 1, 2].map(|i| to[i] - inward * axis[i]))
}

/// Whether an arm may go from clearance `from` to clearance `to` (m): a clear arm never
/// comes within [`MARGIN_M`] of the body; an arm that is (protection was off, or the DCM
/// put it there) may move, as long as it does not come closer.
pub fn allowed(from: f64, to: f64) -> bool {
    to >= MARGIN_M || to >= from
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The distance between the segments `p0`→`p1` and `q0`→`q1` (closest points, clamped to
/// both segments; a segment of no length is a point).
fn segment_distance(p0: [f64; 3], p1: [f64; 3], q0: [f64; 3], q1: [f64; 3]) -> f64 {
    let (d1, d2, r) = (sub(p1, p0), sub(q1, q0), sub(p0, q0));
    let (a, e, f) = (dot(d1, d1), dot(d2, d2), dot(d2, r));
    const POINT: f64 = 1e-12;
    let (s, t) = if a <= POINT && e <= POINT {
        (0.0, 0.0)
    } else if a <= POINT {
        (0.0, (f / e).clamp(0.0, 1.0))
    } else {
        let c = dot(d1, r);
        if e <= POINT {
            ((-c / a).clamp(0.0, 1.0), 0.0)
        } else {
            let b = dot(d1, d2);
            let denominator = a * e - b * b;
            let mut s =
                if denominator > POINT { ((b * f - c * e) / denominator).clamp(0.0, 1.0) } else { 0.0 };
            let mut t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
            (s, t)
        }
    };
    let closest_p = [0, 1, 2].map(|i| p0[i] + d1[i] * s);
    let closest_q = [0, 1, 2].map(|i| q0[i] + d2[i] * t);
    let gap = sub(closest_p, closest_q);
    dot(gap, gap).sqrt()
}

#[cfg(test)]
pub(crate) mod tests {
    use naobroker_kinematics::Model;
    use naobroker_robot::device::{DeviceModel, RobotDescription};

    use super::*;

    /// Placing joints' angles: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll (WristYaw 0).
    pub(crate) type ArmAngles = [f64; 4];

    fn mirrored(angles: ArmAngles) -> ArmAngles {
        [angles[0], -angles[1], -angles[2], -angles[3]]
    }

    /// NAO V6's kinematic model and collision shapes.
    fn nao() -> (Model, CollisionShapes) {
        let device = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let model = Model::from_description(device.kinematics.as_ref().unwrap()).unwrap();
        let chains: Vec<(String, String)> =
            device.joints.iter().map(|joint| (joint.name.clone(), joint.chain.clone())).collect();
        let shapes =
            CollisionShapes::from_description(&chains, &model, device.physics.as_ref()).unwrap().unwrap();
        (model, shapes)
    }

    /// The model's pose with `arm` at `angles`, the other arm at `other`, every other joint 0.
    fn pose_with(model: &Model, arm: Arm, angles: ArmAngles, other: ArmAngles) -> Pose {
        let side = |arm: Arm| if arm == Arm::Left { "L" } else { "R" };
        let mut model_angles = vec![0.0; model.joint_names().len()];
        for (a, set) in [(arm, angles), (arm.other(), other)] {
            for (joint, value) in ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll"].iter().zip(set) {
                model_angles[model.joint_index(&format!("{}{joint}", side(a))).unwrap()] = value;
            }
        }
        let mut pose = Pose::new(model);
        pose.update(model, &model_angles);
        pose
    }

    /// An arm's clearance (m) at `angles`, the other arm hanging, standing straight.
    pub(crate) fn clearance_at(arm: Arm, angles: ArmAngles) -> f64 {
        let (model, shapes) = nao();
        let hanging = [std::f64::consts::FRAC_PI_2, 0.2, 0.0, -0.1];
        let other = if arm == Arm::Left { mirrored(hanging) } else { hanging };
        shapes.clearance(arm, &pose_with(&model, arm, angles, other))
    }

    const DEG: f64 = std::f64::consts::PI / 180.0;

    #[test]
    fn the_nao_description_gives_each_arm_three_capsules_and_the_body_its_shapes() {
        let (_, shapes) = nao();
        assert_eq!((shapes.arms[0].len(), shapes.arms[1].len()), (3, 3), "upper arm, forearm, hand");
        // Torso 4 spheres, head 1 cylinder.
        assert_eq!(shapes.body.len(), 4 + 1);
    }

    #[test]
    fn usual_poses_are_clear_of_the_body_on_both_sides() {
        let poses: [(&str, ArmAngles); 4] = [
            ("StandInit", [1.40, 0.30, -1.39, -1.00]),
            ("StandZero", [0.0, 0.0, 0.0, 0.0]),
            ("hanging", [std::f64::consts::FRAC_PI_2, 0.2, 0.0, -0.0349]),
            (
                "NAOqi's Init of reflexesCollisionAvoidance",
                [80.0 * DEG, 20.0 * DEG, -80.0 * DEG, -60.0 * DEG],
            ),
        ];
        for (name, left) in poses {
            let (l, r) = (clearance_at(Arm::Left, left), clearance_at(Arm::Right, mirrored(left)));
            assert!(l >= NEAR_M && r >= NEAR_M, "{name}: {l} m, {r} m");
        }
    }

    /// NAOqi's examples' "Final" poses: the forearm folded into the chest (ShoulderPitch 50°)
    /// and into the face (-50°), which protection must stop short of.
    #[test]
    fn naoqis_bumping_poses_meet_the_torso_and_the_head() {
        for pitch in [50.0, -50.0] {
            let left = [pitch * DEG, 6.0 * DEG, 0.0, (-150.0f64).max(-88.5) * DEG];
            let (l, r) = (clearance_at(Arm::Left, left), clearance_at(Arm::Right, mirrored(left)));
            assert!(l <= 0.0 && r <= 0.0, "ShoulderPitch {pitch}°: {l} m, {r} m");
        }
    }

    #[test]
    fn segments_are_as_far_as_their_closest_points() {
        let d = segment_distance([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, 2.0, 0.0]);
        assert!((d - 1.0).abs() < 1e-12);
        let d = segment_distance([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]);
        assert!((d - 1.0).abs() < 1e-12, "parallel, end to end");
        let d = segment_distance([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [1.0, 1.0, 0.0]);
        assert!((d - 1.0).abs() < 1e-12, "a point");
        let d = segment_distance([0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]);
        assert!(d.abs() < 1e-12, "crossing");
        assert_eq!(drawn_in([0.0, -1.0, 0.0], [0.0, 1.0, 0.0], 0.25), ([0.0, -0.75, 0.0], [0.0, 0.75, 0.0]));
    }

    #[test]
    fn a_clear_arm_may_not_come_within_the_margin_and_one_within_may_leave() {
        assert!(allowed(0.05, 0.01));
        assert!(!allowed(0.05, 0.001), "into the margin");
        assert!(!allowed(0.001, -0.01), "deeper");
        assert!(allowed(-0.01, 0.001), "on its way out");
    }
}
