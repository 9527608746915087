//! Key expressions and liveliness tokens against the examples in rmw_zenoh's docs/design.md
//! (ros2/rmw_zenoh, rolling, "Topic and Service name mapping to Zenoh key expressions" and
//! "Graph Cache"), copied here verbatim; and names ROS 2 refuses, refused.

use naobroker_ros2::types::{IMU, JOINT_STATE, ODOMETRY, TF_MESSAGE, TWIST};
use naobroker_ros2::{
    naoqi_driver, topic_key, Durability, History, MessageType, NameError, Node, Qos, Reliability,
};

/// The design document's examples use demo_nodes_cpp's `chatter` of std_msgs/String.
const STRING: MessageType = MessageType {
    ros_name: "std_msgs/msg/String",
    dds_name: "std_msgs::msg::dds_::String_",
    hash: "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
};

/// Each example is the document's line, split where it is long (concat! adds nothing between).
const CHATTER_KEY: &str = concat!(
    "0/chatter/std_msgs::msg::dds_::String_/",
    "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
);
const CHATTER_IN_ROBOT1_KEY: &str = concat!(
    "0/robot1/chatter/std_msgs::msg::dds_::String_/",
    "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
);
const LISTENER_NODE_TOKEN: &str = "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener";
const LISTENER_SUBSCRIPTION_TOKEN: &str = concat!(
    "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/",
    "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18/::,10:,:,:,,"
);
const TALKER_PUBLISHER_TOKEN: &str = concat!(
    "@ros2_lv/2/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/",
    "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18/::,7:,:,:,,"
);

fn node(domain_id: u32, session_id: &str, namespace: &str, name: &str) -> Node {
    Node {
        domain_id,
        session_id: session_id.into(),
        node_id: 0,
        namespace: namespace.into(),
        name: name.into(),
        enclave: "/".into(),
    }
}

#[test]
fn topic_keys_are_the_design_documents() {
    assert_eq!(topic_key(0, "", "chatter", &STRING).unwrap(), CHATTER_KEY);
    assert_eq!(topic_key(0, "/", "/chatter", &STRING).unwrap(), CHATTER_KEY);
    assert_eq!(topic_key(0, "/robot1", "chatter", &STRING).unwrap(), CHATTER_IN_ROBOT1_KEY);
    assert_eq!(topic_key(0, "robot1", "chatter", &STRING).unwrap(), CHATTER_IN_ROBOT1_KEY);
    // An absolute name ignores the namespace.
    assert_eq!(topic_key(0, "/robot1", "/chatter", &STRING).unwrap(), CHATTER_KEY);
}

#[test]
fn liveliness_tokens_are_the_design_documents() {
    let listener = node(2, "aac3178e146ba6f1fc6e6a4085e77f21", "/", "listener");
    assert_eq!(listener.token().unwrap(), LISTENER_NODE_TOKEN);
    let subscription = listener.subscription_token(10, "chatter", &STRING, &Qos::keep_last(10)).unwrap();
    assert_eq!(subscription, LISTENER_SUBSCRIPTION_TOKEN);

    let talker = node(2, "8b20917502ee955ac4476e0266340d5c", "", "talker");
    let publisher = talker.publisher_token(10, "/chatter", &STRING, &Qos::keep_last(7)).unwrap();
    assert_eq!(publisher, TALKER_PUBLISHER_TOKEN);
}

#[test]
fn a_namespace_is_mangled_into_one_chunk() {
    let robot = Node { node_id: 3, ..node(0, "1f", "/team/nao_a", naoqi_driver::NODE_NAME) };
    assert_eq!(robot.token().unwrap(), "@ros2_lv/0/1f/3/3/NN/%/%team%nao_a/naoqi_driver");
    let imu = robot.publisher_token(4, naoqi_driver::IMU_TORSO, &IMU, &Qos::keep_last(10)).unwrap();
    assert_eq!(
        imu,
        format!(
            "@ros2_lv/0/1f/3/4/MP/%/%team%nao_a/naoqi_driver/%team%nao_a%imu%torso/{}/{}/::,10:,:,:,,",
            IMU.dds_name, IMU.hash
        )
    );
    // /tf is absolute: the namespace does not apply.
    assert_eq!(
        robot.topic_key(naoqi_driver::TF, &TF_MESSAGE).unwrap(),
        format!("0/tf/tf2_msgs::msg::dds_::TFMessage_/{}", TF_MESSAGE.hash)
    );
    assert_eq!(
        robot.topic_key(naoqi_driver::ODOM_TOPIC, &ODOMETRY).unwrap(),
        format!("0/team/nao_a/odom/nav_msgs::msg::dds_::Odometry_/{}", ODOMETRY.hash)
    );
}

