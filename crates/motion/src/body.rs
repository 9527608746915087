//! Joint names, chains and groups as ALMotion users know them.

use naobroker_dcm::device::{DeviceModel, JointSpec};
use naobroker_framework::Value;

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
}

const CHAIN_ORDER: [&str; 5] = ["Head", "LArm", "LLeg", "RLeg", "RArm"];

impl Body {
    pub fn new(model: &DeviceModel) -> Result<Body, String> {
        let mut motors = Vec::new();
        for joint in &model.joints {
            let find = |suffix: &str, actuator: bool| {
                let name = format!("{}/{suffix}", joint.name);
                let found = if actuator { model.actuator(&name) } else { model.sensor(&name) };
                found.ok_or_else(|| format!("the robot description has no {name}"))
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
        Ok(Body { joints, motors, chains })
    }

    /// Joint indices a name stands for: a joint, a chain or a group.
    pub fn expand(&self, name: &str) -> Result<Vec<usize>, String> {
        if let Some(index) = self.joints.iter().position(|j| j.name == name) {
            return Ok(vec![index]);
        }
        let of_chains = |chains: &[&str]| -> Vec<usize> {
            (0..self.joints.len()).filter(|&i| chains.contains(&self.joints[i].chain.as_str())).collect()
        };
        let expanded = match name {
            "Body" | "Joints" | "JointActuators" => (0..self.joints.len()).collect(),
            "Arms" => of_chains(&["LArm", "RArm"]),
            "Legs" => of_chains(&["LLeg", "RLeg"]),
            chain if self.chains.iter().any(|c| c == chain) => of_chains(&[chain]),
            _ => return Err(format!("unknown joint or chain {name:?}")),
        };
        Ok(expanded)
    }

    /// Names as ALMotion methods take them: one name, or a list of names.
    pub fn resolve(&self, names: &Value) -> Result<Vec<usize>, String> {
        match names {
            Value::String(_) => self.expand(names.as_str().unwrap_or_default()),
            Value::Array(items) => {
                let mut joints = Vec::new();
                for item in items {
                    let name =
                        item.as_str().ok_or_else(|| format!("joint names must be strings, got {item}"))?;
                    joints.extend(self.expand(name)?);
                }
                Ok(joints)
            }
            other => Err(format!("names must be a string or a list of strings, got {other}")),
        }
    }

    /// `getBodyNames`: a chain, a group or "Chains".
    pub fn body_names(&self, name: &str) -> Result<Vec<String>, String> {
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
    use naobroker_dcm::device::RobotDescription;

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
        assert!(body.expand("Tail").unwrap_err().contains("unknown joint or chain \"Tail\""));
    }
}
