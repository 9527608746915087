//! The three parts of a robot description the simulation reads (`[kinematics]`, the
//! `[[joint]]` ranges, `[physics]`), from a parsed description or the shipped NAO V6.

use naobroker_robot::device::RobotDescription;
use naobroker_robot::kinematics::Description;
use naobroker_robot::physics::PhysicsDescription;

use crate::mjcf::JointRange;
use crate::PhysicsError;

/// What the simulation needs of a robot description.
#[derive(Debug, Clone)]
pub struct RobotModel {
    pub kinematics: Description,
    pub ranges: Vec<JointRange>,
    pub physics: PhysicsDescription,
}

impl RobotModel {
    /// The shipped NAO V6.
    pub fn nao_v6() -> RobotModel {
        RobotModel::from_description(&RobotDescription::nao_v6())
            .expect("the shipped NAO V6 description has [kinematics] and [physics]")
    }

    /// From a robot description, which must have `[kinematics]` and `[physics]`.
    pub fn from_description(robot: &RobotDescription) -> Result<RobotModel, PhysicsError> {
        let kinematics = robot.kinematics.clone().ok_or(PhysicsError::NoKinematics)?;
        let physics = robot.physics.clone().ok_or(PhysicsError::NoPhysics)?;
        let ranges = robot
            .joints
            .iter()
            .map(|joint| JointRange {
                name: joint.name.clone(),
                min: joint.min,
                max: joint.max,
                max_velocity: joint.max_velocity,
            })
            .collect();
        Ok(RobotModel { kinematics, ranges, physics })
    }
}
