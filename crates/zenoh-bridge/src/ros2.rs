//! The ROS 2 view (`[zenoh.ros2]`): what naoqi_driver2 publishes that this robot has
//! (`/joint_states`, `imu/torso`, `/tf`: odom → base_link → torso and every link posed by the
//! sensed angles, `odom`), in rmw_zenoh's keys,
//! liveliness tokens, attachments and CDR (crate `naobroker-ros2`), from the slots the DCM's
//! cycle publishes and the walk's odometry; `/cmd_vel` to `ALMotion.move` when enabled
//! (docs/ros2.md, docs/team.md).

use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_memory::Store;
use naobroker_motion::runner::MotionShared;
use naobroker_ros2::naoqi_driver::{self, PUBLICATIONS};
use naobroker_ros2::{
    gid_of_token, Attachment, CdrMessage, Gid, Header, Imu, JointState, Node, Odometry, Pose, Qos,
    Quaternion, TfMessage, Time, Transform, TransformStamped, Twist, Vector3,
};
use naobroker_rtslots::CONSISTENT_READ_TRIES;
use serde::Deserialize;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Publisher;
use zenoh::{Session, Wait};

use crate::bounds::{MAX_DOMAIN_ID, MAX_RATE_HZ};
use crate::error::ZenohError;
use crate::module::Counters;
use crate::tf::{self, KinematicTree};

/// `[zenoh.ros2]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ros2Config {
    /// The ROS domain (`ROS_DOMAIN_ID`): one per robot when a team shares a network, since
    /// naoqi_driver2's names are the same on every robot.
    pub domain_id: u32,
    /// How often the four topics are published, per second (at most once per DCM cycle).
    pub rate_hz: f64,
    /// Take `/cmd_vel` to `ALMotion.move`: only from `[zenoh.auth] movers` (Zenoh's access
    /// control denies everyone else's puts on its key).
    pub cmd_vel: bool,
}

impl Default for Ros2Config {
    fn default() -> Self {
        Ros2Config { domain_id: 0, rate_hz: 50.0, cmd_vel: false }
    }
}

impl Ros2Config {
    pub(crate) fn check(&self) -> Result<(), ZenohError> {
        if !(self.rate_hz > 0.0 && self.rate_hz <= MAX_RATE_HZ) {
            return Err(ZenohError::Rate(self.rate_hz));
        }
        if self.domain_id > MAX_DOMAIN_ID {
            return Err(ZenohError::DomainId(self.domain_id));
        }
        Ok(())
    }

    /// `/cmd_vel`'s key in this domain (rmw_zenoh's `<domain>/cmd_vel/<type>/<hash>`).
    pub(crate) fn cmd_vel_key(&self) -> String {
        naobroker_ros2::topic_key(self.domain_id, "/", naoqi_driver::CMD_VEL, &Twist::TYPE)
            .expect("naoqi_driver's names are valid")
    }
}

const DEVICES: &str = "Device/SubDeviceList/";
/// The inertial unit's keys: angles, gyroscope, accelerometer.
const IMU_KEYS: [&str; 9] = [
    "InertialSensor/AngleX/Sensor/Value",
    "InertialSensor/AngleY/Sensor/Value",
    "InertialSensor/AngleZ/Sensor/Value",
    "InertialSensor/GyroscopeX/Sensor/Value",
    "InertialSensor/GyroscopeY/Sensor/Value",
    "InertialSensor/GyroscopeZ/Sensor/Value",
    "InertialSensor/AccelerometerX/Sensor/Value",
    "InertialSensor/AccelerometerY/Sensor/Value",
    "InertialSensor/AccelerometerZ/Sensor/Value",
];
/// A joint's sensed angle: `Device/SubDeviceList/<joint>/Position/Sensor/Value`.
const POSITION_SENSOR: &str = "/Position/Sensor/Value";

/// One topic's publisher and what rmw_zenoh attaches to its samples.
struct Topic {
    publisher: Publisher<'static>,
    gid: Gid,
    sequence: i64,
}

