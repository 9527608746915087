//! The three parts of a robot description the simulation reads (`[kinematics]`, the
//! `[[joint]]` ranges, `[physics]`), from a description's text or the shipped NAO V6.

use naobroker_robot::kinematics::Description;
use serde::Deserialize;

use crate::description::PhysicsDescription;
use crate::mjcf::JointRange;
use crate::PhysicsError;

/// The shipped NAO V6 description.
const NAO_V6: &str = include_str!("../../../robots/nao-v6.toml");

/// What the simulation needs of a robot description.
#[derive(Debug, Clone)]
pub struct RobotModel {
    pub kinematics: Description,
    pub ranges: Vec<JointRange>,
    pub physics: PhysicsDescription,
}

#[derive(Deserialize)]
struct Text {
    #[serde(rename = "joint", default)]
    joints: Vec<RangeText>,
    kinematics: Option<Description>,
    physics: Option<toml::Table>,
}

#[derive(Deserialize)]
struct RangeText {
    name: String,
    min: f64,
    max: f64,
    max_velocity: f64,
}

impl RobotModel {
    /// The shipped NAO V6.
    pub fn nao_v6() -> RobotModel {
        RobotModel::parse(NAO_V6).expect("the shipped NAO V6 description has a valid [physics]")
    }

    /// From a robot description's text (other sections are left to their readers).
    pub fn parse(text: &str) -> Result<RobotModel, PhysicsError> {
        let text: Text =
            toml::from_str(text).map_err(|error| PhysicsError::Description(error.to_string()))?;
        let ranges = text
            .joints
            .into_iter()
            .map(|joint| JointRange {
                name: joint.name,
                min: joint.min,
                max: joint.max,
                max_velocity: joint.max_velocity,
            })
            .collect();
        RobotModel::from_parts(text.kinematics, ranges, text.physics.as_ref())
    }

    /// From the parts as a parsed description holds them.
    pub fn from_parts(
        kinematics: Option<Description>,
        ranges: Vec<JointRange>,
        physics: Option<&toml::Table>,
    ) -> Result<RobotModel, PhysicsError> {
        let kinematics = kinematics.ok_or(PhysicsError::NoKinematics)?;
        let physics = PhysicsDescription::from_table(physics.ok_or(PhysicsError::NoPhysics)?)?;
        Ok(RobotModel { kinematics, ranges, physics })
    }
}
