//! Joint names, chains and groups as ALMotion users know them.

use std::sync::Arc;

use naobroker_framework::{excerpt, CallError, Value};
use naobroker_kinematics::{Model, ModelError};
use naobroker_protocol::value_excerpt;
use naobroker_robot::device::{DeviceModel, JointSpec};

use crate::cartesian::Kinematics;

/// A robot description ALMotion cannot drive: a joint lacks one of its devices.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the robot description has no {device}")]
pub struct MissingDevice {
    /// The device's name: `HeadYaw/Position/Actuator/Value`.
    pub device: String,
}

/// Why ALMotion cannot drive a robot description.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(transparent)]
    MissingDevice(#[from] MissingDevice),
    #[error("the robot description's [kinematics]: {0}")]
    Kinematics(#[from] ModelError),
    #[error("the robot description's collision shapes: {0}")]
    CollisionShapes(#[from] crate::self_collision::ShapeError),
}

/// Joint names a call gave that ALMotion does not know. Names and values are cut to an
/// excerpt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JointNameError {
    #[error("unknown joint or chain {0:?}")]
    Unknown(String),
    #[error("names: joint names must be strings, got {0}")]
    NotAString(String),
    #[error("names: expected a name or a list of names, got {0}")]
    NotNames(String),
}

impl From<JointNameError> for CallError {
    fn from(error: JointNameError) -> CallError {
        CallError::bad_argument(error.to_string())
    }
}

/// One body joint. RHipYawPitch shares LHipYawPitch's motor: it has its own name
/// and drives the same actuators.
#[derive(Debug, Clone)]
pub struct BodyJoint {
    pub name: String,
    pub chain: String,
    pub spec: JointSpec,
    /// Index of the motor in `motors` (RHipYawPitch → LHipYawPitch's).
    pub motor: usize,
}

/// A motor: one joint of the device model with its DCM actuators and sensors.
#[derive(Debug, Clone)]
pub struct Motor {
    pub name: String,
    pub spec: JointSpec,
    pub position_actuator: usize,
    pub stiffness_actuator: usize,
    pub position_key: String,
    pub stiffness_key: String,
    pub sensor_key: String,
    pub current_key: String,
}

#[derive(Debug, Clone)]
pub struct Body {
    pub joints: Vec<BodyJoint>,
    pub motors: Vec<Motor>,
    chains: Vec<String>,
    /// The kinematic and mass model, when the description has one (`[kinematics]`).
    pub kinematics: Option<Arc<Kinematics>>,
    /// The arms' and the body's collision shapes, with a kinematic model and the
    /// description's `[[physics.shape]]` (collision protection, `isCollision`).
    pub collision: Option<crate::self_collision::CollisionShapes>,
}

const CHAIN_ORDER: [&str; 5] = ["Head", "LArm", "LLeg", "RLeg", "RArm"];

/// What NAOqi calls "Actuators": the hands at the end of the arms, outside "Joints".
const HANDS: [&str; 2] = ["LHand", "RHand"];

impl Body {
    pub fn new(model: &DeviceModel) -> Result<Body, BodyError> {
        let mut motors = Vec::new();
        for joint in &model.joints {
            let find = |suffix: &str, actuator: bool| {
                let device = format!("{}/{suffix}", joint.name);
                let found = if actuator { model.actuator(&device) } else { model.sensor(&device) };
                found.ok_or(MissingDevice { device })
            };
            let key = |suffix: &str| format!("Device/SubDeviceList/{}/{suffix}", joint.name);
            motors.push(Motor {
                name: joint.name.clone(),
                spec: joint.clone(),
                position_actuator: find("Position/Actuator/Value", true)?,
                stiffness_actuator: find("Hardness/Actuator/Value", true)?,
                position_key: key("Position/Actuator/Value"),
                stiffness_key: key("Hardness/Actuator/Value"),
                sensor_key: key("Position/Sensor/Value"),
                current_key: key("ElectricCurrent/Sensor/Value"),
            });
            find("Position/Sensor/Value", false)?;
        }
        let mut joints = Vec::new();
        for chain in CHAIN_ORDER {
            if chain == "RLeg" {
                if let Some(motor) = motors.iter().position(|m| m.name == "LHipYawPitch") {
                    let mut spec = motors[motor].spec.clone();
                    spec.name = "RHipYawPitch".into();
                    spec.chain = "RLeg".into();
                    joints.push(BodyJoint { name: "RHipYawPitch".into(), chain: "RLeg".into(), spec, motor });
                }
            }
            for (index, motor) in motors.iter().enumerate().filter(|(_, m)| m.spec.chain == chain) {
                joints.push(BodyJoint {
                    name: motor.name.clone(),
                    chain: chain.into(),
                    spec: motor.spec.clone(),
                    motor: index,
                });
            }
        }
        for (index, motor) in motors.iter().enumerate() {
            if !CHAIN_ORDER.contains(&motor.spec.chain.as_str()) {
                joints.push(BodyJoint {
                    name: motor.name.clone(),
                    chain: motor.spec.chain.clone(),
                    spec: motor.spec.clone(),
                    motor: index,
                });
            }
        }
        let mut chains: Vec<String> = Vec::new();
        for joint in &joints {
            if !chains.contains(&joint.chain) {
                chains.push(joint.chain.clone());
            }
        }
        let kinematics = match &model.kinematics {
            Some(description) => {
                let model = Model::from_description(description)?;
                let motor_of = |name: &str| joints.iter().find(|joint| joint.name == name).map(|j| j.motor);
                Some(Arc::new(Kinematics::new(model, motor_of)))
            }
            None => None,
        };
        let collision = match &kinematics {
            Some(kinematics) => {
                let chains: Vec<(String, String)> =
                    joints.iter().map(|joint| (joint.name.clone(), joint.chain.clone())).collect();
                let physics = model.physics.as_ref();
                crate::self_collision::CollisionShapes::from_description(&chains, &kinematics.model, physics)?
            }
            None => None,
        };
        Ok(Body { joints, motors, chains, kinematics, collision })
    }

    /// Joint indices a name stands for: a joint, a chain or a group. As on NAOqi, "Joints"
    /// leaves out the hands, "Actuators" is the hands alone, "Body" and "JointActuators" are
    /// both.
    pub fn expand(&self, name: &str) -> Result<Vec<usize>, JointNameError> {
        if let Some(index) = self.joints.iter().position(|j| j.name == name) {
            return Ok(vec![index]);
        }
        let of_chains = |chains: &[&str]| -> Vec<usize> {
            (0..self.joints.len()).filter(|&i| chains.contains(&self.joints[i].chain.as_str())).collect()
        };
        let hands = |wanted: bool| -> Vec<usize> {
            let is_hand = |i: &usize| HANDS.contains(&self.joints[*i].name.as_str());
            (0..self.joints.len()).filter(|i| is_hand(i) == wanted).collect()
        };
        let expanded = match name {
            "Body" | "JointActuators" => (0..self.joints.len()).collect(),
            "Joints" => hands(false),
            "Actuators" => hands(true),
            "Arms" => of_chains(&["LArm", "RArm"]),
            "Legs" => of_chains(&["LLeg", "RLeg"]),
            chain if self.chains.iter().any(|c| c == chain) => of_chains(&[chain]),
            _ => return Err(JointNameError::Unknown(excerpt(name))),
        };
        Ok(expanded)
    }

    /// Names as ALMotion methods take them: one name, or a list of names.
    pub fn resolve(&self, names: &Value) -> Result<Vec<usize>, JointNameError> {
        match names {
            Value::String(_) => self.expand(names.as_str().unwrap_or_default()),
            Value::Array(items) => {
                let mut joints = Vec::new();
                for item in items {
                    let name =
                        item.as_str().ok_or_else(|| JointNameError::NotAString(value_excerpt(item)))?;
                    joints.extend(self.expand(name)?);
                }
                Ok(joints)
            }
            other => Err(JointNameError::NotNames(value_excerpt(other))),
        }
    }

    /// Which of `joints` drive their motor, one per motor: the motor's own joint wins
    /// (LHipYawPitch over RHipYawPitch, as NAOqi gives it priority), else the first named.
    pub fn drivers(&self, joints: &[usize]) -> Vec<bool> {
        let owns = |joint: usize| self.motors[self.joints[joint].motor].name == self.joints[joint].name;
        let mut chosen: Vec<Option<usize>> = vec![None; self.motors.len()];
        for (index, &joint) in joints.iter().enumerate() {
            let slot = &mut chosen[self.joints[joint].motor];
            match *slot {
                None => *slot = Some(index),
                Some(current) if owns(joint) && !owns(joints[current]) => *slot = Some(index),
                Some(_) => {}
            }
        }
        let mut drives = vec![false; joints.len()];
        for index in chosen.into_iter().flatten() {
            drives[index] = true;
        }
        drives
    }

    /// `getBodyNames`: a chain, a group or "Chains".
    pub fn body_names(&self, name: &str) -> Result<Vec<String>, JointNameError> {
        if name == "Chains" {
            return Ok(self.chains.clone());
        }
        Ok(self.expand(name)?.into_iter().map(|i| self.joints[i].name.clone()).collect())
    }

    /// Bit mask of the motors of some joints (task resources).
    pub fn motor_mask(&self, joints: &[usize]) -> u64 {
        joints.iter().fold(0, |mask, &j| mask | 1u64 << self.joints[j].motor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_robot::device::RobotDescription;

    #[test]
    fn nao_names_chains_and_groups() {
        let body = Body::new(&DeviceModel::new(RobotDescription::nao_v6()).unwrap()).unwrap();
        assert_eq!(body.joints.len(), 26);
        assert_eq!(body.motors.len(), 25);
        assert_eq!(body.body_names("Head").unwrap(), ["HeadYaw", "HeadPitch"]);
        assert_eq!(body.body_names("RLeg").unwrap()[0], "RHipYawPitch");
        assert_eq!(body.body_names("Chains").unwrap(), ["Head", "LArm", "LLeg", "RLeg", "RArm"]);
        assert_eq!(body.body_names("Arms").unwrap().len(), 12);
        let r = body.expand("RHipYawPitch").unwrap()[0];
        let l = body.expand("LHipYawPitch").unwrap()[0];
        assert_eq!(body.joints[r].motor, body.joints[l].motor);
        assert!(body.expand("Tail").unwrap_err().to_string().contains("unknown joint or chain \"Tail\""));
    }

    fn nao() -> Body {
        Body::new(&DeviceModel::new(RobotDescription::nao_v6()).unwrap()).unwrap()
    }

    fn names(body: &Body, names: Value) -> Vec<String> {
        body.resolve(&names).unwrap().into_iter().map(|j| body.joints[j].name.clone()).collect()
    }

    #[test]
    fn naoqi_groups_joints_leave_out_the_hands_actuators_are_the_hands() {
        let body = nao();
        let joints = body.body_names("Joints").unwrap();
        assert_eq!(joints.len(), 24);
        assert!(!joints.iter().any(|name| name.ends_with("Hand")));
        assert_eq!(body.body_names("Actuators").unwrap(), ["LHand", "RHand"]);
        assert_eq!(body.body_names("JointActuators").unwrap(), body.body_names("Body").unwrap());
        assert_eq!(body.body_names("Body").unwrap().len(), 26);
        assert_eq!(body.body_names("Legs").unwrap().len(), 12);
    }

    #[test]
    fn names_are_a_joint_a_chain_a_group_or_a_list_mixing_them() {
        let body = nao();
        assert_eq!(names(&body, "HeadPitch".into()), ["HeadPitch"]);
        assert_eq!(names(&body, "Head".into()), ["HeadYaw", "HeadPitch"]);
        assert_eq!(
            names(&body, Value::Array(vec!["Head".into(), "LHand".into()])),
            ["HeadYaw", "HeadPitch", "LHand"]
        );
        assert_eq!(
            names(&body, Value::Array(vec!["Actuators".into(), "HeadYaw".into()])),
            ["LHand", "RHand", "HeadYaw"]
        );
        let error = body.resolve(&Value::Array(vec!["Head".into(), 3.into()])).unwrap_err();
        assert_eq!(error.to_string(), "names: joint names must be strings, got 3");
        let error = body.resolve(&Value::from(1.5)).unwrap_err();
        assert_eq!(error.to_string(), "names: expected a name or a list of names, got 1.5");
    }

    #[test]
    fn one_driver_per_motor_the_motors_own_joint_first() {
        let body = nao();
        let all = body.resolve(&"Body".into()).unwrap();
        let drives = body.drivers(&all);
        let skipped: Vec<&str> = all
            .iter()
            .zip(&drives)
            .filter(|(_, d)| !**d)
            .map(|(&j, _)| body.joints[j].name.as_str())
            .collect();
        assert_eq!(skipped, ["RHipYawPitch"], "LHipYawPitch drives the shared motor");
        let hips = body.resolve(&Value::Array(vec!["RHipYawPitch".into(), "LHipYawPitch".into()])).unwrap();
        assert_eq!(body.drivers(&hips), [false, true]);
        let right_only = body.resolve(&"RHipYawPitch".into()).unwrap();
        assert_eq!(body.drivers(&right_only), [true]);
        let twice = body.resolve(&Value::Array(vec!["HeadYaw".into(), "Head".into()])).unwrap();
        assert_eq!(body.drivers(&twice), [true, false, true], "the first of the same joint");
    }
}
