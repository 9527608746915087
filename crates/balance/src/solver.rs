//! The whole-body solver: a generalized inverse kinematics over the legs, the torso's six
//! free coordinates and the centre of mass, solved as NAO's body allows it in closed form.
//! Everything is placed in the *ground frame*, fixed on the ground where the whole body was
//! anchored (between the soles, z up): the torso's pose there and each foot's are targets;
//! the legs follow from them by the closed-form leg inverse kinematics (one HipYawPitch for
//! both legs); the balance then moves the torso over the ground, keeping its height and
//! orientation, until the whole body's centre of mass (arms and head included, as they are
//! commanded) is where the support polygon wants it. The centre of mass follows the torso
//! at about four fifths of its move (the legs' own mass lags), so each round of
//! "shift by the error, solve the legs again" divides the error by five or more.

use naobroker_kinematics::{Chain, Model, Part, Pose, Transform};
use naobroker_walk::{FootPose, LegGeometry, MissingLeg, LEFT_LEG, RIGHT_LEG};

use crate::polygon::SupportPolygon;

/// A foot, as the API names it ("LLeg", "RLeg").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left = 0,
    Right = 1,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];
}

/// NAOqi's foot states (`wbFootState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FootState {
    /// The foot stays where it is on the ground.
    Fixed,
    /// The foot stays flat on the ground; it may slide and turn on it.
    Plane,
    /// The foot follows its Cartesian target, off the ground; it carries nothing.
    Free,
}

/// Where the centre of mass goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ComGoal {
    /// Where the torso puts it: no balance.
    Free,
    /// Anywhere at least [`MARGIN_M`] inside the polygon of the soles that carry the robot.
    Within,
    /// At this point of the ground (x, y, ground frame), clamped into the polygon.
    At([f64; 2]),
}

/// One cycle's targets, in the ground frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    pub torso: Transform,
    pub feet: [Transform; 2],
    /// The feet that carry the robot (not free).
    pub support: [bool; 2],
    pub com: ComGoal,
}

/// What a cycle solved: the torso where the balance moved it, the centre of mass and the
/// support polygon (ground frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solved {
    pub torso: Transform,
    pub com: [f64; 3],
    pub polygon: SupportPolygon,
}

/// NAO V6's sole around the ankle of the left foot (m): back, front (x), right, left (y);
/// the right sole mirrors it (B-Human's robot dimensions, as the robot description has them).
pub const SOLE: [f64; 4] = [-0.050, 0.100, -0.03877, 0.05002];
/// How far inside the support polygon the centre of mass is kept (m).
pub const MARGIN_M: f64 = 0.015;
/// Rounds of the balance: the error shrinks five-fold or more each.
const BALANCE_ROUNDS: usize = 6;
/// The farthest an ankle may be from its hip, of the leg's full length: short of the
/// straight knee, where the leg's inverse kinematics loses its derivative.
const REACH: f64 = 0.98;
/// Close enough (m).
const BALANCE_TOLERANCE_M: f64 = 1e-4;

/// The solver, made once (allocates), solving every cycle without allocating.
#[derive(Debug, Clone)]
pub struct WholeBody {
    geometry: LegGeometry,
    /// Each leg's joints in the model, in [`LEFT_LEG`] order.
    legs: [[usize; 6]; 2],
    /// Per model joint: (min, max).
    limits: Vec<(f64, f64)>,
    pose: Pose,
    yaw_pitch: f64,
}

impl WholeBody {
    /// For `model`'s legs; `limits` per model joint (min, max).
    pub fn new(model: &Model, limits: Vec<(f64, f64)>) -> Result<WholeBody, MissingLeg> {
        let geometry = LegGeometry::from_model(model)?;
        let index = |name: &'static str| model.joint_index(name).ok_or(MissingLeg(name));
        let mut legs = [[0; 6]; 2];
        for (leg, names) in legs.iter_mut().zip([LEFT_LEG, RIGHT_LEG]) {
            for (joint, name) in leg.iter_mut().zip(names) {
                *joint = index(name)?;
            }
        }
        Ok(WholeBody { geometry, legs, limits, pose: Pose::new(model), yaw_pitch: 0.0 })
    }

    /// The ground frame for the pose `angles` give, the soles on the ground: between the
    /// soles, turned as the left one. The torso's and the feet's poses in it.
    pub fn anchor(&mut self, model: &Model, angles: &[f64]) -> (Transform, [Transform; 2]) {
        self.pose.update(model, angles);
        let left = self.pose.transform(model.chain_end(Chain::LLeg));
        let right = self.pose.transform(model.chain_end(Chain::RLeg));
        let ground_in_torso = Transform {
            rotation: left.rotation,
            translation: [0, 1, 2].map(|axis| (left.translation[axis] + right.translation[axis]) / 2.0),
        };
        let torso = ground_in_torso.inverse();
        self.yaw_pitch = angles[self.legs[0][0]];
        (torso, [torso.then(&left), torso.then(&right)])
    }

