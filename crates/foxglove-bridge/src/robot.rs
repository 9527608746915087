//! The robot's channels, with Foxglove's own schemas where it has one (joint states, frame
//! transforms, odometry, logs) and JSON elsewhere, and a cycle's messages on them: what the
//! live server and `naocli record` both write.

use std::sync::Arc;

use foxglove::messages::{
    FrameTransform, FrameTransforms, JointState, JointStates, Odometry, Pose, Quaternion, Timestamp, Vector3,
};
use foxglove::{Channel, Context, RawChannel, Schema};
use naobroker_kinematics::transform::Rotation;
use naobroker_kinematics::{Model, Pose as KinematicPose, Transform};
// The force sensors, left foot then right, each in LoLA's order (kg).
use naobroker_lola::names::FSR as FSR_KEYS;
use naobroker_urdf::{FootSensors, ViewerModel};
use serde_json::{json, Value as Json};

/// The fixed frame the robot walks in: NAOqi's FRAME_WORLD, where the walk's odometry starts.
pub const WORLD_FRAME: &str = "odom";
/// The link every chain hangs from: FRAME_TORSO.
pub const ROOT_FRAME: &str = "Torso";

/// Topics.
pub const JOINT_STATES: &str = "/joint_states";
pub const COMMANDED_JOINT_STATES: &str = "/joint_states/commanded";
pub const JOINT_MOTORS: &str = "/joint_motors";
pub const TRANSFORMS: &str = "/tf";
pub const ODOMETRY: &str = "/odom";
pub const INERTIAL_UNIT: &str = "/imu";
pub const FOOT_PRESSURE: &str = "/fsr";
pub const BATTERY: &str = "/battery";
pub const SONAR: &str = "/sonar";
pub const LOG: &str = "/log";
pub const ROBOT_DESCRIPTION: &str = "/robot_description";
pub const MEMORY: &str = "/memory";
/// Events go to `/events/<name>`.
pub const EVENTS_PREFIX: &str = "/events/";

/// A joint's keys, in this order, in a cycle's values.
const JOINT_KEYS: [&str; 5] = [
    "Position/Sensor",
    "Position/Actuator",
    "Hardness/Actuator",
    "ElectricCurrent/Sensor",
    "Temperature/Sensor",
];
/// The inertial unit's keys (angles rad, gyroscope rad/s, accelerometer m/s²).
const IMU_KEYS: [&str; 8] = [
    "InertialSensor/AngleX/Sensor/Value",
    "InertialSensor/AngleY/Sensor/Value",
    "InertialSensor/GyroscopeX/Sensor/Value",
    "InertialSensor/GyroscopeY/Sensor/Value",
    "InertialSensor/GyroscopeZ/Sensor/Value",
    "InertialSensor/AccelerometerX/Sensor/Value",
    "InertialSensor/AccelerometerY/Sensor/Value",
    "InertialSensor/AccelerometerZ/Sensor/Value",
];
const FSR_NAMES: [&str; 4] = ["front_left", "front_right", "rear_left", "rear_right"];
const BATTERY_KEYS: [&str; 4] = [
    "Battery/Charge/Sensor/Value",
    "Battery/Charge/Sensor/Status",
    "Battery/Current/Sensor/Value",
    "Battery/Temperature/Sensor/Value",
];
const SONAR_KEYS: [&str; 2] = ["US/Left/Sensor/Value", "US/Right/Sensor/Value"];
const DEVICES: &str = "Device/SubDeviceList/";

/// The DCM keys a cycle's messages are made of, and where each group starts among them.
#[derive(Debug, Clone)]
pub struct CycleKeys {
    /// The joints with devices (the DCM's), in the DCM's order.
    pub joints: Vec<String>,
    /// Every key, in the order [`RobotChannels::log_cycle`] takes their values.
    pub keys: Vec<String>,
}

impl CycleKeys {
    pub fn new(joints: Vec<String>) -> CycleKeys {
        let mut keys: Vec<String> = joints
            .iter()
            .flat_map(|joint| JOINT_KEYS.iter().map(move |key| format!("{DEVICES}{joint}/{key}/Value")))
            .collect();
        let others = IMU_KEYS.iter().chain(&FSR_KEYS).chain(&BATTERY_KEYS).chain(&SONAR_KEYS);
        keys.extend(others.map(|key| format!("{DEVICES}{key}")));
        CycleKeys { joints, keys }
    }

