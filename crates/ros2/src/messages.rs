//! The ROS 2 messages the robot publishes and takes, with their CDR encodings: field order and
//! types as in the `.msg` files of builtin_interfaces, std_msgs, geometry_msgs, sensor_msgs,
//! tf2_msgs and nav_msgs.

use crate::cdr::{CdrError, Reader, Writer};
use crate::types::{
    MessageType, HEADER, IMU, JOINT_STATE, ODOMETRY, TF_MESSAGE, TIME, TRANSFORM_STAMPED, TWIST,
};

/// A message this crate encodes, with the type rmw_zenoh names it by.
pub trait CdrMessage {
    /// Its type: DDS name and type hash, for key expressions and liveliness tokens.
    const TYPE: MessageType;

    /// Clears `out` and writes the message there, encapsulation header first.
    fn encode_into(&self, out: &mut Vec<u8>);

    /// The message in a new buffer.
    fn to_cdr(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}

/// builtin_interfaces/Time: seconds and nanoseconds since the Unix epoch (ROS time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    pub sec: i32,
    pub nanosec: u32,
}

impl Time {
    /// The time `nanoseconds` after the epoch (seconds wrap past 2038, as ROS's `int32` does).
    pub fn from_nanos(nanoseconds: i64) -> Self {
        Time {
            sec: nanoseconds.div_euclid(1_000_000_000) as i32,
            nanosec: nanoseconds.rem_euclid(1_000_000_000) as u32,
        }
    }

    fn write(&self, out: &mut Writer) {
        out.i32(self.sec);
        out.u32(self.nanosec);
    }
}

impl CdrMessage for Time {
    const TYPE: MessageType = TIME;

    fn encode_into(&self, out: &mut Vec<u8>) {
        self.write(&mut Writer::new(out));
    }
}

/// std_msgs/Header: when and in which frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    pub stamp: Time,
    pub frame_id: String,
}

impl Header {
    fn write(&self, out: &mut Writer) {
        self.stamp.write(out);
        out.string(&self.frame_id);
    }
}

impl CdrMessage for Header {
    const TYPE: MessageType = HEADER;

    fn encode_into(&self, out: &mut Vec<u8>) {
        self.write(&mut Writer::new(out));
    }
}

/// geometry_msgs/Vector3 (also Point's layout).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vector3 {
    fn write(&self, out: &mut Writer) {
        out.f64_array(&[self.x, self.y, self.z]);
    }

    fn read(input: &mut Reader, [x, y, z]: [&'static str; 3]) -> Result<Self, CdrError> {
        Ok(Vector3 { x: input.finite_f64(x)?, y: input.finite_f64(y)?, z: input.finite_f64(z)? })
    }
}

/// geometry_msgs/Quaternion, (x, y, z, w) in that order on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quaternion {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub w: f64,
}

impl Default for Quaternion {
    /// The identity rotation (the `.msg` file's default `w = 1`).
    fn default() -> Self {
        Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
    }
}

impl Quaternion {
    /// The rotation of `roll` about x, then `pitch` about y, then `yaw` about z (fixed axes),
    /// as tf2's `Quaternion::setRPY`, which naoqi_driver2 uses for odometry.
    pub fn from_rpy(roll: f64, pitch: f64, yaw: f64) -> Self {
        let (sr, cr) = (roll / 2.0).sin_cos();
        let (sp, cp) = (pitch / 2.0).sin_cos();
        let (sy, cy) = (yaw / 2.0).sin_cos();
        Quaternion {
            x: sr * cp * cy - cr * sp * sy,
            y: cr * sp * cy + sr * cp * sy,
            z: cr * cp * sy - sr * sp * cy,
            w: cr * cp * cy + sr * sp * sy,
        }
    }

    fn write(&self, out: &mut Writer) {
        out.f64_array(&[self.x, self.y, self.z, self.w]);
    }
}

/// sensor_msgs/JointState: one entry per joint in each non-empty list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointState {
    pub header: Header,
    pub name: Vec<String>,
    pub position: Vec<f64>,
    pub velocity: Vec<f64>,
    pub effort: Vec<f64>,
}

