//! Forward kinematics: every frame's transform in FRAME_TORSO for one set of angles, the
//! centres of mass, and FRAME_ROBOT.

use crate::model::{Chain, Frame, Model, Part};
use crate::transform::{add, axis_angle, mul, rotation_to_rpy, Transform};

/// Every frame's transform in FRAME_TORSO for one set of angles. Made once (allocates);
/// `update` never allocates: the motion thread calls it every cycle.
#[derive(Debug, Clone)]
pub struct Pose {
    /// Torso, then the joints, then the effectors (`Frame`'s numbering).
    frames: Vec<Transform>,
    /// Each joint's link's centre of mass in FRAME_TORSO.
    link_coms: Vec<[f64; 3]>,
}

impl Pose {
    /// The pose at all angles zero.
    pub fn new(model: &Model) -> Pose {
        let mut pose = Pose {
            frames: vec![Transform::IDENTITY; model.frame_count()],
            link_coms: vec![[0.0; 3]; model.joints.len()],
        };
        pose.update(model, &vec![0.0; model.joints.len()]);
        pose
    }

    /// Angles in `model.joint_names()` order; missing trailing angles count as zero, extra
    /// ones are ignored.
    pub fn update(&mut self, model: &Model, angles: &[f64]) {
        for (index, joint) in model.joints.iter().enumerate() {
            let parent = match joint.parent {
                Some(parent) => self.frames[1 + parent],
                None => Transform::IDENTITY,
            };
            let angle = angles.get(index).copied().unwrap_or(0.0);
            let rotation = match joint.axis {
                Some(axis) => axis_angle(axis, angle),
                None => Transform::IDENTITY.rotation,
            };
            let local = Transform { rotation, translation: joint.offset };
            let frame = parent.then(&local);
            self.link_coms[index] = frame.apply(joint.com);
            self.frames[1 + index] = frame;
        }
        let first_effector = 1 + model.joints.len();
        for (index, effector) in model.effectors.iter().enumerate() {
            self.frames[first_effector + index] = self.frames[1 + effector.parent].then(&effector.offset);
        }
    }

    /// The frame's transform in FRAME_TORSO.
    pub fn transform(&self, frame: Frame) -> Transform {
        self.frames[frame.0]
    }

    /// A joint's frame in its parent's (the parent joint's frame, or FRAME_TORSO): one link
    /// of a transform tree such as ROS 2's `/tf`.
    pub fn joint_in_parent(&self, model: &Model, joint: usize) -> Transform {
        let frame = self.frames[1 + joint];
        match model.joint_parent(joint) {
            Some(parent) => self.frames[1 + parent].inverse().then(&frame),
            None => frame,
        }
    }

    /// Centre of mass (FRAME_TORSO) of the body, the torso, a chain, or one joint's link (a
    /// link without mass: its joint's position).
    pub fn com(&self, model: &Model, part: Part) -> [f64; 3] {
        let mut weighted = [0.0; 3];
        let mut mass = 0.0;
        let mut add_link = |link_mass: f64, com: [f64; 3]| {
            weighted = add(weighted, [com[0] * link_mass, com[1] * link_mass, com[2] * link_mass]);
            mass += link_mass;
        };
        match part {
            Part::Body => {
                add_link(model.torso_mass, model.torso_com);
                for (index, joint) in model.joints.iter().enumerate() {
                    add_link(joint.mass, self.link_coms[index]);
                }
            }
            Part::Torso => add_link(model.torso_mass, model.torso_com),
            Part::Chain(chain) => {
                for &index in model.chain_joints(chain) {
                    add_link(model.joints[index].mass, self.link_coms[index]);
                }
            }
            Part::Joint(index) => {
                if model.joints[index].mass == 0.0 {
                    return self.frames[1 + index].translation;
                }
                add_link(model.joints[index].mass, self.link_coms[index]);
            }
        }
        if mass == 0.0 {
            return [0.0; 3];
        }
        [weighted[0] / mass, weighted[1] / mass, weighted[2] / mass]
    }

    /// FRAME_TORSO in FRAME_ROBOT. NAOqi's robot frame is on the ground between the feet:
    /// the average of the two feet's positions, at the lower sole's height, turned by the
    /// average of their yaws, z up; `torso_angle_x`, `torso_angle_y` are the torso's
    /// inclination (the inertial unit's AngleX, AngleY, or 0, 0).
    pub fn torso_in_robot_frame(&self, model: &Model, torso_angle_x: f64, torso_angle_y: f64) -> Transform {
        // The torso turned upright: its yaw is FRAME_ROBOT's business.
        let level = Transform {
            rotation: mul(
                &axis_angle([0.0, 1.0, 0.0], torso_angle_y),
                &axis_angle([1.0, 0.0, 0.0], torso_angle_x),
            ),
            translation: [0.0; 3],
        };
        let left = level.then(&self.transform(model.chain_end(Chain::LLeg)));
        let right = level.then(&self.transform(model.chain_end(Chain::RLeg)));
        let yaw_left = rotation_to_rpy(&left.rotation)[2];
        let yaw_right = rotation_to_rpy(&right.rotation)[2];
        let yaw = (yaw_left.sin() + yaw_right.sin()).atan2(yaw_left.cos() + yaw_right.cos());
        let origin = [
            (left.translation[0] + right.translation[0]) / 2.0,
            (left.translation[1] + right.translation[1]) / 2.0,
            left.translation[2].min(right.translation[2]),
        ];
        let robot_in_level = Transform { rotation: axis_angle([0.0, 0.0, 1.0], yaw), translation: origin };
        robot_in_level.inverse().then(&level)
    }
}
