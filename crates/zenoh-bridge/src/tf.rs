//! ROS 2's `/tf` beyond odometry: the robot's links posed by the sensed joint angles with the
//! kinematics crate's model (the one ALMotion poses frames with), under naoqi_driver2's link
//! names, each in its parent link.

use naobroker_kinematics::transform::rotation_to_rpy;
use naobroker_kinematics::{Model, Pose, Transform};
use naobroker_memory::Store;
use naobroker_robot::device::RobotDescription;
use naobroker_ros2::{Quaternion, Transform as RosTransform, Vector3};

/// naoqi_driver2's torso link: FRAME_TORSO.
pub(crate) const TORSO: &str = "torso";

/// The link each NAOqi joint moves, as naoqi_driver2's URDF (nao_description) names it.
const LINKS: [(&str, &str); 26] = [
    ("HeadYaw", "Neck"),
    ("HeadPitch", "Head"),
    ("LShoulderPitch", "LShoulder"),
    ("LShoulderRoll", "LBicep"),
    ("LElbowYaw", "LElbow"),
    ("LElbowRoll", "LForeArm"),
    ("LWristYaw", "l_wrist"),
    ("LHand", "l_gripper"),
    ("LHipYawPitch", "LPelvis"),
    ("LHipRoll", "LHip"),
    ("LHipPitch", "LThigh"),
    ("LKneePitch", "LTibia"),
    ("LAnklePitch", "LAnklePitch"),
    ("LAnkleRoll", "l_ankle"),
    ("RHipYawPitch", "RPelvis"),
    ("RHipRoll", "RHip"),
    ("RHipPitch", "RThigh"),
    ("RKneePitch", "RTibia"),
    ("RAnklePitch", "RAnklePitch"),
    ("RAnkleRoll", "r_ankle"),
    ("RShoulderPitch", "RShoulder"),
    ("RShoulderRoll", "RBicep"),
    ("RElbowYaw", "RElbow"),
    ("RElbowRoll", "RForeArm"),
    ("RWristYaw", "r_wrist"),
    ("RHand", "r_gripper"),
];

/// A joint's sensed angle's key.
fn sensor_key(joint: &str) -> String {
    format!("Device/SubDeviceList/{joint}/Position/Sensor/Value")
}

/// One link of the tree: its parent's name, its own, and its transform in its parent.
pub(crate) struct Link {
    pub(crate) parent: &'static str,
    pub(crate) child: &'static str,
    pub(crate) transform: RosTransform,
}

/// The model posed each cycle (made once; `update` reuses its buffers).
pub(crate) struct KinematicTree {
    model: Model,
    pose: Pose,
    /// Per model joint: the slot of the sensed angle it takes (a coupled joint its leader's).
    sources: Vec<Option<usize>>,
    angles: Vec<f64>,
    /// Per model joint: its link and its parent's, when naoqi_driver2 names it.
    names: Vec<Option<(&'static str, &'static str)>>,
}

impl KinematicTree {
    pub(crate) fn new(store: &Store) -> KinematicTree {
        let model = Model::nao_v6();
        let coupled = RobotDescription::nao_v6().physics.map(|physics| physics.coupled).unwrap_or_default();
        let slot = |joint: &str| store.slot_index(&sensor_key(joint));
        let sources = model
            .joint_names()
            .iter()
            .map(|name| slot(name).or_else(|| coupled.get(name).and_then(|leader| slot(leader))))
            .collect();
        let link = |name: &str| LINKS.iter().find(|(joint, _)| *joint == name).map(|(_, link)| *link);
        let names = (0..model.joint_names().len())
            .map(|joint| {
                let child = link(&model.joint_names()[joint])?;
                let parent = match model.joint_parent(joint) {
                    Some(parent) => link(&model.joint_names()[parent])?,
                    None => TORSO,
                };
                Some((parent, child))
            })
            .collect();
        let pose = Pose::new(&model);
        let angles = vec![0.0; model.joint_names().len()];
        KinematicTree { model, pose, sources, angles, names }
    }

    /// Pose the model by the sensed angles (`angle` of a slot).
    pub(crate) fn update(&mut self, angle: impl Fn(usize) -> f64) {
        for (value, source) in self.angles.iter_mut().zip(&self.sources) {
            *value = source.map_or(0.0, &angle);
        }
        self.pose.update(&self.model, &self.angles);
    }

    /// Every named link in its parent, as posed last.
    pub(crate) fn links(&self) -> impl Iterator<Item = Link> + '_ {
        self.names.iter().enumerate().filter_map(|(joint, names)| {
            let (parent, child) = (*names)?;
            Some(Link { parent, child, transform: ros(&self.pose.joint_in_parent(&self.model, joint)) })
        })
    }

    /// FRAME_TORSO in FRAME_ROBOT, from the inertial unit's AngleX and AngleY.
    pub(crate) fn torso_in_robot(&self, angle_x: f64, angle_y: f64) -> RosTransform {
        ros(&self.pose.torso_in_robot_frame(&self.model, angle_x, angle_y))
    }
}

fn ros(transform: &Transform) -> RosTransform {
    let [x, y, z] = transform.translation;
    let [roll, pitch, yaw] = rotation_to_rpy(&transform.rotation);
    RosTransform { translation: Vector3 { x, y, z }, rotation: Quaternion::from_rpy(roll, pitch, yaw) }
}

#[cfg(test)]
mod tests {
    use naobroker_rtslots::{RtSlots, SlotKind, SlotLayout};

    use super::*;

    #[test]
    fn a_sensed_angle_turns_its_link_in_its_parent() {
        let mut layout = SlotLayout::new();
        for joint in ["HeadYaw", "LHipYawPitch"] {
            layout.add(&sensor_key(joint), SlotKind::Float);
        }
        let limits = naobroker_memory::MemoryConfig::default().store_limits();
        let store = Store::new(RtSlots::new(layout), limits);
        let mut tree = KinematicTree::new(&store);
        let head_yaw = store.slot_index(&sensor_key("HeadYaw")).unwrap();
        let hip = store.slot_index(&sensor_key("LHipYawPitch")).unwrap();
        tree.update(|slot| {
            if slot == head_yaw {
                0.5
            } else if slot == hip {
                -0.3
            } else {
                0.0
            }
        });
        let links: Vec<Link> = tree.links().collect();
        assert_eq!(links.len(), 26);
        let link = |child: &str| links.iter().find(|link| link.child == child).unwrap();
        // HeadYaw turns Neck about the torso's z by 0.5 rad, 126.5 mm above the torso.
        let neck = link("Neck");
        assert_eq!(neck.parent, TORSO);
        let Vector3 { x, y, z } = neck.transform.translation;
        assert!(x.abs() < 1e-9 && y.abs() < 1e-9 && (z - 0.1265).abs() < 1e-9, "{x} {y} {z}");
        let q = neck.transform.rotation;
        let expected = Quaternion::from_rpy(0.0, 0.0, 0.5);
        assert!((q.z - expected.z).abs() < 1e-9 && (q.w - expected.w).abs() < 1e-9, "{q:?}");
        // Head hangs from Neck, unturned by HeadPitch at 0.
        let head = link("Head");
        assert_eq!((head.parent, head.transform.rotation.w), ("Neck", 1.0));
        // RHipYawPitch has no sensor of its own: it takes LHipYawPitch's angle.
        let (left, right) = (link("LPelvis").transform.rotation, link("RPelvis").transform.rotation);
        assert!(left.w < 1.0 - 1e-3 && (left.w - right.w).abs() < 1e-9, "{left:?} {right:?}");
        assert_eq!(link("l_ankle").parent, "LAnklePitch");
    }
}
