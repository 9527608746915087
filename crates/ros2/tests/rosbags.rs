//! Our CDR read by a ROS 2 CDR implementation we did not write: rosbags (PyPI, pure Python,
//! with the standard message definitions of each distribution), through tests/rosbags_cdr.py.
//! It decodes each of our messages (compared field by field) and serializes it again (compared
//! byte for byte); it serializes Twists that `decode_twist` reads; and it computes the RIHS01
//! type hashes, which it first must get right for std_msgs/String, whose hash rmw_zenoh's
//! design document prints.
//!
//! Needs `python3` with `rosbags` first on PATH (the README's test command's `.venv`).

use std::io::Write;
use std::process::{Command, Stdio};

use naobroker_ros2::types::{self, MessageType};
use naobroker_ros2::*;
use serde_json::{json, Value as Json};

/// std_msgs/String's hash in rmw_zenoh's docs/design.md (its `chatter` examples).
const STRING_HASH_IN_DESIGN_MD: &str =
    "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

fn rosbags(request: Json) -> Json {
    let mut python = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rosbags_cdr.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    python.stdin.take().unwrap().write_all(request.to_string().as_bytes()).unwrap();
    let output = python.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "rosbags (pip install rosbags==0.11.9 into the python3 first on PATH): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect()
}

fn time_json(time: &Time) -> Json {
    json!({"sec": time.sec, "nanosec": time.nanosec})
}

fn header_json(header: &Header) -> Json {
    json!({"stamp": time_json(&header.stamp), "frame_id": header.frame_id})
}

fn vector_json(vector: &Vector3) -> Json {
    json!({"x": vector.x, "y": vector.y, "z": vector.z})
}

fn quaternion_json(q: &Quaternion) -> Json {
    json!({"x": q.x, "y": q.y, "z": q.z, "w": q.w})
}

fn stamp(nanos: i64, frame_id: &str) -> Header {
    Header { stamp: Time::from_nanos(nanos), frame_id: frame_id.into() }
}

/// Distinct values, so that a field read from the wrong place shows. Every number in these
/// tests has a short decimal form, which JSON carries exactly.
fn series(start: f64, count: usize) -> Vec<f64> {
    (0..count).map(|at| start + at as f64 * 0.125).collect()
}

fn joint_state() -> (JointState, Json) {
    // Names of 7, 14 and 12 characters: each string leaves the next one unaligned.
    let message = JointState {
        header: stamp(1_764_270_000_123_456_789, ""),
        name: vec!["HeadYaw".into(), "LShoulderPitch".into(), "RHipYawPitch".into()],
        position: vec![0.25, -1.5, 0.0078125],
        velocity: vec![],
        effort: vec![0.5, 0.75, -0.125],
    };
    let expected = json!({
        "header": header_json(&message.header),
        "name": message.name,
        "position": message.position,
        "velocity": message.velocity,
        "effort": message.effort,
    });
    (message, expected)
}

fn imu() -> (Imu, Json) {
    let mut orientation_covariance = [0.0; 9];
    orientation_covariance[0] = -1.0;
    let message = Imu {
        header: stamp(1_764_270_000_500_000_000, "base_link"),
        orientation: Quaternion { x: 0.5, y: -0.5, z: 0.25, w: 0.625 },
        orientation_covariance,
        angular_velocity: Vector3 { x: 0.01, y: -0.02, z: 0.03 },
        angular_velocity_covariance: series(1.0, 9).try_into().unwrap(),
        linear_acceleration: Vector3 { x: 0.1, y: 0.2, z: 9.81 },
        linear_acceleration_covariance: series(2.0, 9).try_into().unwrap(),
    };
    let expected = json!({
        "header": header_json(&message.header),
        "orientation": quaternion_json(&message.orientation),
        "orientation_covariance": message.orientation_covariance,
        "angular_velocity": vector_json(&message.angular_velocity),
        "angular_velocity_covariance": message.angular_velocity_covariance,
        "linear_acceleration": vector_json(&message.linear_acceleration),
        "linear_acceleration_covariance": message.linear_acceleration_covariance,
    });
    (message, expected)
}

fn tf_message() -> (TfMessage, Json) {
    let transform = |parent: &str, child: &str, at: f64| TransformStamped {
        header: stamp(1_764_270_001_000_000_001, parent),
        child_frame_id: child.into(),
        transform: Transform {
            translation: Vector3 { x: at, y: -at, z: 2.0 * at },
            rotation: Quaternion { x: at, y: 0.0, z: -at, w: 1.0 - at },
        },
    };
    let message = TfMessage {
        transforms: vec![
            transform("odom", "base_link", 0.5),
            transform("base_link", "Head", 0.125),
            transform("Head", "CameraTop", 0.0625),
        ],
    };
    let transforms: Vec<Json> = message.transforms.iter().map(transform_json).collect();
    (message, json!({"transforms": transforms}))
}

fn transform_json(t: &TransformStamped) -> Json {
    json!({
        "header": header_json(&t.header),
        "child_frame_id": t.child_frame_id,
        "transform": {
            "translation": vector_json(&t.transform.translation),
            "rotation": quaternion_json(&t.transform.rotation),
        },
    })
}

