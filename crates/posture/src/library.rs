//! NAOqi's posture library for NAO as joint tables: Stand, StandInit, StandZero, Crouch, Sit,
//! SitRelax, LyingBelly and LyingBack, each with its posture family and torso orientation.
//!
//! The angles (radians; hands 0 closed .. 1 open) are NAOqi's own, as SoftBank Robotics
//! published them in qibullet's `qibullet/robot_posture.py` (class `NaoPosture`, Apache 2.0,
//! github.com/softbankrobotics-research/qibullet), which copies ALRobotPosture's library for
//! its simulated NAO. They are written here to 9 significant digits as published; values
//! below 1e-9 rad there (float32 residue such as 1.4e-45) are written as 0.

/// NAOqi's posture families (ALRobotPosture's `getPostureFamily`) that the library's
/// postures belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The weight on the feet, torso upright, legs straight.
    Standing,
    /// The weight on the feet, torso upright, legs bent.
    Crouching,
    /// The buttock on the ground, torso upright.
    Sitting,
    /// Stretched, facing down.
    LyingBelly,
    /// Stretched, facing up.
    LyingBack,
}

impl Family {
    pub const ALL: [Family; 5] =
        [Family::Standing, Family::Crouching, Family::Sitting, Family::LyingBelly, Family::LyingBack];

    /// The name NAOqi gives the family.
    pub fn name(self) -> &'static str {
        match self {
            Family::Standing => "Standing",
            Family::Crouching => "Crouching",
            Family::Sitting => "Sitting",
            Family::LyingBelly => "LyingBelly",
            Family::LyingBack => "LyingBack",
        }
    }
}

/// How the torso lies, from the inertial unit's AngleX/AngleY (`recognise::Torso::of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Torso {
    Upright,
    /// Lying face down: AngleY near +π/2 (NAO's AngleY is positive leaning forward).
    Belly,
    /// Lying face up: AngleY near -π/2.
    Back,
}

/// One predefined posture: its name, family, torso and joint table.
#[derive(Debug, PartialEq)]
pub struct Posture {
    pub name: &'static str,
    pub family: Family,
    pub torso: Torso,
    pub joints: &'static [(&'static str, f64)],
}

/// The joints of every table, in the order of the tables' values.
const JOINTS: [&str; 26] = [
    "HeadYaw",
    "HeadPitch",
    "LShoulderPitch",
    "LShoulderRoll",
    "LElbowYaw",
    "LElbowRoll",
    "LWristYaw",
    "LHand",
    "LHipYawPitch",
    "LHipRoll",
    "LHipPitch",
    "LKneePitch",
    "LAnklePitch",
    "LAnkleRoll",
    "RHipYawPitch",
    "RHipRoll",
    "RHipPitch",
    "RKneePitch",
    "RAnklePitch",
    "RAnkleRoll",
    "RShoulderPitch",
    "RShoulderRoll",
    "RElbowYaw",
    "RElbowRoll",
    "RWristYaw",
    "RHand",
];

