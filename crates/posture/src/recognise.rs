//! Recognising the robot's posture and family from its sensors: the sensed joint angles
//! against the library's tables, and the inertial unit's torso angles to tell lying on the
//! belly from lying on the back and lying from the rest. The tolerances are below.

use crate::library::{Family, Posture, Torso, LIBRARY};

/// A joint may be this far (rad) from the table for the robot to be in the posture: well
/// within the gaps between the library's postures (the closest two, Stand and StandInit,
/// differ by 0.8 rad at the knees), wide enough for a real robot's sag under its weight.
pub const POSTURE_TOLERANCE_RAD: f64 = 0.2;
/// Legs within this far (rad, every leg joint) of a posture's put the robot in its family,
/// when no posture is recognised: a half-bent knee is still crouching.
pub const FAMILY_TOLERANCE_RAD: f64 = 0.6;
/// The torso is upright while both AngleX and AngleY stay below this (rad, about 29°).
pub const UPRIGHT_RAD: f64 = 0.5;
/// The robot lies on its belly or back when its torso leans further than this from upright
/// (about 57°), forwards or backwards, and less than [`UPRIGHT_RAD`] sideways.
pub const LYING_RAD: f64 = 1.0;

/// Joints the recogniser leaves out: the hands open and close in every posture.
const IGNORED: [&str; 2] = ["LHand", "RHand"];
const LEG_PREFIXES: [&str; 2] = ["LHip", "RHip"];
const LEG_JOINTS: [&str; 3] = ["KneePitch", "AnklePitch", "AnkleRoll"];

/// What the sensors say: each joint's sensed angle, and the torso's angles.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub joints: Vec<(String, f64)>,
    pub angle_x: f64,
    pub angle_y: f64,
}

impl Torso {
    /// How the torso lies; `None` on a side, upside down, or between upright and lying.
    /// Lying is told from gravity's direction in the torso's frame rather than from the two
    /// angles themselves: with the torso near horizontal, AngleX turns about the vertical and
    /// may read anything (a robot flat on its back can read AngleX 2.2 rad, AngleY -1.5 rad).
    pub fn of(angle_x: f64, angle_y: f64) -> Option<Torso> {
        if angle_x.abs() < UPRIGHT_RAD && angle_y.abs() < UPRIGHT_RAD {
            return Some(Torso::Upright);
        }
        // How far the torso's x axis points down (face down), and its y axis up or down (a side).
        let face_down = angle_y.sin();
        let side = angle_y.cos() * angle_x.sin();
        if side.abs() >= UPRIGHT_RAD.sin() {
            None
        } else if face_down > LYING_RAD.sin() {
            Some(Torso::Belly)
        } else if face_down < -LYING_RAD.sin() {
            Some(Torso::Back)
        } else {
            None
        }
    }
}

fn is_leg(name: &str) -> bool {
    LEG_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || (name.starts_with(['L', 'R']) && LEG_JOINTS.contains(&&name[1..]))
}

impl Reading {
    pub fn torso(&self) -> Option<Torso> {
        Torso::of(self.angle_x, self.angle_y)
    }

    /// The largest gap (rad) between the sensed joints that `which` keeps and the table;
    /// joints the robot does not have are left out.
    fn distance(&self, posture: &Posture, which: impl Fn(&str) -> bool) -> f64 {
        posture
            .joints
            .iter()
            .filter(|(name, _)| !IGNORED.contains(name) && which(name))
            .filter_map(|(name, angle)| {
                self.joints.iter().find(|(joint, _)| joint == name).map(|(_, sensed)| (sensed - angle).abs())
            })
            .fold(0.0, f64::max)
    }

