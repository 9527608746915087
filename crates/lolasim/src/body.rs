//! The simulated NAO behind the socket, one of two bodies: the kinematic one (joints that
//! follow their commands, the other sensors scripted) or, with `--physics`, the robot on
//! MuJoCo, whose sensors come from its body in a world.

use naobroker_lola::names::{self, BatteryOrder};
use naobroker_lola::{ActuatorMap, SensorKey, SensorMap};
use naobroker_physics::Truth;
use naobroker_robot::device::DeviceModel;

use crate::error::SimError;
use crate::kinematic::KinematicRobot;
use crate::options::Options;
use crate::physical::PhysicalRobot;
use crate::script::ScriptedSensors;

pub(crate) enum RobotBody {
    Kinematic(KinematicRobot),
    Physical(Box<PhysicalRobot>),
}

impl RobotBody {
    /// The body `options` ask for, of the robot `model` describes.
    pub(crate) fn new(options: &Options, model: &DeviceModel) -> Result<RobotBody, SimError> {
        let sonar_at_rest = sonar_at_rest(model, options.battery_order);
        Ok(match options.physics {
            Some(world) => {
                RobotBody::Physical(Box::new(PhysicalRobot::new(&options.robot, world, sonar_at_rest)?))
            }
            None => RobotBody::Kinematic(KinematicRobot::new(model, sonar_at_rest)?),
        })
    }

    /// One LoLA cycle (12 ms) of following `commands`.
    pub(crate) fn tick(&mut self, commands: &ActuatorMap) {
        match self {
            RobotBody::Kinematic(body) => body.tick(commands),
            RobotBody::Physical(body) => body.tick(commands),
        }
    }

    /// The sensor map of this moment.
    pub(crate) fn sense(&mut self, script: &ScriptedSensors, commands: &ActuatorMap, out: &mut SensorMap) {
        match self {
            RobotBody::Kinematic(body) => body.sense(script, commands, out),
            RobotBody::Physical(body) => body.sense(script, commands, out),
        }
    }

    /// Ground truth: the physical body's only.
    pub(crate) fn truth(&self) -> Result<Truth, SimError> {
        match self {
            RobotBody::Physical(body) => Ok(body.truth()),
            RobotBody::Kinematic(_) => Err(SimError::NoPhysics("truth")),
        }
    }

    /// Push the torso: the physical body only.
    pub(crate) fn push(&mut self, force: [f64; 3], seconds: f64) -> Result<(), SimError> {
        match self {
            RobotBody::Physical(body) => {
                body.push(force, seconds);
                Ok(())
            }
            RobotBody::Kinematic(_) => Err(SimError::NoPhysics("push")),
        }
    }

    pub(crate) fn is_physical(&self) -> bool {
        matches!(self, RobotBody::Physical(_))
    }
}

/// What each sonar reports before the client enables it: the description's resting values.
fn sonar_at_rest(model: &DeviceModel, battery: BatteryOrder) -> [f32; 2] {
    let mut at_rest = [0.0; 2];
    for (value, name) in at_rest.iter_mut().zip(names::sensor_names(SensorKey::Sonar, battery)) {
        *value = model.sensor(name).map_or(0.0, |sensor| model.sensors[sensor].initial as f32);
    }
    at_rest
}
