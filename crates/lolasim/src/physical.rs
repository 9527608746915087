//! The physically simulated NAO behind the socket (`--physics`): `naobroker-physics` on
//! LoLA's 25 joints, its sensors in the sensor map; the buttons, battery, joint status and
//! `RobotConfig` stay scripted, as a body cannot press its own buttons.

use naobroker_lola::names;
use naobroker_lola::{ActuatorMap, SensorMap};
use naobroker_physics::{PhysicalBody, RobotModel, Truth, World};
use naobroker_robot::device::RobotDescription;

use crate::error::SimError;
use crate::options::CYCLE;
use crate::script::ScriptedSensors;

/// The foot bumpers' places in LoLA's `Touch`: (left foot left, right), (right foot left, right).
const BUMPERS: [[usize; 2]; 2] = [[4, 5], [9, 10]];

pub(crate) struct PhysicalRobot {
    body: PhysicalBody,
    /// What each sonar reports before the client enables it.
    sonar_at_rest: [f32; 2],
}

impl PhysicalRobot {
    pub(crate) fn new(
        robot: &RobotDescription,
        world: World,
        sonar_at_rest: [f32; 2],
    ) -> Result<PhysicalRobot, SimError> {
        let model = RobotModel::from_description(robot)?;
        let body = PhysicalBody::new(&model, world, &names::JOINTS)?;
        Ok(PhysicalRobot { body, sonar_at_rest })
    }

    /// One LoLA cycle (12 ms) of following `commands`.
    pub(crate) fn tick(&mut self, commands: &ActuatorMap) {
        for joint in 0..names::JOINTS.len() {
            let (position, stiffness) = (commands.position[joint], commands.stiffness[joint]);
            self.body.command(joint, f64::from(position), f64::from(stiffness));
        }
        self.body.advance(CYCLE.as_secs_f64());
    }

    /// The sensor map of this moment: the body's sensors, the rest as scripted.
    pub(crate) fn sense(&mut self, script: &ScriptedSensors, commands: &ActuatorMap, out: &mut SensorMap) {
        for joint in 0..names::JOINTS.len() {
            out.position[joint] = self.body.measured_position(joint) as f32;
            out.stiffness[joint] = self.body.stiffness(joint) as f32;
            out.current[joint] = self.body.current(joint) as f32;
            out.temperature[joint] = self.body.temperature(joint) as f32;
        }
        let inertial = self.body.inertial();
        out.accelerometer = inertial.accelerometer.map(|value| value as f32);
        out.gyroscope = inertial.gyroscope.map(|value| value as f32);
        out.angles = inertial.angles.map(|value| value as f32);
        let fsr = self.body.fsr();
        for (index, value) in out.fsr.iter_mut().enumerate() {
            *value = fsr[index / 4][index % 4] as f32;
        }
        out.touch = script.touch;
        for (foot, pressed) in self.body.bumpers().iter().enumerate() {
            for (side, &pressed) in pressed.iter().enumerate() {
                let touch = &mut out.touch[BUMPERS[foot][side]];
                *touch = touch.max(f32::from(u8::from(pressed)));
            }
        }
        out.sonar = script.sonar.unwrap_or_else(|| {
            let side = |side: usize| match self.body.sonar(side) {
                Some(echo) if commands.sonar[side] => echo as f32,
                _ => self.sonar_at_rest[side],
            };
            [side(0), side(1)]
        });
        out.status = script.status;
        out.battery = script.battery;
        out.robot_config = script.robot_config;
    }

    pub(crate) fn truth(&self) -> Truth {
        self.body.truth()
    }

    pub(crate) fn push(&mut self, force: [f64; 3], seconds: f64) {
        self.body.push(force, seconds);
    }
}
