//! The sensor map LoLA sends every cycle, as typed fixed arrays.

use crate::text::ConfigText;
use crate::JOINT_COUNT;

/// The robot's identity, `RobotConfig` on the wire: on a real robot the ids have 20
/// characters ("P0000073A03S83I00011") and the versions 5 ("6.0.0").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct RobotConfig {
    pub body_id: ConfigText,
    pub body_version: ConfigText,
    pub head_id: ConfigText,
    pub head_version: ConfigText,
}

impl RobotConfig {
    /// The four texts in wire order.
    pub fn texts(&self) -> [&ConfigText; 4] {
        [&self.body_id, &self.body_version, &self.head_id, &self.head_version]
    }

    /// The four texts in wire order, to fill.
    pub fn texts_mut(&mut self) -> [&mut ConfigText; 4] {
        [&mut self.body_id, &mut self.body_version, &mut self.head_id, &mut self.head_version]
    }
}

/// One sensor map: every array in LoLA's own index order (joints in [`crate::names::JOINTS`]'
/// order, the others as [`crate::names`] lists them). Units as LoLA sends them: rad, A, °C,
/// m/s², rad/s, m.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SensorMap {
    /// Measured joint angles, rad.
    pub position: [f32; JOINT_COUNT],
    /// The stiffness each joint applies, 0..1.
    pub stiffness: [f32; JOINT_COUNT],
    /// Motor currents, A.
    pub current: [f32; JOINT_COUNT],
    /// Motor temperatures, °C.
    pub temperature: [f32; JOINT_COUNT],
    /// Temperature status per joint (small non-negative integers on a real robot).
    pub status: [i32; JOINT_COUNT],
    /// x, y, z, m/s².
    pub accelerometer: [f32; 3],
    /// x, y, z, rad/s.
    pub gyroscope: [f32; 3],
    /// Torso angles x, y, rad.
    pub angles: [f32; 2],
    /// Four battery values in the robot's order: [`crate::names::BatteryOrder`] says which.
    pub battery: [f32; 4],
    /// Left foot front-left, front-right, rear-left, rear-right, then the right foot's.
    pub fsr: [f32; 8],
    /// Buttons and touch pads, 0 or 1 ([`crate::names::TOUCH`]' order).
    pub touch: [f32; 14],
    /// Left, right distance, m.
    pub sonar: [f32; 2],
    pub robot_config: RobotConfig,
}
