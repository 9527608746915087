//! Collision protection for the arms: forward kinematics of each arm against two boxes
//! standing for the torso and the legs. A commanded arm pose that enters them is held
//! back at the arm's last safe pose (docs/motion.md, "Collision protection").

use crate::body::Body;

/// NAO's arm links in mm (Aldebaran's "Links" tables, NAO H25 V3.3 and later, V6 included).
const SHOULDER_OFFSET_Y: f64 = 98.0;
const SHOULDER_OFFSET_Z: f64 = 100.0;
const UPPER_ARM_LENGTH: f64 = 105.0;
const ELBOW_OFFSET_Y: f64 = 15.0;
const LOWER_ARM_LENGTH: f64 = 55.95;
const HAND_OFFSET_X: f64 = 57.75;

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

    /// +1 for the left arm, -1 for the right: the y offsets mirror.
    fn side(self) -> f64 {
        match self {
            Arm::Left => 1.0,
            Arm::Right => -1.0,
        }
    }
}

/// The joints placing an arm: ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll (the wrist
/// turns the hand about the forearm's axis, which does not move the points checked).
pub type ArmAngles = [f64; 4];

/// One arm's motors, resolved once.
#[derive(Debug, Clone, Copy)]
pub struct ArmJoints {
    pub arm: Arm,
    pub motors: [usize; 4],
    /// Bit mask of `motors`.
    pub mask: u64,
}

impl ArmJoints {
    /// The arm's motors in `body`, if it has them all.
    pub fn find(body: &Body, arm: Arm) -> Option<ArmJoints> {
        let prefix = if arm == Arm::Left { "L" } else { "R" };
        let mut motors = [0; 4];
        for (slot, joint) in ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll"].iter().enumerate() {
            let name = format!("{prefix}{joint}");
            motors[slot] = body.motors.iter().position(|motor| motor.name == name)?;
        }
        let mask = motors.iter().fold(0, |mask, &motor| mask | 1u64 << motor);
        Some(ArmJoints { arm, motors, mask })
    }

    /// The arm's angles, read from per-motor values.
    pub fn angles(&self, position: impl Fn(usize) -> f64) -> ArmAngles {
        self.motors.map(position)
    }
}

/// Shoulder, elbow, wrist and hand of an arm in the torso frame (mm).
pub fn arm_points(arm: Arm, angles: ArmAngles) -> [[f64; 3]; 4] {
    let [shoulder_pitch, shoulder_roll, elbow_yaw, elbow_roll] = angles;
    let side = arm.side();
    let shoulder = [0.0, side * SHOULDER_OFFSET_Y, SHOULDER_OFFSET_Z];
    // Upper arm: ShoulderPitch about y, then ShoulderRoll about z.
    let upper = [UPPER_ARM_LENGTH, side * ELBOW_OFFSET_Y, 0.0];
    let elbow = add(shoulder, shoulder_rotation(shoulder_pitch, shoulder_roll, upper));
    // Forearm: ElbowYaw about x, then ElbowRoll about z, applied to the forearm's axis.
    let (roll_sin, roll_cos) = elbow_roll.sin_cos();
    let (yaw_sin, yaw_cos) = elbow_yaw.sin_cos();
    let axis =
        shoulder_rotation(shoulder_pitch, shoulder_roll, [roll_cos, roll_sin * yaw_cos, roll_sin * yaw_sin]);
    let wrist = add(elbow, scale(axis, LOWER_ARM_LENGTH));
    let hand = add(wrist, scale(axis, HAND_OFFSET_X));
    [shoulder, elbow, wrist, hand]
}

/// How far (mm) an arm's segments (upper arm, forearm, hand) run inside the body: 0 when
/// the arm is clear of it.
pub fn intrusion(arm: Arm, angles: ArmAngles) -> f64 {
    let points = arm_points(arm, angles);
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
pub fn allowed(arm: Arm, from: ArmAngles, to: ArmAngles) -> bool {
    intrusion(arm, to) == 0.0 || intrusion(arm, from) > 0.0
}

/// `Ry(pitch) · Rz(roll) · v`.
fn shoulder_rotation(pitch: f64, roll: f64, v: [f64; 3]) -> [f64; 3] {
    let (roll_sin, roll_cos) = roll.sin_cos();
    let rolled = [roll_cos * v[0] - roll_sin * v[1], roll_sin * v[0] + roll_cos * v[1], v[2]];
    let (pitch_sin, pitch_cos) = pitch.sin_cos();
    [pitch_cos * rolled[0] + pitch_sin * rolled[2], rolled[1], -pitch_sin * rolled[0] + pitch_cos * rolled[2]]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn scale(v: [f64; 3], k: f64) -> [f64; 3] {
    [v[0] * k, v[1] * k, v[2] * k]
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
mod tests {
    use super::*;

    fn mirrored(angles: ArmAngles) -> ArmAngles {
        [angles[0], -angles[1], -angles[2], -angles[3]]
    }

    #[test]
    fn straight_arm_reaches_as_far_as_the_links_add_up() {
        let [shoulder, elbow, wrist, hand] = arm_points(Arm::Left, [0.0, 0.0, 0.0, 0.0]);
        assert_eq!(shoulder, [0.0, 98.0, 100.0]);
        assert_eq!(elbow, [105.0, 113.0, 100.0]);
        assert!((wrist[0] - 160.95).abs() < 1e-9 && (hand[0] - 218.7).abs() < 1e-9);
        let hanging = arm_points(Arm::Right, [std::f64::consts::FRAC_PI_2, 0.0, 0.0, 0.0]);
        let hand = hanging[3];
        assert!(hand[0].abs() < 1e-9 && (hand[1] + 113.0).abs() < 1e-9 && (hand[2] + 118.7).abs() < 1e-9);
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
            assert_eq!(intrusion(Arm::Left, left), 0.0, "{name}, left arm");
            assert_eq!(intrusion(Arm::Right, mirrored(left)), 0.0, "{name}, right arm");
        }
    }

    #[test]
    fn a_forearm_bent_into_the_belly_or_a_hand_pressed_into_the_thigh_intrudes() {
        let belly = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -1.54];
        assert!(intrusion(Arm::Left, belly) > 50.0);
        assert!(intrusion(Arm::Right, mirrored(belly)) > 50.0);
        let thigh = [std::f64::consts::FRAC_PI_2, -0.3142, 0.0, -0.0349];
        assert!(intrusion(Arm::Left, thigh) > 10.0);
        assert!(intrusion(Arm::Right, mirrored(thigh)) > 10.0);
    }

    #[test]
    fn a_clear_arm_may_not_enter_the_body_and_an_arm_inside_is_free_to_leave() {
        let clear = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.0349];
        let edge = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.15];
        let inside = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -0.17];
        let deep = [std::f64::consts::FRAC_PI_2, 0.0, 0.0, -1.54];
        assert_eq!(intrusion(Arm::Left, edge), 0.0, "the hanging hand clears the legs' box down to -0.159");
        assert!(
            intrusion(Arm::Left, inside) > 0.0 && intrusion(Arm::Left, inside) < intrusion(Arm::Left, deep)
        );
        assert!(!allowed(Arm::Left, clear, inside), "into the body");
        assert!(!allowed(Arm::Left, edge, deep), "through the body");
        assert!(allowed(Arm::Left, clear, edge), "clear to clear");
        assert!(allowed(Arm::Left, deep, inside), "on its way out");
        assert!(allowed(Arm::Left, inside, clear));
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