impl CdrMessage for JointState {
    const TYPE: MessageType = JOINT_STATE;

    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut out = Writer::new(out);
        self.header.write(&mut out);
        out.count(self.name.len());
        for name in &self.name {
            out.string(name);
        }
        out.f64_sequence(&self.position);
        out.f64_sequence(&self.velocity);
        out.f64_sequence(&self.effort);
    }
}

/// sensor_msgs/Imu. A covariance whose first element is -1 says "no estimate of this".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imu {
    pub header: Header,
    pub orientation: Quaternion,
    pub orientation_covariance: [f64; 9],
    pub angular_velocity: Vector3,
    pub angular_velocity_covariance: [f64; 9],
    pub linear_acceleration: Vector3,
    pub linear_acceleration_covariance: [f64; 9],
}

impl CdrMessage for Imu {
    const TYPE: MessageType = IMU;

    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut out = Writer::new(out);
        self.header.write(&mut out);
        self.orientation.write(&mut out);
        out.f64_array(&self.orientation_covariance);
        self.angular_velocity.write(&mut out);
        out.f64_array(&self.angular_velocity_covariance);
        self.linear_acceleration.write(&mut out);
        out.f64_array(&self.linear_acceleration_covariance);
    }
}

/// geometry_msgs/Transform: the child frame's origin and orientation in the parent frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Transform {
    pub translation: Vector3,
    pub rotation: Quaternion,
}

/// geometry_msgs/TransformStamped: `header.frame_id` is the parent frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransformStamped {
    pub header: Header,
    pub child_frame_id: String,
    pub transform: Transform,
}

impl TransformStamped {
    fn write(&self, out: &mut Writer) {
        self.header.write(out);
        out.string(&self.child_frame_id);
        self.transform.translation.write(out);
        self.transform.rotation.write(out);
    }
}

impl CdrMessage for TransformStamped {
    const TYPE: MessageType = TRANSFORM_STAMPED;

    fn encode_into(&self, out: &mut Vec<u8>) {
        self.write(&mut Writer::new(out));
    }
}

/// tf2_msgs/TFMessage: what `/tf` carries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TfMessage {
    pub transforms: Vec<TransformStamped>,
}

impl CdrMessage for TfMessage {
    const TYPE: MessageType = TF_MESSAGE;

    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut out = Writer::new(out);
        out.count(self.transforms.len());
        for transform in &self.transforms {
            transform.write(&mut out);
        }
    }
}

/// geometry_msgs/Pose: position (a Point) and orientation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    pub position: Vector3,
    pub orientation: Quaternion,
}

/// geometry_msgs/Twist: linear (m/s) and angular (rad/s) velocity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Twist {
    pub linear: Vector3,
    pub angular: Vector3,
}

impl CdrMessage for Twist {
    const TYPE: MessageType = TWIST;

    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut out = Writer::new(out);
        self.linear.write(&mut out);
        self.angular.write(&mut out);
    }
}

/// Reads a geometry_msgs/Twist (what `/cmd_vel` carries) from untrusted bytes: little- or
/// big-endian plain CDR, every component finite, nothing after it but up to 3 padding bytes.
pub fn decode_twist(bytes: &[u8]) -> Result<Twist, CdrError> {
    let mut input = Reader::new(bytes)?;
    let linear = Vector3::read(&mut input, ["linear.x", "linear.y", "linear.z"])?;
    let angular = Vector3::read(&mut input, ["angular.x", "angular.y", "angular.z"])?;
    input.finish()?;
    Ok(Twist { linear, angular })
}

/// nav_msgs/Odometry: the pose in `header.frame_id`, the twist in `child_frame_id`; each
/// covariance is row-major over (x, y, z, rotation about x, y, z).
#[derive(Debug, Clone, PartialEq)]
pub struct Odometry {
    pub header: Header,
    pub child_frame_id: String,
    pub pose: Pose,
    pub pose_covariance: [f64; 36],
    pub twist: Twist,
    pub twist_covariance: [f64; 36],
}

impl CdrMessage for Odometry {
    const TYPE: MessageType = ODOMETRY;

    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut out = Writer::new(out);
        self.header.write(&mut out);
        out.string(&self.child_frame_id);
        self.pose.position.write(&mut out);
        self.pose.orientation.write(&mut out);
        out.f64_array(&self.pose_covariance);
        self.twist.linear.write(&mut out);
        self.twist.angular.write(&mut out);
        out.f64_array(&self.twist_covariance);
    }
}
