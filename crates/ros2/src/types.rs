//! The message types rmw_zenoh names in key expressions and liveliness tokens.
//!
//! A type hash is REP-2016's RIHS01: SHA-256 of the type's description (its fields and those
//! of every type it uses), as `rosidl_generator_type_description` writes it into each
//! interface package and `ros2 topic info -v` prints. The values are the same for Jazzy,
//! Kilted and Rolling (none of these messages changed). Where each came from is in
//! docs/ros2.md; the test `type_hashes_are_what_rosbags_computes` recomputes them all.

/// A message type as rmw_zenoh spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageType {
    /// The ROS name, `package/msg/Name`.
    pub ros_name: &'static str,
    /// The name "as declared in DDS" that rmw_zenoh puts in keys: `package::msg::dds_::Name_`.
    pub dds_name: &'static str,
    /// REP-2016's type hash, `RIHS01_` and 64 lowercase hex digits.
    pub hash: &'static str,
}

/// sensor_msgs/JointState (`joint_states`).
pub const JOINT_STATE: MessageType = MessageType {
    ros_name: "sensor_msgs/msg/JointState",
    dds_name: "sensor_msgs::msg::dds_::JointState_",
    hash: "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e",
};

/// sensor_msgs/Imu (`imu/torso`).
pub const IMU: MessageType = MessageType {
    ros_name: "sensor_msgs/msg/Imu",
    dds_name: "sensor_msgs::msg::dds_::Imu_",
    hash: "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
};

/// tf2_msgs/TFMessage (`/tf`).
pub const TF_MESSAGE: MessageType = MessageType {
    ros_name: "tf2_msgs/msg/TFMessage",
    dds_name: "tf2_msgs::msg::dds_::TFMessage_",
    hash: "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
};

/// nav_msgs/Odometry (`odom`).
pub const ODOMETRY: MessageType = MessageType {
    ros_name: "nav_msgs/msg/Odometry",
    dds_name: "nav_msgs::msg::dds_::Odometry_",
    hash: "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0",
};

/// geometry_msgs/Twist (`/cmd_vel`).
pub const TWIST: MessageType = MessageType {
    ros_name: "geometry_msgs/msg/Twist",
    dds_name: "geometry_msgs::msg::dds_::Twist_",
    hash: "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
};

/// builtin_interfaces/Time (a field of every header; also a message of its own).
pub const TIME: MessageType = MessageType {
    ros_name: "builtin_interfaces/msg/Time",
    dds_name: "builtin_interfaces::msg::dds_::Time_",
    hash: "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
};

/// std_msgs/Header.
pub const HEADER: MessageType = MessageType {
    ros_name: "std_msgs/msg/Header",
    dds_name: "std_msgs::msg::dds_::Header_",
    hash: "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
};

/// geometry_msgs/TransformStamped (the element of a TFMessage).
pub const TRANSFORM_STAMPED: MessageType = MessageType {
    ros_name: "geometry_msgs/msg/TransformStamped",
    dds_name: "geometry_msgs::msg::dds_::TransformStamped_",
    hash: "RIHS01_0a241f87d04668d94099cbb5ba11691d5ad32c2f29682e4eb5653424bd275206",
};

/// Every type above, for tests and tools that check them all.
pub const ALL: [MessageType; 8] =
    [JOINT_STATE, IMU, TF_MESSAGE, ODOMETRY, TWIST, TIME, HEADER, TRANSFORM_STAMPED];