    fn others(&self) -> usize {
        JOINT_KEYS.len() * self.joints.len()
    }

    /// A joint's sensed angle among a cycle's values.
    pub fn sensed(&self, values: &[f64], joint: usize) -> f64 {
        values[JOINT_KEYS.len() * joint]
    }

    /// The inertial unit's AngleX and AngleY among a cycle's values.
    pub fn torso_angles(&self, values: &[f64]) -> [f64; 2] {
        let at = self.others();
        [values[at], values[at + 1]]
    }
}

/// The model's frames posed by a cycle's sensed angles, as `ALMotion.getTransform(name,
/// FRAME_TORSO, true)` has them: for a recording, which has the angles and not ALMotion's
/// published frames.
pub struct SensedPose {
    model: Model,
    pose: KinematicPose,
    /// Per model joint: the DCM joint whose angle it takes (a coupled joint its leader's).
    sources: Vec<Option<usize>>,
    angles: Vec<f64>,
    frames: Vec<Transform>,
}

impl SensedPose {
    pub fn new(
        viewer: &ViewerModel,
        keys: &CycleKeys,
    ) -> Result<SensedPose, naobroker_kinematics::ModelError> {
        let model = Model::from_description(&viewer.kinematics)?;
        let dcm_joint = |name: &str| keys.joints.iter().position(|joint| joint == name);
        let sources = model
            .joint_names()
            .iter()
            .map(|name| {
                dcm_joint(name).or_else(|| viewer.coupled.get(name).and_then(|leader| dcm_joint(leader)))
            })
            .collect();
        let pose = KinematicPose::new(&model);
        let angles = vec![0.0; model.joint_names().len()];
        Ok(SensedPose { model, pose, sources, angles, frames: Vec::new() })
    }

    /// Every frame in FRAME_TORSO ([`CyclePose::in_torso`]'s order) and FRAME_TORSO in
    /// FRAME_ROBOT, for one cycle's values.
    pub fn update(&mut self, keys: &CycleKeys, values: &[f64]) -> (&[Transform], Transform) {
        for (angle, source) in self.angles.iter_mut().zip(&self.sources) {
            *angle = source.map_or(0.0, |joint| keys.sensed(values, joint));
        }
        self.pose.update(&self.model, &self.angles);
        let names = std::iter::once(ROOT_FRAME)
            .chain(self.model.joint_names().iter().map(String::as_str))
            .chain(self.model.effector_names().iter().map(String::as_str));
        let (model, pose) = (&self.model, &self.pose);
        self.frames =
            names.map(|name| model.frame(name).map_or(Transform::IDENTITY, |f| pose.transform(f))).collect();
        let [x, y] = keys.torso_angles(values);
        (&self.frames, self.pose.torso_in_robot_frame(&self.model, x, y))
    }
}

/// How often the slow channels are written, in cycles of the fast ones.
#[derive(Debug, Clone, Copy)]
pub struct Decimation {
    pub battery: u64,
    pub sonar: u64,
}

/// The parents of the kinematic model's frames (Torso, the joints, the effectors: the order
/// transforms are given in), `None` for the torso.
fn frame_parents(model: &ViewerModel) -> Vec<(String, Option<usize>)> {
    let kinematics = &model.kinematics;
    let index_of = |name: &str| match name {
        "Torso" => Some(0),
        name => kinematics.joints.iter().position(|joint| joint.name == name).map(|index| 1 + index),
    };
    let mut frames = vec![(ROOT_FRAME.to_owned(), None)];
    frames.extend(kinematics.joints.iter().map(|joint| (joint.name.clone(), index_of(&joint.parent))));
    frames.extend(
        kinematics.effectors.iter().map(|effector| (effector.name.clone(), index_of(&effector.parent))),
    );
    frames
}

