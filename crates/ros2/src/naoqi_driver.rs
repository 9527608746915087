//! What naoqi_driver2 (ros-naoqi/naoqi_driver2 2.1.2, the official ROS 2 driver for NAOqi)
//! calls things, so that tools written for it work unchanged.
//!
//! Its node is `naoqi_driver`; its launch file declares a `namespace` argument but does not
//! give it to the node, so relative names resolve at the root: `imu/torso` is `/imu/torso`.

use crate::types::{MessageType, IMU, JOINT_STATE, ODOMETRY, TF_MESSAGE};

/// The driver's node name.
pub const NODE_NAME: &str = "naoqi_driver";

/// sensor_msgs/JointState of every joint in ALMotion's `getBodyNames("Body")` order and
/// names, positions from `getAngles("Body", true)` (sensors).
pub const JOINT_STATES: &str = "/joint_states";
/// sensor_msgs/Imu of the torso's inertial unit, in [`BASE_LINK`].
pub const IMU_TORSO: &str = "imu/torso";
/// tf2_msgs/TFMessage: the kinematic chain's transforms and odom → base_link.
pub const TF: &str = "/tf";
/// nav_msgs/Odometry: the torso in [`ODOM`] (`getPosition("Torso", FRAME_WORLD)`) and
/// `getRobotVelocity` as the twist, child frame [`BASE_LINK`].
pub const ODOM_TOPIC: &str = "odom";
/// geometry_msgs/Twist the driver takes: `linear.x`, `linear.y`, `angular.z` go to
/// `ALMotion.move(x, y, theta)`; the other components are ignored.
pub const CMD_VEL: &str = "/cmd_vel";

/// The odometry frame (odometry's and the odom → base_link transform's parent).
pub const ODOM: &str = "odom";
/// The robot's base frame: odom → base_link is ALMotion's `Torso` position in
/// `FRAME_WORLD`, and the kinematic chain's transforms hang below it.
pub const BASE_LINK: &str = "base_link";

/// A topic the driver publishes: its name, type and the history depth of its publisher
/// (for the QoS of the liveliness token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Publication {
    pub topic: &'static str,
    pub message: MessageType,
    pub depth: u32,
}

/// What the driver publishes and this robot can: its publishers are `create_publisher(topic,
/// 10)`; `/tf` is tf2_ros's `TransformBroadcaster`, whose QoS keeps the last 100.
pub const PUBLICATIONS: [Publication; 4] = [
    Publication { topic: JOINT_STATES, message: JOINT_STATE, depth: 10 },
    Publication { topic: IMU_TORSO, message: IMU, depth: 10 },
    Publication { topic: TF, message: TF_MESSAGE, depth: 100 },
    Publication { topic: ODOM_TOPIC, message: ODOMETRY, depth: 10 },
];

/// The history depth of the driver's `/cmd_vel` subscription.
pub const CMD_VEL_DEPTH: u32 = 10;
