//! The kinematic NAO behind the socket (the default): the shared simulated body
//! (`naobroker-simbody`) on LoLA's 25 joints, driven by the kept actuator map, and the sensor
//! map it reports; no mass, no ground: the other sensors report their scripted values.

use naobroker_lola::names;
use naobroker_lola::{ActuatorMap, SensorMap};
use naobroker_robot::device::DeviceModel;
use naobroker_simbody::{JointLimits, SimBody};

use crate::error::SimError;
use crate::options::CYCLE;
use crate::script::ScriptedSensors;

pub(crate) struct KinematicRobot {
    body: SimBody,
    /// What each sonar reports before the client enables it.
    sonar_at_rest: [f32; 2],
}

impl KinematicRobot {
    /// LoLA's joints with the description's limits and speeds (every one must be there).
    pub(crate) fn new(model: &DeviceModel, sonar_at_rest: [f32; 2]) -> Result<KinematicRobot, SimError> {
        let limits = names::JOINTS
            .iter()
            .map(|&name| {
                let joint = model.joints.iter().find(|joint| joint.name == name);
                let joint = joint.ok_or(SimError::MissingJoint(name))?;
                Ok(JointLimits { min: joint.min, max: joint.max, max_velocity: joint.max_velocity })
            })
            .collect::<Result<Vec<_>, SimError>>()?;
        Ok(KinematicRobot { body: SimBody::new(&limits), sonar_at_rest })
    }

    /// One LoLA cycle (12 ms) of following `commands`.
    pub(crate) fn tick(&mut self, commands: &ActuatorMap) {
        let dt_s = CYCLE.as_secs_f64();
        for joint in 0..self.body.joint_count() {
            let target = f64::from(commands.position[joint]);
            self.body.drive(joint, target, f64::from(commands.stiffness[joint]), dt_s);
        }
        if commands.sonar.iter().any(|&enabled| enabled) {
            self.body.trigger_sonar();
        }
    }

    /// The sensor map of this moment: the joints measured, the rest as scripted.
    pub(crate) fn sense(&mut self, script: &ScriptedSensors, commands: &ActuatorMap, out: &mut SensorMap) {
        for joint in 0..self.body.joint_count() {
            out.position[joint] = self.body.measured_position(joint) as f32;
            let state = self.body.joint(joint);
            out.stiffness[joint] = state.stiffness() as f32;
            out.current[joint] = state.current() as f32;
            out.temperature[joint] = state.temperature() as f32;
        }
        out.status = script.status;
        out.accelerometer = script.accelerometer;
        out.gyroscope = script.gyroscope;
        out.angles = script.angles;
        out.battery = script.battery;
        out.fsr = script.fsr;
        out.touch = script.touch;
        out.sonar = match script.sonar {
            Some(sonar) => sonar,
            None => {
                let echo = self.body.sonar_echo();
                let side = |side: usize| match echo {
                    Some(echo) if commands.sonar[side] => echo as f32,
                    _ => self.sonar_at_rest[side],
                };
                [side(0), side(1)]
            }
        };
        out.robot_config = script.robot_config;
    }
}