/// The robot's channels on one context (the live server's, or a recording's).
pub struct RobotChannels {
    joint_states: Channel<JointStates>,
    commanded: Channel<JointStates>,
    transforms: Channel<FrameTransforms>,
    odometry: Channel<Odometry>,
    joint_motors: Arc<RawChannel>,
    inertial_unit: Arc<RawChannel>,
    foot_pressure: Arc<RawChannel>,
    battery: Arc<RawChannel>,
    sonar: Arc<RawChannel>,
    robot_description: Arc<RawChannel>,
    keys: CycleKeys,
    frames: Vec<(String, Option<usize>)>,
    foot_sensors: Option<FootSensors>,
    urdf: String,
    decimation: Decimation,
}

/// A cycle's transforms: every frame of the model in FRAME_TORSO (in [`frame_parents`]'
/// order) and FRAME_TORSO in the world, when known.
pub struct CyclePose<'a> {
    pub in_torso: &'a [Transform],
    pub torso_in_world: Option<Transform>,
    /// The walk's place `[x, y, θ]` and velocity `[vx, vy, vθ]` in FRAME_WORLD, FRAME_ROBOT.
    pub odometry: Option<([f64; 3], [f64; 3])>,
}

/// A JSON channel: JSON Schema of an object, as Foxglove reads without plugins.
pub fn json_channel(context: &Arc<Context>, topic: &str, schema_name: &str) -> Arc<RawChannel> {
    let schema = Schema::new(schema_name, "jsonschema", br#"{"type": "object"}"#.to_vec());
    context
        .channel_builder(topic)
        .message_encoding("json")
        .schema(schema)
        .build_raw()
        .expect("a JSON channel's topic, encoding and schema are valid")
}

impl RobotChannels {
    pub fn new(context: &Arc<Context>, model: &ViewerModel, keys: CycleKeys, decimation: Decimation) -> Self {
        // The robot description as ROS's std_msgs/String has it ({"data": ...}): what the
        // 3D panel's URDF layer reads from a topic.
        let description_schema = Schema::new(
            "std_msgs/String",
            "jsonschema",
            br#"{"type": "object", "properties": {"data": {"type": "string"}}}"#.to_vec(),
        );
        RobotChannels {
            joint_states: context.channel_builder(JOINT_STATES).build(),
            commanded: context.channel_builder(COMMANDED_JOINT_STATES).build(),
            transforms: context.channel_builder(TRANSFORMS).build(),
            odometry: context.channel_builder(ODOMETRY).build(),
            joint_motors: json_channel(context, JOINT_MOTORS, "naobroker.JointMotors"),
            inertial_unit: json_channel(context, INERTIAL_UNIT, "naobroker.InertialUnit"),
            foot_pressure: json_channel(context, FOOT_PRESSURE, "naobroker.FootPressure"),
            battery: json_channel(context, BATTERY, "naobroker.Battery"),
            sonar: json_channel(context, SONAR, "naobroker.Sonar"),
            robot_description: context
                .channel_builder(ROBOT_DESCRIPTION)
                .message_encoding("json")
                .schema(description_schema)
                .build_raw()
                .expect("the robot description's channel is valid"),
            keys,
            frames: frame_parents(model),
            foot_sensors: model.foot_sensors,
            urdf: model.urdf.clone(),
            decimation,
        }
    }

    /// The keys [`RobotChannels::log_cycle`] takes the values of.
    pub fn keys(&self) -> &CycleKeys {
        &self.keys
    }

    /// The robot description's channel (the live server sends it to each new subscriber).
    pub fn robot_description(&self) -> &Arc<RawChannel> {
        &self.robot_description
    }

    /// The robot description's message.
    pub fn robot_description_message(&self) -> Vec<u8> {
        json!({ "data": self.urdf }).to_string().into_bytes()
    }

    /// Whether anything listens to a channel written each cycle.
    pub fn has_sinks(&self) -> bool {
        self.joint_states.has_sinks()
            || self.commanded.has_sinks()
            || self.transforms.has_sinks()
            || self.odometry.has_sinks()
            || [&self.joint_motors, &self.inertial_unit, &self.foot_pressure, &self.battery, &self.sonar]
                .iter()
                .any(|channel| channel.has_sinks())
    }

    /// Write one cycle's messages: `values` of [`CycleKeys::keys`], `pose` (when the robot
    /// has a kinematic model), stamped `time_ns`. A channel nobody listens to costs nothing.
    pub fn log_cycle(&self, cycle: u64, time_ns: u64, values: &[f64], pose: Option<&CyclePose<'_>>) {
        let stamp = Some(timestamp(time_ns));
        let joints = &self.keys.joints;
        let joint = |index: usize, field: usize| values[JOINT_KEYS.len() * index + field];
        for (channel, field) in [(&self.joint_states, 0), (&self.commanded, 1)] {
            if channel.has_sinks() {
                let states = joints
                    .iter()
                    .enumerate()
                    .map(|(index, name)| JointState {
                        name: name.clone(),
                        position: Some(joint(index, field)),
                        ..Default::default()
                    })
                    .collect();
                channel.log_with_time(&JointStates { timestamp: stamp, joints: states }, time_ns);
            }
        }
        if self.joint_motors.has_sinks() {
            let motors: serde_json::Map<String, Json> = joints
                .iter()
                .enumerate()
                .map(|(index, name)| {
                    let motor = json!({
                        "stiffness": joint(index, 2),
                        "current_a": joint(index, 3),
                        "temperature_c": joint(index, 4),
                    });
                    (name.clone(), motor)
                })
                .collect();
            log_json(&self.joint_motors, time_ns, &Json::Object(motors));
        }
        let others = &values[self.keys.others()..];
        let (imu, rest) = others.split_at(IMU_KEYS.len());
        let (fsr, rest) = rest.split_at(FSR_KEYS.len());
        let (battery, sonar) = rest.split_at(BATTERY_KEYS.len());
        if self.inertial_unit.has_sinks() {
            let message = json!({
                "angle": {"x": imu[0], "y": imu[1]},
                "gyroscope": {"x": imu[2], "y": imu[3], "z": imu[4]},
                "accelerometer": {"x": imu[5], "y": imu[6], "z": imu[7]},
            });
            log_json(&self.inertial_unit, time_ns, &message);
        }
        if self.foot_pressure.has_sinks() {
            let message = self.foot_pressure_message(fsr, pose);
            log_json(&self.foot_pressure, time_ns, &message);
        }
        if cycle.is_multiple_of(self.decimation.battery) && self.battery.has_sinks() {
            let message = json!({
                "charge": battery[0],
                "status": battery[1],
                "current_a": battery[2],
                "temperature_c": battery[3],
            });
            log_json(&self.battery, time_ns, &message);
        }
        if cycle.is_multiple_of(self.decimation.sonar) && self.sonar.has_sinks() {
            log_json(&self.sonar, time_ns, &json!({"left_m": sonar[0], "right_m": sonar[1]}));
        }
        if let Some(pose) = pose {
            self.log_pose(time_ns, pose);
        }
    }

    fn log_pose(&self, time_ns: u64, pose: &CyclePose<'_>) {
        let stamp = Some(timestamp(time_ns));
        if self.transforms.has_sinks() {
            let mut transforms: Vec<FrameTransform> = Vec::with_capacity(self.frames.len() + 1);
            if let Some(torso) = &pose.torso_in_world {
                transforms.push(frame_transform(stamp, WORLD_FRAME, ROOT_FRAME, torso));
            }
            for (index, (name, parent)) in self.frames.iter().enumerate() {
                let (Some(parent), Some(child)) = (parent, pose.in_torso.get(index)) else { continue };
                let Some(parent_in_torso) = pose.in_torso.get(*parent) else { continue };
                let local = parent_in_torso.inverse().then(child);
                transforms.push(frame_transform(stamp, &self.frames[*parent].0, name, &local));
            }
            self.transforms.log_with_time(&FrameTransforms { transforms }, time_ns);
        }
        if let (true, Some(([x, y, theta], [vx, vy, vtheta]))) = (self.odometry.has_sinks(), pose.odometry) {
            let message = Odometry {
                timestamp: stamp,
                frame_id: WORLD_FRAME.to_owned(),
                body_frame_id: "robot".to_owned(),
                pose: Some(Pose {
                    position: Some(Vector3 { x, y, z: 0.0 }),
                    orientation: Some(yaw_quaternion(theta)),
                }),
                linear_velocity: Some(Vector3 { x: vx, y: vy, z: 0.0 }),
                angular_velocity: Some(Vector3 { x: 0.0, y: 0.0, z: vtheta }),
                // The schema's 6 × 6 matrices, zeros as it asks when they are unknown.
                pose_covariance: vec![0.0; 36],
                velocity_covariance: vec![0.0; 36],
                ..Default::default()
            };
            self.odometry.log_with_time(&message, time_ns);
        }
    }

    /// Per foot: each sensor, the total and the centre of pressure in the ankle's frame; the
    /// total and, with the pose, the centre of pressure of both feet in FRAME_TORSO.
    fn foot_pressure_message(&self, fsr: &[f64], pose: Option<&CyclePose<'_>>) -> Json {
        let mut message = serde_json::Map::new();
        let mut weighted = [0.0; 3];
        let mut total = 0.0;
        for (side, (values, ankle)) in
            [("left", (&fsr[..4], "LAnkleRoll")), ("right", (&fsr[4..], "RAnkleRoll"))]
        {
            let mut foot: serde_json::Map<String, Json> = FSR_NAMES
                .iter()
                .zip(values)
                .map(|(name, value)| ((*name).to_owned(), json!(value)))
                .collect();
            let foot_total: f64 = values.iter().sum();
            foot.insert("total".into(), json!(foot_total));
            if let Some(sensors) = &self.foot_sensors {
                let positions = if side == "left" { &sensors.left_fsr_m } else { &sensors.right_fsr_m };
                if foot_total > 0.0 {
                    let cop = [0, 1].map(|axis| {
                        positions.iter().zip(values).map(|(at, weight)| at[axis] * weight).sum::<f64>()
                            / foot_total
                    });
                    foot.insert("cop".into(), json!({"x": cop[0], "y": cop[1]}));
                    let ankle = self.frames.iter().position(|(name, _)| name == ankle);
                    if let Some(ankle) = ankle.and_then(|index| pose?.in_torso.get(index)) {
                        let point = ankle.apply([cop[0], cop[1], -sensors.sole_below_ankle_m]);
                        for axis in 0..3 {
                            weighted[axis] += point[axis] * foot_total;
                        }
                    }
                }
            }
            total += foot_total;
            message.insert(side.to_owned(), Json::Object(foot));
        }
        message.insert("total".into(), json!(total));
        if pose.is_some() && self.foot_sensors.is_some() && total > 0.0 {
            let [x, y, z] = weighted.map(|value| value / total);
            message.insert("cop_torso".into(), json!({"x": x, "y": y, "z": z}));
        }
        Json::Object(message)
    }
}

/// Write a JSON message on a JSON channel.
pub fn log_json(channel: &RawChannel, time_ns: u64, message: &Json) {
    channel.log_with_meta(message.to_string().as_bytes(), foxglove::PartialMetadata::with_log_time(time_ns));
}

/// DCM time (`DCM.getTime`'s int32 milliseconds, which roll over) unrolled into a clock that
/// only goes on: the first reading as unsigned (milliseconds modulo 2^32: a robot up for more
/// than 24.8 days reads negative, and its stamps must not be), then each the one before plus
/// the difference.
#[derive(Debug, Default, Clone, Copy)]
pub struct DcmClock {
    last: Option<i32>,
    unrolled_ms: i64,
}

impl DcmClock {
    /// The unrolled time of a new reading.
    pub fn advance(&mut self, dcm_time_ms: i32) -> i64 {
        self.unrolled_ms = match self.last {
            Some(last) => self.unrolled_ms + i64::from(dcm_time_ms.wrapping_sub(last)),
            None => i64::from(dcm_time_ms as u32),
        };
        self.last = Some(dcm_time_ms);
        self.unrolled_ms
    }
}

/// Unrolled DCM time as a message's log time in nanoseconds: every message of the live view
/// and of a recording is stamped so. [`DcmClock`] starts at 0 or after, and goes back before
/// its first reading only if the DCM's clock does (it does not): such a time is stamped 0.
pub fn log_time_ns(dcm_time_ms: i64) -> u64 {
    dcm_time_ms.max(0) as u64 * 1_000_000
}

pub fn timestamp(time_ns: u64) -> Timestamp {
    Timestamp::new((time_ns / 1_000_000_000) as u32, (time_ns % 1_000_000_000) as u32)
}

fn frame_transform(
    stamp: Option<Timestamp>,
    parent: &str,
    child: &str,
    transform: &Transform,
) -> FrameTransform {
    let [x, y, z] = transform.translation;
    FrameTransform {
        timestamp: stamp,
        parent_frame_id: parent.to_owned(),
        child_frame_id: child.to_owned(),
        translation: Some(Vector3 { x, y, z }),
        rotation: Some(quaternion(&transform.rotation)),
    }
}

/// A rotation as a unit quaternion (Shepperd's method: the largest of the four first).
pub fn quaternion(r: &Rotation) -> Quaternion {
    let trace = r[0][0] + r[1][1] + r[2][2];
    let (w, x, y, z) = if trace > 0.0 {
        let s = 2.0 * (trace + 1.0).sqrt();
        (s / 4.0, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s)
    } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
        let s = 2.0 * (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt();
        ((r[2][1] - r[1][2]) / s, s / 4.0, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s)
    } else if r[1][1] > r[2][2] {
        let s = 2.0 * (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt();
        ((r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, s / 4.0, (r[1][2] + r[2][1]) / s)
    } else {
        let s = 2.0 * (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt();
        ((r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4.0)
    };
    Quaternion { x, y, z, w }
}

fn yaw_quaternion(theta: f64) -> Quaternion {
    let (sin, cos) = (theta / 2.0).sin_cos();
    Quaternion { x: 0.0, y: 0.0, z: sin, w: cos }
}

/// FRAME_TORSO in the world: the walk's place `[x, y, θ]` then FRAME_TORSO in FRAME_ROBOT.
pub fn torso_in_world([x, y, theta]: [f64; 3], torso_in_robot: &Transform) -> Transform {
    let (sin, cos) = theta.sin_cos();
    let robot = Transform {
        rotation: [[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]],
        translation: [x, y, 0.0],
    };
    robot.then(torso_in_robot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_kinematics::transform::{rotate, rpy_to_rotation};

    #[test]
    fn dcm_time_is_unrolled_past_the_int32_rollover() {
        let mut clock = DcmClock::default();
        assert_eq!(clock.advance(i32::MAX - 5), i64::from(i32::MAX) - 5);
        assert_eq!(clock.advance(i32::MIN + 4), i64::from(i32::MAX) + 5);
        assert_eq!(log_time_ns(12), 12_000_000);
        assert_eq!(log_time_ns(-3), 0);
        // A robot up for more than 24.8 days: its int32 clock reads negative from the start.
        let mut clock = DcmClock::default();
        assert_eq!(clock.advance(i32::MIN + 4), i64::from(i32::MAX) + 5);
        assert_eq!(clock.advance(i32::MIN + 16), i64::from(i32::MAX) + 17);
        assert_eq!(log_time_ns(clock.advance(-1)), u64::from(u32::MAX) * 1_000_000);
    }

    #[test]
    fn the_quaternion_turns_as_the_rotation_does() {
        for rpy in [[0.3, -1.2, 2.9], [3.1, 0.1, -0.2], [-1.5, 1.4, 0.0], [0.0, 0.0, 3.1]] {
            let r = rpy_to_rotation(rpy);
            let q = quaternion(&r);
            let v = [0.3, -0.5, 0.8];
            // v' = v + 2w(u×v) + 2u×(u×v), u the quaternion's vector part.
            let u = [q.x, q.y, q.z];
            let cross = |a: [f64; 3], b: [f64; 3]| {
                [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
            };
            let uv = cross(u, v);
            let uuv = cross(u, uv);
            let turned = [0, 1, 2].map(|i| v[i] + 2.0 * q.w * uv[i] + 2.0 * uuv[i]);
            let expected = rotate(&r, v);
            for axis in 0..3 {
                assert!((turned[axis] - expected[axis]).abs() < 1e-12, "{rpy:?}: {turned:?} {expected:?}");
            }
        }
    }
}
