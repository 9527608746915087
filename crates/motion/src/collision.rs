//! Collision protection for the arms: each arm's shoulder, elbow, wrist and hand placed by
//! the kinematic model (the pose ALMotion commands) against two boxes standing for the
//! torso and the legs. A commanded arm pose that enters them is held back at the arm's last
//! safe pose (docs/motion.md, "Collision protection").

use naobroker_kinematics::{Frame, Pose};

use crate::body::Body;

/// An axis-aligned box in the torso frame (mm): x forward, y left, z up, origin at the
/// torso point (126.5 mm below HeadYaw).
#[derive(Debug, Clone, Copy)]
struct Zone {
    min: [f64; 3],
    max: [f64; 3],
}

/// The body the arms must stay out of: the torso, from the hips to the neck, and the room
/// the legs take when the robot stands (the boxes do not follow the legs).
const BODY: [Zone; 2] = [
    Zone { min: [-55.0, -75.0, -85.0], max: [55.0, 75.0, 130.0] },
    Zone { min: [-50.0, -95.0, -340.0], max: [50.0, 95.0, -85.0] },
];

/// The two arm chains, as `setCollisionProtectionEnabled` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    Left,
    Right,
}

impl Arm {
    pub const BOTH: [Arm; 2] = [Arm::Left, Arm::Right];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn chain(self) -> &'static str {
        match self {
            Arm::Left => "LArm",
            Arm::Right => "RArm",
        }
    }
}

/// The joints placing an arm's points: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll,
/// and WristYaw, which turns the hand's point (below the forearm's axis) about it.
const ARM_JOINTS: [&str; 5] = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw"];

/// One arm's motors and the model's frames of its points, resolved once.
#[derive(Debug, Clone, Copy)]
pub struct ArmJoints {
    pub arm: Arm,
    /// The motors of [`ARM_JOINTS`], in that order.
    pub motors: [usize; 5],
    /// Bit mask of `motors`.
    pub mask: u64,
    /// Shoulder (ShoulderPitch's frame), elbow (ElbowYaw's), wrist (WristYaw's), hand (the
    /// chain's end).
    points: [Frame; 4],
}

impl ArmJoints {
    /// The arm's motors and frames in `body`, if it has them all and a kinematic model.
    pub fn find(body: &Body, arm: Arm) -> Option<ArmJoints> {
        let model = &body.kinematics.as_ref()?.model;
        let prefix = if arm == Arm::Left { "L" } else { "R" };
        let mut motors = [0; 5];
        for (slot, joint) in ARM_JOINTS.iter().enumerate() {
            let name = format!("{prefix}{joint}");
            motors[slot] = body.motors.iter().position(|motor| motor.name == name)?;
        }
        let mask = motors.iter().fold(0, |mask, &motor| mask | 1u64 << motor);
        let frame = |joint: &str| model.frame(&format!("{prefix}{joint}"));
        let points =
            [frame("ShoulderPitch")?, frame("ElbowYaw")?, frame("WristYaw")?, model.frame(arm.chain())?];
        Some(ArmJoints { arm, motors, mask, points })
    }
}

/// Shoulder, elbow, wrist and hand of an arm in the torso frame (mm).
pub fn arm_points(arm: &ArmJoints, pose: &Pose) -> [[f64; 3]; 4] {
    arm.points.map(|frame| pose.transform(frame).translation.map(|metres| 1000.0 * metres))
}

/// How far (mm) an arm's segments (upper arm, forearm, hand) run inside the body: 0 when
/// the arm is clear of it.
pub fn intrusion(arm: &ArmJoints, pose: &Pose) -> f64 {
    let points = arm_points(arm, pose);
    let mut inside = 0.0;
    for segment in points.windows(2) {
        for zone in &BODY {
            inside += length_inside(segment[0], segment[1], zone);
        }
    }
    inside
}

/// Whether an arm may go from a pose `from` to a pose `to`: a clear arm never enters the
/// body. An arm inside already (protection was off, or the DCM put it there) is not held:
/// holding it would leave it stuck, and no measure of depth decreases along every way out.
pub fn allowed(arm: &ArmJoints, from: &Pose, to: &Pose) -> bool {
    intrusion(arm, to) == 0.0 || intrusion(arm, from) > 0.0
}

/// Length of the segment `from`→`to` inside `zone` (slab clipping).
fn length_inside(from: [f64; 3], to: [f64; 3], zone: &Zone) -> f64 {
    let (mut enter, mut leave) = (0.0f64, 1.0f64);
    for axis in 0..3 {
        let delta = to[axis] - from[axis];
        if delta.abs() < 1e-12 {
            if from[axis] <= zone.min[axis] || from[axis] >= zone.max[axis] {
                return 0.0;
            }
            continue;
        }
        let a = (zone.min[axis] - from[axis]) / delta;
        let b = (zone.max[axis] - from[axis]) / delta;
        enter = enter.max(a.min(b));
        leave = leave.min(a.max(b));
    }
    if leave <= enter {
        return 0.0;
    }
    let length = ((to[0] - from[0]).powi(2) + (to[1] - from[1]).powi(2) + (to[2] - from[2]).powi(2)).sqrt();
    (leave - enter) * length
}

#[cfg(test)]
pub(crate) mod tests {
    use naobroker_dcm::device::{DeviceModel, RobotDescription};

    use super::*;

    /// Placing joints' angles: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll (WristYaw 0).
    pub(crate) type ArmAngles = [f64; 4];

    fn mirrored(angles: ArmAngles) -> ArmAngles {
        [angles[0], -angles[1], -angles[2], -angles[3]]
    }