/// Pairs each of [`JOINTS`] with its value, at compile time.
pub(crate) const fn table(values: [f64; 26]) -> [(&'static str, f64); 26] {
    let mut pairs = [("", 0.0); 26];
    let mut index = 0;
    while index < 26 {
        pairs[index] = (JOINTS[index], values[index]);
        index += 1;
    }
    pairs
}

const STAND_TABLE: [(&str, f64); 26] = table([
    0.0,
    -0.170000032,
    1.4425844,
    0.224456817,
    -1.20227683,
    -0.417271525,
    0.0999999791,
    0.300000012,
    -0.170009688,
    0.119108438,
    0.12741895,
    -0.0923279151,
    0.0874193981,
    -0.110793173,
    -0.170009688,
    -0.119102433,
    0.127419189,
    -0.0923279151,
    0.0874193311,
    0.110789023,
    1.44258487,
    -0.224456757,
    1.20227683,
    0.417271346,
    0.099999994,
    0.300000012,
]);

const STAND_INIT_TABLE: [(&str, f64); 26] = table([
    0.0,
    0.0,
    1.4000001,
    0.299999982,
    -1.38999987,
    -1.00999987,
    0.0,
    0.25,
    0.0,
    0.0,
    -0.449999988,
    0.699999988,
    -0.349999994,
    0.0,
    0.0,
    0.0,
    -0.449999988,
    0.699999988,
    -0.349999994,
    0.0,
    1.4000001,
    -0.300000042,
    1.38999987,
    1.00999987,
    0.0,
    0.25,
]);

const STAND_ZERO_TABLE: [(&str, f64); 26] = table([
    0.0,
    0.0,
    0.0,
    0.00872664712,
    0.0,
    -0.0349065885,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    -0.00872664712,
    0.0,
    0.0349065885,
    0.0,
    0.0,
]);

const CROUCH_TABLE: [(&str, f64); 26] = table([
    0.0,
    0.100000001,
    1.39685857,
    0.159609884,
    -0.791683376,
    -1.07368624,
    0.149999991,
    0.0,
    -0.25,
    -0.0799999982,
    -0.699999988,
    2.1099999,
    -1.17999995,
    0.0769999996,
    -0.25,
    0.0799999982,
    -0.699999988,
    2.1099999,
    -1.17999995,
    -0.0769999996,
    1.39685857,
    -0.159609884,
    0.791683376,
    1.07368624,
    -0.149999991,
    0.0,
]);

/// Sit's table, which a stand-up motion passes through (crate::transitions).
pub(crate) const SIT_TABLE: [(&str, f64); 26] = table([
    -0.0460619926,
    -0.0399260521,
    0.881872058,
    0.259543777,
    -0.452065587,
    -1.19049561,
    -0.0169160366,
    0.289200008,
    -0.607422113,
    0.273093939,
    -1.53242409,
    1.38976204,
    0.839056015,
    -0.0122299194,
    -0.607422113,
    -0.259204149,
    -1.53588974,
    1.40211821,
    0.848344088,
    0.0230519772,
    0.938332558,
    -0.318750441,
    0.527359486,
    1.23205638,
    0.00609397888,
    0.291599989,
]);

const SIT_RELAX_TABLE: [(&str, f64); 26] = table([
    -0.0245859623,
    0.0183660984,
    2.08566761,
    0.0887396112,
    -2.08165431,
    -0.199512929,
    -0.949999928,
    0.138399959,
    -0.521517992,
    0.131965876,
    -1.11517596,
    -0.0414600372,
    0.921999991,
    0.0,
    -0.521517992,
    -0.220854044,
    -1.06003618,
    -0.0919981003,
    0.921999991,
    0.0,
    2.08566689,
    -0.154630423,
    2.07549071,
    0.0431277193,
    0.950000048,
    0.139600039,
]);

const LYING_BELLY_TABLE: [(&str, f64); 26] = table([
    -0.688000023,
    -0.307282031,
    -1.16546321,
    0.133779854,
    -0.166860506,
    -1.08266199,
    -1.59386766,
    0.0124000311,
    -0.0214340687,
    0.0798099041,
    0.299171925,
    -0.0923279151,
    0.742413998,
    -0.0122299194,
    -0.0214340687,
    -0.165630102,
    0.124212027,
    -0.0904641151,
    0.921999991,
    0.0,
    -0.672019422,
    -0.422265947,
    0.706398547,
    1.50837064,
    1.6259979,
    0.171599984,
]);

const LYING_BACK_TABLE: [(&str, f64); 26] = table([
    -0.00310993195,
    0.153357983,
    1.6777612,
    0.214862406,
    -0.880382538,
    -1.53163767,
    0.246932015,
    0.303200006,
    -0.510780096,
    0.112024069,
    0.375871897,
    -0.0923279151,
    0.863600016,
    -0.0383081436,
    -0.510780096,
    -0.082793951,
    -0.400415897,
    1.73806381,
    0.645855904,
    -0.282214165,
    1.69333243,
    -0.243266225,
    0.879038453,
    1.54461634,
    0.179435983,
    0.360799968,
]);

pub const STAND: Posture =
    Posture { name: "Stand", family: Family::Standing, torso: Torso::Upright, joints: &STAND_TABLE };
pub const STAND_INIT: Posture =
    Posture { name: "StandInit", family: Family::Standing, torso: Torso::Upright, joints: &STAND_INIT_TABLE };
pub const STAND_ZERO: Posture =
    Posture { name: "StandZero", family: Family::Standing, torso: Torso::Upright, joints: &STAND_ZERO_TABLE };
pub const CROUCH: Posture =
    Posture { name: "Crouch", family: Family::Crouching, torso: Torso::Upright, joints: &CROUCH_TABLE };
pub const SIT: Posture =
    Posture { name: "Sit", family: Family::Sitting, torso: Torso::Upright, joints: &SIT_TABLE };
pub const SIT_RELAX: Posture =
    Posture { name: "SitRelax", family: Family::Sitting, torso: Torso::Upright, joints: &SIT_RELAX_TABLE };
pub const LYING_BELLY: Posture = Posture {
    name: "LyingBelly",
    family: Family::LyingBelly,
    torso: Torso::Belly,
    joints: &LYING_BELLY_TABLE,
};
pub const LYING_BACK: Posture =
    Posture { name: "LyingBack", family: Family::LyingBack, torso: Torso::Back, joints: &LYING_BACK_TABLE };

/// The whole library, in NAOqi's `getPostureList` order.
pub const LIBRARY: [&Posture; 8] =
    [&CROUCH, &LYING_BACK, &LYING_BELLY, &SIT, &SIT_RELAX, &STAND, &STAND_INIT, &STAND_ZERO];

/// The posture named `name` (exactly, as NAOqi's names are).
pub fn find(name: &str) -> Option<&'static Posture> {
    LIBRARY.iter().copied().find(|posture| posture.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_posture_is_found_by_its_name_and_names_every_joint_once() {
        for posture in LIBRARY {
            assert_eq!(find(posture.name), Some(posture));
            let mut names: Vec<&str> = posture.joints.iter().map(|(name, _)| *name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), 26, "{}", posture.name);
        }
        assert_eq!(find("stand"), None, "names are exact");
    }

    #[test]
    fn the_tables_are_left_right_mirrors_where_nao_stands_symmetric() {
        for posture in [&STAND_INIT, &STAND_ZERO, &CROUCH] {
            let angle = |name: &str| posture.joints.iter().find(|(joint, _)| *joint == name).unwrap().1;
            for (left, right, sign) in [
                ("LShoulderPitch", "RShoulderPitch", 1.0),
                ("LShoulderRoll", "RShoulderRoll", -1.0),
                ("LElbowYaw", "RElbowYaw", -1.0),
                ("LKneePitch", "RKneePitch", 1.0),
                ("LHipRoll", "RHipRoll", -1.0),
            ] {
                assert!((angle(left) - sign * angle(right)).abs() < 1e-6, "{} {left}", posture.name);
            }
        }
    }
}
