//! What naoqi_driver2 (ros-naoqi/naoqi_driver2 2.1.2, the official ROS 2 driver for NAOqi)
//! calls things, so that tools written for it work unchanged.
//!
//! Its node is `naoqi_driver`; its launch file declares a `namespace` argument but does not
//! give it to the node, so relative names resolve at the root: `imu/torso` is `/imu/torso`.

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
