//! The model's numbers as the robot description holds them (`[kinematics]` in
//! robots/nao-v6.toml): lengths in mm, masses in kg, centres of mass in m, as Aldebaran's
//! tables give them.

use serde::Deserialize;

/// The `[kinematics]` section of a robot description.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// The torso: the root of every chain, where FRAME_TORSO is.
    pub torso: LinkMass,
    /// Every joint, parents before children; angles are given in this order.
    #[serde(rename = "joint")]
    pub joints: Vec<JointDescription>,
    /// Points fixed on a joint's link: the chains' ends and the cameras.
    #[serde(rename = "effector", default)]
    pub effectors: Vec<EffectorDescription>,
}

/// A link's mass and centre of mass, in its joint's frame.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkMass {
    pub mass_kg: f64,
    pub com_m: [f64; 3],
    /// The inertia tensor about the centre of mass, in the joint's frame, kg·m²:
    /// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` (the physics needs it; kinematics does not).
    #[serde(default)]
    pub inertia_kg_m2: Option<[f64; 6]>,
}

/// One joint and the link it moves.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointDescription {
    pub name: String,
    /// "Head", "LArm", "LLeg", "RLeg" or "RArm".
    pub chain: String,
    /// The joint it hangs from, or "Torso".
    pub parent: String,
    /// Where the joint is in its parent's frame at zero angles (mm).
    pub offset_mm: [f64; 3],
    /// Its rotation axis in its parent's frame (normalised when loaded); none for a joint
    /// that moves nothing of the model (the hands' fingers).
    #[serde(default)]
    pub axis: Option<[f64; 3]>,
    /// The mass and centre of mass of the link it moves (in the joint's frame).
    pub mass_kg: f64,
    pub com_m: [f64; 3],
    /// As [`LinkMass::inertia_kg_m2`].
    #[serde(default)]
    pub inertia_kg_m2: Option<[f64; 6]>,
}

/// A named point on a link: chain ends ("Head", "LArm", ...) and cameras.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectorDescription {
    pub name: String,
    /// The joint whose link carries it.
    pub parent: String,
    pub offset_mm: [f64; 3],
    /// Its orientation in the parent's frame: [wx, wy, wz], R = Rz(wz)·Ry(wy)·Rx(wx).
    #[serde(default)]
    pub rotation_rad: [f64; 3],
}
