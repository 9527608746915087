//! The legs' inverse kinematics, closed form: a foot's sole placed and oriented in FRAME_TORSO
//! gives its six joint angles, the two legs sharing one HipYawPitch as NAO's single motor
//! makes them.

use naobroker_kinematics::transform::{add, axis_angle, mul, rotate, sub, transpose, Rotation};
use naobroker_kinematics::{Frame, Model};

/// Where a sole is: its centre (m, FRAME_TORSO) and its rotation from the torso's axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootPose {
    pub position: [f64; 3],
    pub rotation: Rotation,
}

/// A leg's joints in NAOqi's order: HipYawPitch, HipRoll, HipPitch, KneePitch, AnklePitch,
/// AnkleRoll.
pub type LegAngles = [f64; 6];

/// The two legs' lengths and where they join the torso, read off the kinematic model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegGeometry {
    /// The left hip's centre in FRAME_TORSO; the right one mirrors it in y.
    pub left_hip: [f64; 3],
    /// Hip to knee, knee to ankle, ankle to sole (m).
    pub thigh: f64,
    pub tibia: f64,
    pub foot_height: f64,
    /// The HipYawPitch axes (unit), left then right.
    yaw_pitch_axes: [[f64; 3]; 2],
}

/// What the model lacks for the legs' geometry.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the kinematic model has no {0}: the walk needs NAO's legs")]
pub struct MissingLeg(pub &'static str);

/// The leg joints' names, left leg, in [`LegAngles`] order.
pub const LEFT_LEG: [&str; 6] =
    ["LHipYawPitch", "LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll"];
pub const RIGHT_LEG: [&str; 6] =
    ["RHipYawPitch", "RHipRoll", "RHipPitch", "RKneePitch", "RAnklePitch", "RAnkleRoll"];

/// Newton steps that bring both legs to one HipYawPitch: each is cheap, three leave less
/// than a micro-radian of disagreement at walking poses.
const YAW_PITCH_ITERATIONS: usize = 4;
/// The finite difference (rad) of those steps' derivative.
const YAW_PITCH_PROBE: f64 = 1e-4;
/// The knee never straightens fully: a straight knee has no derivative and NAO's limit is
/// just short of it.
const LONGEST_LEG: f64 = 0.9995;

impl LegGeometry {
    /// The legs of `model`, with the joints named as NAOqi names them.
    pub fn from_model(model: &Model) -> Result<LegGeometry, MissingLeg> {
        let index = |name: &'static str| model.joint_index(name).ok_or(MissingLeg(name));
        let pose = naobroker_kinematics::Pose::new(model);
        let at = |frame: Frame| pose.transform(frame).translation;
        let hip = at(model.joint_frame(index("LHipYawPitch")?));
        let knee = at(model.joint_frame(index("LKneePitch")?));
        let ankle = at(model.joint_frame(index("LAnklePitch")?));
        let sole = at(model.frame("LLeg").ok_or(MissingLeg("LLeg effector"))?);
        let axis = |name: &'static str| {
            let axis = model.joint_axis(index(name)?).ok_or(MissingLeg(name))?;
            let length = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            Ok(axis.map(|v| v / length))
        };
        Ok(LegGeometry {
            left_hip: hip,
            thigh: hip[2] - knee[2],
            tibia: knee[2] - ankle[2],
            foot_height: ankle[2] - sole[2],
            yaw_pitch_axes: [axis("LHipYawPitch")?, axis("RHipYawPitch")?],
        })
    }

    fn hip(&self, side: Side) -> [f64; 3] {
        let [x, y, z] = self.left_hip;
        match side {
            Side::Left => [x, y, z],
            Side::Right => [x, -y, z],
        }
    }

    fn yaw_pitch_axis(&self, side: Side) -> [f64; 3] {
        self.yaw_pitch_axes[side as usize]
    }

    /// Both legs' angles for the two soles, sharing one HipYawPitch: the one that leaves the
    /// two feet's unreachable yaw equal and smallest. Each sole's centre and its normal are
    /// met exactly (within reach): the soles stay flat wherever the feet go, and only two
    /// feet placed differently and turned miss their yaw, by the same small angle;
    /// `yaw_pitch_start` is where the search starts (last cycle's value).
    pub fn solve(&self, left: &FootPose, right: &FootPose, yaw_pitch_start: f64) -> (LegAngles, LegAngles) {
        let disagreement = |yaw_pitch: f64| {
            let (_, left_error) = self.leg(Side::Left, left, yaw_pitch);
            let (_, right_error) = self.leg(Side::Right, right, yaw_pitch);
            left_error - right_error
        };
        let mut yaw_pitch = if yaw_pitch_start.is_finite() { yaw_pitch_start } else { 0.0 };
        for _ in 0..YAW_PITCH_ITERATIONS {
            let error = disagreement(yaw_pitch);
            let slope = (disagreement(yaw_pitch + YAW_PITCH_PROBE) - error) / YAW_PITCH_PROBE;
            if !slope.is_finite() || slope.abs() <= 1e-9 || !error.is_finite() {
                break;
            }
            yaw_pitch = (yaw_pitch - error / slope).clamp(-1.0, 1.0);
        }
        (self.leg(Side::Left, left, yaw_pitch).0, self.leg(Side::Right, right, yaw_pitch).0)
    }

    /// One leg with its HipYawPitch given: the angles, and the yaw the other five cannot give
    /// (the term of the ankle's rotation outside AnklePitch·AnkleRoll).
    fn leg(&self, side: Side, foot: &FootPose, yaw_pitch: f64) -> (LegAngles, f64) {
        let yaw_pitch_rotation = axis_angle(self.yaw_pitch_axis(side), yaw_pitch);
        let undo = transpose(&yaw_pitch_rotation);
        let ankle = add(foot.position, rotate(&foot.rotation, [0.0, 0.0, self.foot_height]));
        let hip_to_ankle = rotate(&undo, sub(ankle, self.hip(side)));
        let foot_rotation = mul(&undo, &foot.rotation);
        let [x, y, z] = hip_to_ankle;
        let (thigh, tibia) = (self.thigh, self.tibia);
        let length = (x * x + y * y + z * z).sqrt().min(LONGEST_LEG * (thigh + tibia));
        let cos_inner =
            ((thigh * thigh + tibia * tibia - length * length) / (2.0 * thigh * tibia)).clamp(-1.0, 1.0);
        let knee = std::f64::consts::PI - cos_inner.acos();
        // HipRoll brings the ankle into the leg's sagittal plane; HipPitch then turns the
        // thigh-and-tibia's line onto the ankle.
        let hip_roll = y.atan2(-z);
        let in_plane_down = (y * y + z * z).sqrt();
        let leg_angle = (-x).atan2(in_plane_down);
        let (knee_sin, knee_cos) = knee.sin_cos();
        let bend_angle = (tibia * knee_sin).atan2(thigh + tibia * knee_cos);
        let hip_pitch = leg_angle - bend_angle;
        let upper =
            mul(&axis_angle([1.0, 0.0, 0.0], hip_roll), &axis_angle([0.0, 1.0, 0.0], hip_pitch + knee));
        let ankle_rotation = mul(&transpose(&upper), &foot_rotation);
        // ankle_rotation should be Ry(pitch)·Rx(roll), whose z column is (sin p cos r,
        // -sin r, cos p cos r): matching that column keeps the sole's normal, and so the
        // sole's centre, exact; its [1][0] term, a yaw, is what no angle gives.
        let [nx, ny, nz] = [ankle_rotation[0][2], ankle_rotation[1][2], ankle_rotation[2][2]];
        let ankle_roll = (-ny).atan2(nx.hypot(nz));
        let ankle_pitch = nx.atan2(nz);
        ([yaw_pitch, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll], ankle_rotation[1][0])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left = 0,
    Right = 1,
}