#[test]
fn naoqi_driver_topics_at_the_root() {
    let driver = node(0, "ab", "/", naoqi_driver::NODE_NAME);
    let keys = [
        (naoqi_driver::JOINT_STATES, JOINT_STATE, "0/joint_states/sensor_msgs::msg::dds_::JointState_"),
        (naoqi_driver::IMU_TORSO, IMU, "0/imu/torso/sensor_msgs::msg::dds_::Imu_"),
        (naoqi_driver::TF, TF_MESSAGE, "0/tf/tf2_msgs::msg::dds_::TFMessage_"),
        (naoqi_driver::ODOM_TOPIC, ODOMETRY, "0/odom/nav_msgs::msg::dds_::Odometry_"),
        (naoqi_driver::CMD_VEL, TWIST, "0/cmd_vel/geometry_msgs::msg::dds_::Twist_"),
    ];
    for (topic, message, key) in keys {
        assert_eq!(driver.topic_key(topic, &message).unwrap(), format!("{key}/{}", message.hash));
    }
    let tf =
        naoqi_driver::PUBLICATIONS.iter().find(|publication| publication.topic == naoqi_driver::TF).unwrap();
    let token = driver.publisher_token(3, tf.topic, &tf.message, &Qos::keep_last(tf.depth)).unwrap();
    assert_eq!(
        token,
        format!(
            "@ros2_lv/0/ab/0/3/MP/%/%/naoqi_driver/%tf/tf2_msgs::msg::dds_::TFMessage_/{}/::,100:,:,:,,",
            TF_MESSAGE.hash
        )
    );
}

#[test]
fn qos_fields_are_written_only_when_not_rmw_zenohs_default() {
    let qos = |reliability, durability, history| Qos { reliability, durability, history }.to_keyexpr();
    use Durability::*;
    use Reliability::*;
    assert_eq!(qos(Reliable, Volatile, History::KeepLast(42)), "::,:,:,:,,");
    assert_eq!(qos(Reliable, Volatile, History::KeepLast(0)), "::,:,:,:,,");
    assert_eq!(qos(BestEffort, Volatile, History::KeepLast(5)), "2::,5:,:,:,,");
    assert_eq!(qos(Reliable, TransientLocal, History::KeepLast(1)), ":1:,1:,:,:,,");
    assert_eq!(qos(Reliable, Volatile, History::KeepAll), "::2,:,:,:,,");
}

#[test]
fn names_ros_refuses_are_refused_with_the_reason() {
    let bad_topics = [
        ("", NameError::Empty { what: "topic" }),
        ("a b", NameError::Character { what: "topic", name: "a b".into(), character: ' ' }),
        ("cmd_vel/*", NameError::Character { what: "topic", name: "cmd_vel/*".into(), character: '*' }),
        ("~/private", NameError::Character { what: "topic", name: "~/private".into(), character: '~' }),
        ("/a//b", NameError::EmptyToken { what: "topic", name: "/a//b".into() }),
        ("odom/", NameError::EmptyToken { what: "topic", name: "odom/".into() }),
        ("/2d/pose", NameError::DigitFirst { what: "topic", name: "/2d/pose".into() }),
    ];
    for (topic, error) in bad_topics {
        assert_eq!(topic_key(0, "/", topic, &TWIST), Err(error), "{topic:?}");
    }
    assert_eq!(
        topic_key(0, "/nao a", "odom", &ODOMETRY),
        Err(NameError::Character { what: "namespace", name: "/nao a".into(), character: ' ' })
    );
    let enclave = Node { enclave: "/a b".into(), ..node(0, "ab", "/", "n") };
    assert_eq!(
        enclave.token(),
        Err(NameError::Character { what: "enclave", name: "/a b".into(), character: ' ' })
    );
    let named = |name: &str| node(0, "ab", "/", name).token();
    assert_eq!(named("a/b"), Err(NameError::NodeNameSlash("a/b".into())));
    assert_eq!(named(""), Err(NameError::Empty { what: "node name" }));
    let session = |id: &str| node(0, id, "/", "n").token();
    assert_eq!(session("AB"), Err(NameError::SessionId("AB".into())));
    assert_eq!(session(""), Err(NameError::SessionId(String::new())));
    assert_eq!(session("a/b"), Err(NameError::SessionId("a/b".into())));
}