impl Topic {
    fn put(&mut self, message: &impl CdrMessage, stamp_ns: i64, buffer: &mut Vec<u8>) -> bool {
        message.encode_into(buffer);
        self.sequence += 1;
        let attachment =
            Attachment { sequence: self.sequence, timestamp_ns: stamp_ns, gid: self.gid }.encode();
        self.publisher.put(buffer.as_slice()).attachment(attachment.to_vec()).wait().is_ok()
    }
}

/// The declared view: tokens kept while it publishes.
pub(crate) struct Ros2View {
    _tokens: Vec<LivelinessToken>,
    /// In [`PUBLICATIONS`]' order: joint states, IMU, TF, odometry.
    topics: Vec<Topic>,
    joints: Vec<(String, usize)>,
    imu: Vec<Option<usize>>,
    motion: Arc<MotionShared>,
    every: Duration,
    due: Instant,
    /// The slots' stamp of the last cycle published.
    stamp: u64,
    buffer: Vec<u8>,
    /// The links posed by the sensed angles, for `/tf`.
    tree: KinematicTree,
}

impl Ros2View {
    /// Declare naoqi_driver's node, its publishers' tokens and publishers, and with `cmd_vel`
    /// its subscription (each Twist given to `take`).
    pub(crate) fn declare(
        session: &Session,
        config: &Ros2Config,
        store: &Store,
        motion: Arc<MotionShared>,
        take: impl Fn(Twist) + Send + Sync + 'static,
        counters: Arc<Counters>,
    ) -> Result<(Ros2View, Option<zenoh::pubsub::Subscriber<()>>), ZenohError> {
        let failed = |error: String| ZenohError::Start(format!("the ROS 2 view: {error}"));
        let node = Node {
            domain_id: config.domain_id,
            session_id: session.zid().to_string(),
            node_id: 0,
            namespace: "/".into(),
            name: naoqi_driver::NODE_NAME.into(),
            enclave: "/".into(),
        };
        let mut tokens = vec![node.token().map_err(|error| failed(error.to_string()))?];
        let mut topics = Vec::new();
        for (entity, publication) in (1..).zip(PUBLICATIONS) {
            let qos = Qos::keep_last(publication.depth);
            let token = node
                .publisher_token(entity, publication.topic, &publication.message, &qos)
                .map_err(|error| failed(error.to_string()))?;
            let key =
                node.topic_key(publication.topic, &publication.message).map_err(|e| failed(e.to_string()))?;
            let publisher = session.declare_publisher(key).wait().map_err(|e| failed(e.to_string()))?;
            topics.push(Topic { publisher, gid: gid_of_token(&token), sequence: 0 });
            tokens.push(token);
        }
        let subscriber = if config.cmd_vel {
            let entity = PUBLICATIONS.len() as u32 + 1;
            let qos = Qos::keep_last(naoqi_driver::CMD_VEL_DEPTH);
            let token = node
                .subscription_token(entity, naoqi_driver::CMD_VEL, &Twist::TYPE, &qos)
                .map_err(|error| failed(error.to_string()))?;
            tokens.push(token);
            let key = config.cmd_vel_key();
            // Zenoh's access control holds puts on this exact key only: a put on a wildcard
            // that covers it (`0/cmd_vel/**`) passes the control and still reaches this
            // subscriber, so only a put on the key itself is taken.
            let subscriber = session
                .declare_subscriber(key.clone())
                .callback(move |sample| {
                    if sample.key_expr().as_str() != key {
                        return Counters::bump(&counters.cmd_vel_refused);
                    }
                    match naobroker_ros2::decode_twist(&sample.payload().to_bytes()) {
                        Ok(twist) => take(twist),
                        Err(_) => Counters::bump(&counters.cmd_vel_dropped),
                    }
                })
                .wait()
                .map_err(|error| failed(error.to_string()))?;
            Some(subscriber)
        } else {
            None
        };
        let tokens = tokens
            .into_iter()
            .map(|token| session.liveliness().declare_token(token).wait())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| failed(error.to_string()))?;
        let layout = store.slots().layout();
        let joints = layout
            .names()
            .enumerate()
            .filter_map(|(slot, name)| {
                let joint = name.strip_prefix(DEVICES)?.strip_suffix(POSITION_SENSOR)?;
                (!joint.contains('/')).then(|| (joint.to_owned(), slot))
            })
            .collect();
        let imu = IMU_KEYS.iter().map(|key| store.slot_index(&format!("{DEVICES}{key}"))).collect();
        let view = Ros2View {
            _tokens: tokens,
            topics,
            joints,
            imu,
            motion,
            every: Duration::from_secs_f64(1.0 / config.rate_hz),
            due: Instant::now(),
            stamp: 0,
            buffer: Vec::new(),
            tree: KinematicTree::new(store),
        };
        Ok((view, subscriber))
    }

    /// Publish the four topics for the DCM's last cycle, when due and new.
    pub(crate) fn publish(&mut self, store: &Store, counters: &Counters) {
        let slots = store.slots();
        let now = Instant::now();
        if now < self.due || slots.updated_us() == self.stamp {
            return;
        }
        // The joints, the IMU and the links' poses, all of one cycle with its stamp (a
        // cycle's writes under way at each try: read again at the next look, still due).
        let read = slots.read_consistent(CONSISTENT_READ_TRIES, |slots| {
            let positions: Vec<f64> = self.joints.iter().map(|(_, slot)| slots.get(*slot)).collect();
            let imu: Vec<f64> =
                self.imu.iter().map(|slot| slot.map_or(0.0, |slot| slots.get(slot))).collect();
            self.tree.update(|slot| slots.get(slot));
            (slots.updated_us(), positions, imu)
        });
        let Some((stamp_us, positions, imu)) = read else { return };
        self.due = now + self.every;
        self.stamp = stamp_us;
        let stamp_ns = (stamp_us * 1000) as i64;
        let header = |frame: &str| Header { stamp: Time::from_nanos(stamp_ns), frame_id: frame.to_owned() };
        let states = JointState {
            header: header(""),
            name: self.joints.iter().map(|(name, _)| name.clone()).collect(),
            position: positions,
            ..JointState::default()
        };
        let inertial = Imu {
            header: header(naoqi_driver::BASE_LINK),
            orientation: Quaternion::from_rpy(imu[0], imu[1], imu[2]),
            angular_velocity: Vector3 { x: imu[3], y: imu[4], z: imu[5] },
            linear_acceleration: Vector3 { x: imu[6], y: imu[7], z: imu[8] },
            ..Imu::default()
        };
        let [x, y, theta] = self.motion.walk.position(false);
        let [vx, vy, omega] = self.motion.walk.velocity();
        let place = Transform {
            translation: Vector3 { x, y, z: 0.0 },
            rotation: Quaternion::from_rpy(0.0, 0.0, theta),
        };
        let mut transforms = vec![
            TransformStamped {
                header: header(naoqi_driver::ODOM),
                child_frame_id: naoqi_driver::BASE_LINK.into(),
                transform: place,
            },
            TransformStamped {
                header: header(naoqi_driver::BASE_LINK),
                child_frame_id: tf::TORSO.into(),
                transform: self.tree.torso_in_robot(imu[0], imu[1]),
            },
        ];
        transforms.extend(self.tree.links().map(|link| TransformStamped {
            header: header(link.parent),
            child_frame_id: link.child.into(),
            transform: link.transform,
        }));
        let tf = TfMessage { transforms };
        let odometry = Odometry {
            header: header(naoqi_driver::ODOM),
            child_frame_id: naoqi_driver::BASE_LINK.into(),
            pose: Pose { position: place.translation, orientation: place.rotation },
            pose_covariance: [0.0; 36],
            twist: Twist {
                linear: Vector3 { x: vx, y: vy, z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: omega },
            },
            twist_covariance: [0.0; 36],
        };
        let buffer = &mut self.buffer;
        let [joint_states, imu_torso, transforms, odom] = &mut self.topics[..] else { return };
        let sent = [
            joint_states.put(&states, stamp_ns, buffer),
            imu_torso.put(&inertial, stamp_ns, buffer),
            transforms.put(&tf, stamp_ns, buffer),
            odom.put(&odometry, stamp_ns, buffer),
        ];
        let count = sent.iter().filter(|sent| **sent).count() as u64;
        counters.ros2_messages_put.fetch_add(count, std::sync::atomic::Ordering::Relaxed);
    }
}