    /// The whole body's centre of mass (ground frame) for `angles` with the torso at `torso`.
    pub fn com(&mut self, model: &Model, torso: &Transform, angles: &[f64]) -> [f64; 3] {
        self.pose.update(model, angles);
        torso.apply(self.pose.com(model, Part::Body))
    }

    /// The legs' angles (into `angles`, model order; the other joints are read as they are)
    /// for `goal`; the torso where the balance put it, the centre of mass.
    pub fn solve(&mut self, model: &Model, goal: &Goal, angles: &mut [f64]) -> Solved {
        let polygon = support_polygon(&goal.feet, goal.support);
        let mut torso = goal.torso;
        let mut com = [0.0; 3];
        for round in 0..=BALANCE_ROUNDS {
            self.within_reach(&mut torso, &goal.feet);
            self.legs_for(&torso, &goal.feet, angles);
            self.pose.update(model, angles);
            com = torso.apply(self.pose.com(model, Part::Body));
            let wanted = match goal.com {
                ComGoal::Free => break,
                ComGoal::Within => polygon.clamp([com[0], com[1]], MARGIN_M),
                ComGoal::At(point) => polygon.clamp(point, MARGIN_M),
            };
            let error = [wanted[0] - com[0], wanted[1] - com[1]];
            if round == BALANCE_ROUNDS || error[0].hypot(error[1]) < BALANCE_TOLERANCE_M {
                break;
            }
            torso.translation[0] += error[0];
            torso.translation[1] += error[1];
        }
        Solved { torso, com, polygon }
    }

    /// Lower the torso until both ankles are within [`REACH`] of their hips: a torso moved
    /// far over one foot (or a foot stretched far) would leave the other leg short.
    fn within_reach(&self, torso: &mut Transform, feet: &[Transform; 2]) {
        let geometry = &self.geometry;
        let longest = REACH * (geometry.thigh + geometry.tibia);
        for side in Side::BOTH {
            let [x, y, z] = geometry.left_hip;
            let hip = torso.apply([x, if side == Side::Left { y } else { -y }, z]);
            let ankle = feet[side as usize].apply([0.0, 0.0, geometry.foot_height]);
            let [dx, dy, dz] = [hip[0] - ankle[0], hip[1] - ankle[1], hip[2] - ankle[2]];
            let level = longest * longest - dx * dx - dy * dy;
            if dx * dx + dy * dy + dz * dz > longest * longest && level > 0.0 && dz > 0.0 {
                torso.translation[2] -= dz - level.sqrt();
            }
        }
    }

    /// Both legs for the torso and the feet (ground frame), within the joints' limits.
    fn legs_for(&mut self, torso: &Transform, feet: &[Transform; 2], angles: &mut [f64]) {
        let to_torso = torso.inverse();
        let foot = |side: Side| {
            let in_torso = to_torso.then(&feet[side as usize]);
            FootPose { position: in_torso.translation, rotation: in_torso.rotation }
        };
        let (left, right) = self.geometry.solve(&foot(Side::Left), &foot(Side::Right), self.yaw_pitch);
        for (leg, solved) in self.legs.iter().zip([left, right]) {
            for (&joint, angle) in leg.iter().zip(solved) {
                let (min, max) = self.limits.get(joint).copied().unwrap_or((f64::MIN, f64::MAX));
                if angle.is_finite() {
                    angles[joint] = angle.max(min).min(max);
                }
            }
        }
        // One motor: the right HipYawPitch is the left one.
        angles[self.legs[1][0]] = angles[self.legs[0][0]];
        self.yaw_pitch = angles[self.legs[0][0]];
    }
}

/// The convex hull of the supporting soles (ground frame x, y); both soles when neither
/// supports (a robot in the air has no polygon of its own: the balance keeps to its feet).
pub fn support_polygon(feet: &[Transform; 2], support: [bool; 2]) -> SupportPolygon {
    let both = !support[0] && !support[1];
    let mut corners = [[0.0; 2]; 8];
    let mut count = 0;
    for side in Side::BOTH {
        if !(both || support[side as usize]) {
            continue;
        }
        let [back, front, right, left] = SOLE;
        let (right, left) = match side {
            Side::Left => (right, left),
            Side::Right => (-left, -right),
        };
        for (x, y) in [(back, right), (front, right), (front, left), (back, left)] {
            let corner = feet[side as usize].apply([x, y, 0.0]);
            corners[count] = [corner[0], corner[1]];
            count += 1;
        }
    }
    SupportPolygon::hull(&corners[..count])
}

/// The point of the support polygon the centre of mass goes to over one foot: the middle of
/// its sole, between heel and toe and between its edges.
pub fn over_foot(feet: &[Transform; 2], side: Side) -> [f64; 2] {
    let support = [side == Side::Left, side == Side::Right];
    support_polygon(feet, support).centre()
}
