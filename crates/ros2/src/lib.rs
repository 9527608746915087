//! What a Zenoh session must put on the network to appear to ROS 2 over rmw_zenoh, as bytes
//! and strings, with no Zenoh in it: key expressions and liveliness tokens ([`keys`]), the
//! attachment of each publication ([`attachment`]), the messages naoqi_driver2 publishes in
//! CDR and the `/cmd_vel` Twist it takes ([`messages`]), their type hashes ([`types`]) and
//! naoqi_driver2's names ([`naoqi_driver`]).
//!
//! Publishing the joint states, as the Zenoh adapter does it (with `zenoh` in its hands):
//!
//! ```
//! use naobroker_ros2::{gid_of_token, naoqi_driver, Attachment, CdrMessage, Header, JointState};
//! use naobroker_ros2::{Node, Qos, Time};
//!
//! let node = Node {
//!     domain_id: 0,
//!     session_id: "8b20917502ee955ac4476e0266340d5c".into(), // session.zid().to_string()
//!     node_id: 0,
//!     namespace: "/".into(),
//!     name: naoqi_driver::NODE_NAME.into(),
//!     enclave: "/".into(),
//! };
//! let key = node.topic_key(naoqi_driver::JOINT_STATES, &JointState::TYPE).unwrap();
//! assert!(key.starts_with("0/joint_states/sensor_msgs::msg::dds_::JointState_/RIHS01_"));
//! // Liveliness tokens to declare, and keep while publishing:
//! let node_token = node.token().unwrap();
//! let publisher_token =
//!     node.publisher_token(1, naoqi_driver::JOINT_STATES, &JointState::TYPE, &Qos::keep_last(10)).unwrap();
//! assert!(node_token.ends_with("/0/0/NN/%/%/naoqi_driver"));
//! assert!(publisher_token.contains("/0/1/MP/%/%/naoqi_driver/%joint_states/sensor_msgs::"));
//! // Each sample: the CDR payload and the attachment.
//! let stamp_ns = 1_700_000_000_250_000_000;
//! let message = JointState {
//!     header: Header { stamp: Time::from_nanos(stamp_ns), frame_id: String::new() },
//!     name: vec!["HeadYaw".into()],
//!     position: vec![0.1],
//!     ..JointState::default()
//! };
//! let mut payload = Vec::new();
//! message.encode_into(&mut payload);
//! let gid = gid_of_token(&publisher_token);
//! let attachment = Attachment { sequence: 1, timestamp_ns: stamp_ns, gid }.encode();
//! assert_eq!((payload.len(), attachment.len()), (60, 33));
//! ```
//!
//! Taking `/cmd_vel`: subscribe to `node.topic_key(naoqi_driver::CMD_VEL, &Twist::TYPE)`,
//! declare `node.subscription_token(..)`, and give each payload to [`decode_twist`], which
//! refuses truncated, malformed or non-finite input with a [`CdrError`] naming the field.
#![deny(unsafe_code)]

pub mod attachment;
mod cdr;
pub mod keys;
pub mod messages;
pub mod naoqi_driver;
pub mod types;

pub use attachment::{gid_of_token, Attachment, AttachmentError, Gid};
pub use cdr::CdrError;
pub use keys::{fully_qualified_name, topic_key, Durability, History, NameError, Node, Qos, Reliability};
pub use messages::{
    decode_twist, CdrMessage, Header, Imu, JointState, Odometry, Pose, Quaternion, TfMessage, Time,
    Transform, TransformStamped, Twist, Vector3,
};
pub use types::MessageType;