    /// The library posture the robot is in: the torso lies as the posture's does and every
    /// joint is within [`POSTURE_TOLERANCE_RAD`]; the nearest if several are.
    pub fn posture(&self) -> Option<&'static Posture> {
        let (distance, posture) = self.nearest_with_distance()?;
        (distance <= POSTURE_TOLERANCE_RAD).then_some(posture)
    }

    /// The posture family: the recognised posture's; else, lying on the belly or back, that
    /// lying family; else, upright, the family of the posture whose legs are nearest when
    /// they are within [`FAMILY_TOLERANCE_RAD`]. `None`: NAOqi's "Unknown".
    pub fn family(&self) -> Option<Family> {
        if let Some(posture) = self.posture() {
            return Some(posture.family);
        }
        match self.torso()? {
            Torso::Belly => Some(Family::LyingBelly),
            Torso::Back => Some(Family::LyingBack),
            Torso::Upright => LIBRARY
                .iter()
                .filter(|posture| posture.torso == Torso::Upright)
                .map(|posture| (self.distance(posture, is_leg), posture.family))
                .filter(|(distance, _)| *distance <= FAMILY_TOLERANCE_RAD)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, family)| family),
        }
    }

    /// Where `goToPosture` starts from: the recognised posture, else the nearest posture
    /// whose torso lies as the robot's does (NAOqi first goes to the nearest posture).
    /// `None` when the torso lies on a side or between upright and lying.
    pub fn nearest(&self) -> Option<&'static Posture> {
        self.nearest_with_distance().map(|(_, posture)| posture)
    }

    /// The posture whose torso lies as the robot's does and whose joints are nearest the
    /// sensed ones (the first in the library on a tie), with that distance (rad).
    fn nearest_with_distance(&self) -> Option<(f64, &'static Posture)> {
        let torso = self.torso()?;
        LIBRARY
            .iter()
            .copied()
            .filter(|posture| posture.torso == torso)
            .map(|posture| (self.distance(posture, |_| true), posture))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::{CROUCH, LYING_BACK, LYING_BELLY, SIT, STAND, STAND_INIT};

    fn reading(posture: &Posture, angle_y: f64) -> Reading {
        let joints = posture.joints.iter().map(|(name, angle)| (name.to_string(), *angle)).collect();
        Reading { joints, angle_x: 0.0, angle_y }
    }

    fn moved(mut reading: Reading, joint: &str, by: f64) -> Reading {
        reading.joints.iter_mut().filter(|(name, _)| name == joint).for_each(|(_, angle)| *angle += by);
        reading
    }

    #[test]
    fn every_posture_is_recognised_with_its_torso_and_family() {
        for posture in LIBRARY {
            let angle_y = match posture.torso {
                Torso::Upright => 0.05,
                Torso::Belly => 1.5,
                Torso::Back => -1.5,
            };
            let sensed = reading(posture, angle_y);
            assert_eq!(sensed.posture(), Some(posture));
            assert_eq!(sensed.family(), Some(posture.family));
            assert_eq!(sensed.nearest(), Some(posture));
        }
    }

    #[test]
    fn within_the_tolerance_it_is_the_posture_beyond_it_only_the_family() {
        let near = moved(reading(&STAND_INIT, 0.0), "LKneePitch", POSTURE_TOLERANCE_RAD - 0.01);
        assert_eq!(near.posture(), Some(&STAND_INIT));
        let bent = moved(reading(&STAND_INIT, 0.0), "LKneePitch", 0.35);
        assert_eq!(bent.posture(), None);
        assert_eq!(bent.family(), Some(Family::Standing));
        assert_eq!(bent.nearest(), Some(&STAND_INIT));
        let arm = moved(reading(&CROUCH, 0.0), "RShoulderPitch", -1.0);
        assert_eq!(arm.posture(), None, "an arm raised is not the crouch");
        assert_eq!(arm.family(), Some(Family::Crouching), "the legs still crouch");
        let hand = moved(reading(&STAND, 0.0), "LHand", 0.7);
        assert_eq!(hand.posture(), Some(&STAND), "the hands do not count");
    }

    #[test]
    fn the_inertial_unit_tells_the_lying_postures_apart_and_from_sitting() {
        assert_eq!(reading(&LYING_BACK, 0.0).posture(), None, "lying joints, upright torso");
        assert_eq!(reading(&LYING_BACK, 1.5).posture(), None, "face down with the back's joints");
        assert_eq!(reading(&LYING_BACK, 1.5).family(), Some(Family::LyingBelly));
        assert_eq!(reading(&LYING_BELLY, 1.5).posture(), Some(&LYING_BELLY));
        assert_eq!(reading(&SIT, -1.4).posture(), None);
        assert_eq!(reading(&SIT, -1.4).family(), Some(Family::LyingBack));
        assert_eq!(reading(&SIT, -1.4).nearest(), Some(&LYING_BACK));
        let mut on_a_side = reading(&LYING_BACK, 0.0);
        on_a_side.angle_x = 1.4;
        assert_eq!((on_a_side.posture(), on_a_side.family(), on_a_side.nearest()), (None, None, None));
        assert_eq!(Torso::of(0.0, 0.7), None, "between upright and lying");
        assert_eq!(Torso::of(std::f64::consts::PI, 0.0), None, "upside down");
    }

    #[test]
    fn flat_on_the_back_or_belly_any_angle_x_reads_lying() {
        // Near AngleY = ±π/2 the roll turns about the vertical: the physical robot lying on
        // its back reads AngleX 2.24 rad.
        for angle_x in [0.0, 0.8, 2.24, -3.1] {
            assert_eq!(Torso::of(angle_x, -1.51), Some(Torso::Back), "AngleX {angle_x}");
            assert_eq!(Torso::of(angle_x, 1.51), Some(Torso::Belly), "AngleX {angle_x}");
        }
        assert_eq!(Torso::of(0.4, -1.1), Some(Torso::Back), "tilted 0.4 rad sideways");
        assert_eq!(Torso::of(1.4, -0.8), None, "more on a side than on the back");
    }

    #[test]
    fn far_from_every_posture_the_family_is_unknown_and_the_nearest_is_the_start() {
        let mut odd = reading(&STAND, 0.0);
        for (name, angle) in odd.joints.iter_mut() {
            if is_leg(name) {
                *angle = if name.ends_with("KneePitch") { 1.2 } else { 0.8 };
            }
        }
        assert_eq!((odd.posture(), odd.family()), (None, None));
        assert!(odd.nearest().is_some());
    }

    #[test]
    fn the_legs_are_the_hip_knee_and_ankle_joints() {
        for leg in ["LHipYawPitch", "RHipRoll", "LKneePitch", "RAnkleRoll", "LAnklePitch", "RHipPitch"] {
            assert!(is_leg(leg), "{leg}");
        }
        for other in ["LShoulderPitch", "HeadPitch", "RElbowRoll", "LHand"] {
            assert!(!is_leg(other), "{other}");
        }
    }
}