    fn nao() -> Body {
        Body::new(&DeviceModel::new(RobotDescription::nao_v6()).unwrap()).unwrap()
    }

    /// The arm's joints and the model's pose with the arm at `angles`, every other joint 0.
    fn placed(arm: Arm, angles: ArmAngles) -> (ArmJoints, Pose) {
        let body = nao();
        let joints = ArmJoints::find(&body, arm).unwrap();
        let kinematics = body.kinematics.as_ref().unwrap();
        let mut model_angles = vec![0.0; kinematics.model.joint_names().len()];
        let motor_value = |motor: usize| {
            joints.motors[..4].iter().position(|&m| m == motor).map_or(0.0, |slot| angles[slot])
        };
        kinematics.angles_from_motors(motor_value, &mut model_angles);
        let mut pose = Pose::new(&kinematics.model);
        pose.update(&kinematics.model, &model_angles);
        (joints, pose)
    }

    /// How far the arm at `angles` runs inside the body (mm).
    pub(crate) fn intrusion_at(arm: Arm, angles: ArmAngles) -> f64 {
        let (joints, pose) = placed(arm, angles);
        intrusion(&joints, &pose)
    }

    fn allowed_between(arm: Arm, from: ArmAngles, to: ArmAngles) -> bool {
        let (joints, from) = placed(arm, from);
        allowed(&joints, &from, &placed(arm, to).1)
    }

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        (0..3).all(|axis| (a[axis] - b[axis]).abs() < 1e-9)
    }

    #[test]
    fn straight_arm_reaches_as_far_as_the_links_add_up() {
        let (joints, pose) = placed(Arm::Left, [0.0, 0.0, 0.0, 0.0]);
        let [shoulder, elbow, wrist, hand] = arm_points(&joints, &pose);
        assert!(close(shoulder, [0.0, 98.0, 100.0]));
        assert!(close(elbow, [105.0, 113.0, 100.0]));
        assert!(close(wrist, [160.95, 113.0, 100.0]));
        // HandOffsetX 57.75 forward, HandOffsetZ 12.31 below the forearm's axis.
        assert!(close(hand, [218.7, 113.0, 87.69]), "{hand:?}");
        let (joints, pose) = placed(Arm::Right, [std::f64::consts::FRAC_PI_2, 0.0, 0.0, 0.0]);
        let hand = arm_points(&joints, &pose)[3];
        // Hanging: the hand's offset below the forearm now points backward.
        assert!(close(hand, [-12.31, -113.0, -118.7]), "{hand:?}");
    }

    #[test]
    fn usual_poses_are_clear_of_the_body_on_both_sides() {
        let poses: [(&str, ArmAngles); 5] = [
            ("StandInit", [1.40, 0.30, -1.39, -1.00]),
            ("crouch", [1.50, 0.15, -1.20, -0.50]),
            ("StandZero", [0.0, 0.0, 0.0, 0.0]),
            ("hanging", [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.0349]),
            ("hands crossed in front of the chest", [0.5, -0.3, 0.0, -1.54]),
        ];
        for (name, left) in poses {
            assert_eq!(intrusion_at(Arm::Left, left), 0.0, "{name}, left arm");
            assert_eq!(intrusion_at(Arm::Right, mirrored(left)), 0.0, "{name}, right arm");
        }
    }

    #[test]
    fn a_forearm_bent_into_the_belly_or_a_hand_pressed_into_the_thigh_intrudes() {
        let belly = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -1.54];
        assert!(intrusion_at(Arm::Left, belly) > 50.0);
        assert!(intrusion_at(Arm::Right, mirrored(belly)) > 50.0);
        let thigh = [std::f64::consts::FRAC_PI_2, -0.3142, 0.0, -0.0349];
        assert!(intrusion_at(Arm::Left, thigh) > 10.0);
        assert!(intrusion_at(Arm::Right, mirrored(thigh)) > 10.0);
    }

    #[test]
    fn a_clear_arm_may_not_enter_the_body_and_an_arm_inside_is_free_to_leave() {
        let clear = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.0349];
        let edge = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.15];
        let inside = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.17];
        let deep = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -1.54];
        assert_eq!(
            intrusion_at(Arm::Left, edge),
            0.0,
            "the hanging hand clears the legs' box down to -0.159"
        );
        assert!(
            intrusion_at(Arm::Left, inside) > 0.0
                && intrusion_at(Arm::Left, inside) < intrusion_at(Arm::Left, deep)
        );
        assert!(!allowed_between(Arm::Left, clear, inside), "into the body");
        assert!(!allowed_between(Arm::Left, edge, deep), "through the body");
        assert!(allowed_between(Arm::Left, clear, edge), "clear to clear");
        assert!(allowed_between(Arm::Left, deep, inside), "on its way out");
        assert!(allowed_between(Arm::Left, inside, clear));
    }

    #[test]
    fn segments_are_clipped_to_the_part_inside_a_zone() {
        let zone = Zone { min: [0.0, 0.0, 0.0], max: [10.0, 10.0, 10.0] };
        assert!((length_inside([-5.0, 5.0, 5.0], [5.0, 5.0, 5.0], &zone) - 5.0).abs() < 1e-9);
        assert!((length_inside([-5.0, 5.0, 5.0], [15.0, 5.0, 5.0], &zone) - 10.0).abs() < 1e-9);
        assert_eq!(length_inside([-5.0, 15.0, 5.0], [15.0, 15.0, 5.0], &zone), 0.0);
        assert_eq!(length_inside([11.0, 5.0, 5.0], [20.0, 5.0, 5.0], &zone), 0.0);
    }
}
