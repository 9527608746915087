//! The kinematic and mass model: joints, their parents, offsets, axes and links' masses.

use std::collections::HashMap;

use naobroker_robot::device::RobotDescription;
use naobroker_robot::kinematics::Description;

use crate::transform::{norm, rpy_to_rotation, Transform};

/// A kinematic chain, NAOqi's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Chain {
    Head,
    LArm,
    LLeg,
    RLeg,
    RArm,
}

impl Chain {
    /// NAOqi's chain order.
    pub const ALL: [Chain; 5] = [Chain::Head, Chain::LArm, Chain::LLeg, Chain::RLeg, Chain::RArm];

    pub fn name(self) -> &'static str {
        match self {
            Chain::Head => "Head",
            Chain::LArm => "LArm",
            Chain::LLeg => "LLeg",
            Chain::RLeg => "RLeg",
            Chain::RArm => "RArm",
        }
    }

    pub fn from_name(name: &str) -> Option<Chain> {
        Chain::ALL.into_iter().find(|chain| chain.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A frame of the model: the torso, a joint's frame, or an effector. From `Model::frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame(pub(crate) usize);

impl Frame {
    pub const TORSO: Frame = Frame(0);
}

/// What a mass or a centre of mass is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The whole robot.
    Body,
    /// The torso's own link.
    Torso,
    Chain(Chain),
    /// One joint's link, by its index in `Model::joint_names`.
    Joint(usize),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    #[error("joint or effector {0:?} is named twice")]
    DuplicateName(String),
    #[error("{child:?} hangs from {parent:?}, which is not a joint listed before it")]
    UnknownParent { child: String, parent: String },
    #[error("joint {0:?} has an axis of zero length, or one not finite")]
    BadAxis(String),
    #[error("joint {joint:?} is in chain {chain:?}, which is none of Head, LArm, LLeg, RLeg, RArm")]
    UnknownChain { joint: String, chain: String },
    #[error("chain {0} has no effector of its name")]
    MissingEffector(&'static str),
    #[error("{0:?} has a negative or non-finite mass")]
    BadMass(String),
}

/// One joint of the model, in metres.
#[derive(Debug, Clone)]
pub(crate) struct Joint {
    /// Parent joint's index; None for the torso.
    pub parent: Option<usize>,
    pub offset: [f64; 3],
    /// Unit axis, in the parent's frame (which the joint's frame equals at angle zero).
    pub axis: Option<[f64; 3]>,
    pub mass: f64,
    pub com: [f64; 3],
}

#[derive(Debug, Clone)]
pub(crate) struct Effector {
    pub parent: usize,
    pub offset: Transform,
}

/// The model: joints (NAOqi names and order), their parent, offset, axis, link masses and
/// centres of mass. Limits are not included (ALMotion has them).
#[derive(Debug, Clone)]
pub struct Model {
    joint_names: Vec<String>,
    pub(crate) joints: Vec<Joint>,
    effector_names: Vec<String>,
    pub(crate) effectors: Vec<Effector>,
    chains: [Vec<usize>; 5],
    /// Each chain's end: its effector's frame.
    chain_ends: [Frame; 5],
    pub(crate) torso_mass: f64,
    pub(crate) torso_com: [f64; 3],
    frames: HashMap<String, Frame>,
}

impl Model {
    pub fn from_description(description: &Description) -> Result<Model, ModelError> {
        let mut index_of: HashMap<String, usize> = HashMap::new();
        let mut joints = Vec::with_capacity(description.joints.len());
        let mut chains: [Vec<usize>; 5] = Default::default();
        let mut joint_names = Vec::with_capacity(description.joints.len());
        check_mass("Torso", description.torso.mass_kg)?;
        for (index, joint) in description.joints.iter().enumerate() {
            let parent = match joint.parent.as_str() {
                "Torso" => None,
                name => Some(*index_of.get(name).ok_or_else(|| ModelError::UnknownParent {
                    child: joint.name.clone(),
                    parent: joint.parent.clone(),
                })?),
            };
            let axis = match joint.axis {
                None => None,
                Some(axis) => {
                    let length = norm(axis);
                    if !length.is_finite() || length < 1e-9 {
                        return Err(ModelError::BadAxis(joint.name.clone()));
                    }
                    Some([axis[0] / length, axis[1] / length, axis[2] / length])
                }
            };
            let chain = Chain::from_name(&joint.chain).ok_or_else(|| ModelError::UnknownChain {
                joint: joint.name.clone(),
                chain: joint.chain.clone(),
            })?;
            check_mass(&joint.name, joint.mass_kg)?;
            if index_of.insert(joint.name.clone(), index).is_some() || joint.name == "Torso" {
                return Err(ModelError::DuplicateName(joint.name.clone()));
            }
            chains[chain.index()].push(index);
            joint_names.push(joint.name.clone());
            joints.push(Joint {
                parent,
                offset: millimetres(joint.offset_mm),
                axis,
                mass: joint.mass_kg,
                com: joint.com_m,
            });
        }
        let mut frames: HashMap<String, Frame> = HashMap::new();
        frames.insert("Torso".into(), Frame::TORSO);
        for (index, name) in joint_names.iter().enumerate() {
            frames.insert(name.clone(), Frame(1 + index));
        }
        let mut effectors = Vec::with_capacity(description.effectors.len());
        let mut effector_names = Vec::with_capacity(description.effectors.len());
        for effector in &description.effectors {
            let parent = *index_of.get(&effector.parent).ok_or_else(|| ModelError::UnknownParent {
                child: effector.name.clone(),
                parent: effector.parent.clone(),
            })?;
            let frame = Frame(1 + joints.len() + effectors.len());
            if frames.insert(effector.name.clone(), frame).is_some() {
                return Err(ModelError::DuplicateName(effector.name.clone()));
            }
            effector_names.push(effector.name.clone());
            effectors.push(Effector {
                parent,
                offset: Transform {
                    rotation: rpy_to_rotation(effector.rotation_rad),
                    translation: millimetres(effector.offset_mm),
                },
            });
        }
        let mut chain_ends = [Frame::TORSO; 5];
        for chain in Chain::ALL {
            chain_ends[chain.index()] =
                *frames.get(chain.name()).ok_or(ModelError::MissingEffector(chain.name()))?;
        }
        Ok(Model {
            joint_names,
            joints,
            effector_names,
            effectors,
            chains,
            chain_ends,
            torso_mass: description.torso.mass_kg,
            torso_com: description.torso.com_m,
            frames,
        })
    }

    /// The model of the shipped description (robots/nao-v6.toml).
    pub fn nao_v6() -> Model {
        let kinematics = RobotDescription::nao_v6().kinematics;
        let kinematics = kinematics.expect("the shipped NAO V6 description has [kinematics]");
        Model::from_description(&kinematics).expect("the shipped NAO V6 kinematics are valid")
    }

    /// Angles are given in this order.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joint_names.iter().position(|joint| joint == name)
    }

    /// Effector names: the chains' ends ("Head", "LArm", ...) and the cameras.
    pub fn effector_names(&self) -> &[String] {
        &self.effector_names
    }

    /// "Torso", every joint, every effector ("Head", "LArm", "RArm", "LLeg", "RLeg",
    /// "CameraTop", ...).
    pub fn frame(&self, name: &str) -> Option<Frame> {
        self.frames.get(name).copied()
    }

    /// A joint's parent joint, by index; none for a joint hanging from the torso.
    pub fn joint_parent(&self, joint: usize) -> Option<usize> {
        self.joints[joint].parent
    }

    /// The frame of a joint, by index.
    pub fn joint_frame(&self, joint: usize) -> Frame {
        Frame(1 + joint)
    }

    /// The frame at a chain's end (NAOqi's effector of that name).
    pub fn chain_end(&self, chain: Chain) -> Frame {
        self.chain_ends[chain.index()]
    }

    /// The chain's joints, root first (indices into `joint_names`).
    pub fn chain_joints(&self, chain: Chain) -> &[usize] {
        &self.chains[chain.index()]
    }

    /// The part a NAOqi name stands for: "Body", "Torso", a chain, or a joint.
    pub fn part(&self, name: &str) -> Option<Part> {
        match name {
            "Body" => Some(Part::Body),
            "Torso" => Some(Part::Torso),
            _ => Chain::from_name(name).map(Part::Chain).or_else(|| self.joint_index(name).map(Part::Joint)),
        }
    }

    /// Mass (kg) of a joint's link, a chain, "Torso" or "Body".
    pub fn mass(&self, name: &str) -> Option<f64> {
        self.part(name).map(|part| self.part_mass(part))
    }

    pub fn part_mass(&self, part: Part) -> f64 {
        match part {
            Part::Body => self.total_mass(),
            Part::Torso => self.torso_mass,
            Part::Chain(chain) => self.chain_joints(chain).iter().map(|&j| self.joints[j].mass).sum(),
            Part::Joint(joint) => self.joints[joint].mass,
        }
    }

    pub fn total_mass(&self) -> f64 {
        self.torso_mass + self.joints.iter().map(|joint| joint.mass).sum::<f64>()
    }

    pub(crate) fn frame_count(&self) -> usize {
        1 + self.joints.len() + self.effectors.len()
    }

    /// The joint's rotation axis, if it has one.
    pub fn joint_axis(&self, joint: usize) -> Option<[f64; 3]> {
        self.joints[joint].axis
    }
}

fn millimetres(mm: [f64; 3]) -> [f64; 3] {
    [mm[0] / 1000.0, mm[1] / 1000.0, mm[2] / 1000.0]
}

fn check_mass(name: &str, mass: f64) -> Result<(), ModelError> {
    if mass.is_finite() && mass >= 0.0 {
        Ok(())
    } else {
        Err(ModelError::BadMass(name.into()))
    }
}