fn odometry() -> (Odometry, Json) {
    let message = Odometry {
        header: stamp(1_764_270_002_000_000_000, "odom"),
        child_frame_id: "base_link".into(),
        pose: Pose {
            position: Vector3 { x: 1.25, y: -0.5, z: 0.33 },
            orientation: Quaternion { x: 0.0, y: 0.0, z: 0.375, w: 0.875 },
        },
        pose_covariance: series(10.0, 36).try_into().unwrap(),
        twist: Twist {
            linear: Vector3 { x: 0.1, y: 0.0, z: 0.0 },
            angular: Vector3 { x: 0.0, y: 0.0, z: -0.3 },
        },
        twist_covariance: series(20.0, 36).try_into().unwrap(),
    };
    let expected = json!({
        "header": header_json(&message.header),
        "child_frame_id": message.child_frame_id,
        "pose": {
            "pose": {
                "position": vector_json(&message.pose.position),
                "orientation": quaternion_json(&message.pose.orientation),
            },
            "covariance": message.pose_covariance.to_vec(),
        },
        "twist": {
            "twist": {
                "linear": vector_json(&message.twist.linear),
                "angular": vector_json(&message.twist.angular),
            },
            "covariance": message.twist_covariance.to_vec(),
        },
    });
    (message, expected)
}

#[test]
fn rosbags_reads_our_messages_field_by_field_and_writes_the_same_bytes() {
    let time = Time { sec: -7, nanosec: 999_999_999 };
    // Frame ids of 0 to 4 characters: the string then ends at each offset modulo 4.
    let headers: Vec<Header> = ["", "a", "ab", "odo", "odom"].map(|frame| stamp(42, frame)).into();
    let (tf, _) = tf_message();
    let empty = JointState { header: stamp(0, "base_link"), ..JointState::default() };
    let mut cases: Vec<(MessageType, Vec<u8>, Json)> = vec![
        (Time::TYPE, time.to_cdr(), time_json(&time)),
        (TransformStamped::TYPE, tf.transforms[1].to_cdr(), transform_json(&tf.transforms[1])),
        (TfMessage::TYPE, TfMessage::default().to_cdr(), json!({"transforms": []})),
        (
            JointState::TYPE,
            empty.to_cdr(),
            json!({
                "header": header_json(&empty.header),
                "name": [], "position": [], "velocity": [], "effort": [],
            }),
        ),
        {
            let (message, expected) = joint_state();
            (JointState::TYPE, message.to_cdr(), expected)
        },
        {
            let (message, expected) = imu();
            (Imu::TYPE, message.to_cdr(), expected)
        },
        {
            let (message, expected) = tf_message();
            (TfMessage::TYPE, message.to_cdr(), expected)
        },
        {
            let (message, expected) = odometry();
            (Odometry::TYPE, message.to_cdr(), expected)
        },
        {
            let twist = Twist {
                linear: Vector3 { x: 0.2, y: -0.1, z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: 0.5 },
            };
            let expected =
                json!({"linear": vector_json(&twist.linear), "angular": vector_json(&twist.angular)});
            (Twist::TYPE, twist.to_cdr(), expected)
        },
    ];
    cases.extend(headers.iter().map(|header| (Header::TYPE, header.to_cdr(), header_json(header))));
    let decode: Vec<Json> =
        cases.iter().map(|(kind, cdr, _)| json!({"type": kind.ros_name, "cdr": hex(cdr)})).collect();
    let answer = rosbags(json!({"decode": decode, "twists": [], "hashes": []}));
    for ((kind, cdr, expected), decoded) in cases.iter().zip(answer["decoded"].as_array().unwrap()) {
        assert_eq!(&decoded["message"], expected, "{} as rosbags reads it", kind.ros_name);
        assert_eq!(decoded["cdr"].as_str().unwrap(), hex(cdr), "{}: rosbags's bytes and ours", kind.ros_name);
    }
}

#[test]
fn decode_twist_reads_what_rosbags_writes() {
    let twists = [([0.3, -0.2, 0.0], [0.0, 0.0, 0.7]), ([-1e-3, 5.5, 1e300], [-0.0, 2.5e-8, -3.25])];
    let request: Vec<Json> =
        twists.iter().map(|(linear, angular)| json!({"linear": linear, "angular": angular})).collect();
    let answer = rosbags(json!({"decode": [], "twists": request, "hashes": []}));
    for ((linear, angular), cdr) in twists.iter().zip(answer["twists"].as_array().unwrap()) {
        let twist = decode_twist(&unhex(cdr.as_str().unwrap())).unwrap();
        assert_eq!([twist.linear.x, twist.linear.y, twist.linear.z], *linear);
        assert_eq!([twist.angular.x, twist.angular.y, twist.angular.z], *angular);
    }
}

#[test]
fn type_hashes_are_what_rosbags_computes() {
    let mut names: Vec<&str> = types::ALL.iter().map(|kind| kind.ros_name).collect();
    names.push("std_msgs/msg/String");
    let answer = rosbags(json!({"decode": [], "twists": [], "hashes": names}));
    assert_eq!(answer["hashes"]["std_msgs/msg/String"], STRING_HASH_IN_DESIGN_MD, "rosbags's RIHS01 itself");
    for kind in types::ALL {
        assert_eq!(answer["hashes"][kind.ros_name], kind.hash, "{}", kind.ros_name);
        let (package, name) = kind.ros_name.split_once("/msg/").unwrap();
        assert_eq!(kind.dds_name, format!("{package}::msg::dds_::{name}_"));
    }
}
