//! A simulated NAO: joints follow their commands with stiffness-scaled first-order
//! dynamics and speed limits, sensors report with a little noise, LEDs and sonar echo.
//!
//! It is the hardware: it reads the integers the boards would receive and reports what
//! the boards would read, both through the description's own gains and offsets (its
//! `[[device]]` values). A calibration changes the DCM's conversions, not the robot's.

use crate::device::{Conversion, DeviceModel};
use crate::hardware::Hardware;
use crate::time::DcmTime;

/// Time constant of a joint at full stiffness, in seconds.
const TIME_CONSTANT_S: f64 = 0.03;
/// Below this stiffness a joint is limp: it no longer follows its command.
const LIMP_STIFFNESS: f64 = 0.05;
const POSITION_NOISE_RAD: f64 = 0.0005;
/// The simulated room: an obstacle 0.8 m in front of the robot.
const SONAR_ECHO_M: f64 = 0.8;

struct SimJoint {
    position_actuator: usize,
    stiffness_actuator: usize,
    position_sensor: usize,
    /// The description's conversions of the position and stiffness actuators.
    position_conversion: Conversion,
    stiffness_conversion: Conversion,
    current_sensor: Option<usize>,
    temperature_sensor: Option<usize>,
    max_velocity: f64,
    min: f64,
    max: f64,
    position: f64,
    current: f64,
}

pub struct SimRobot {
    joints: Vec<SimJoint>,
    sonar_trigger: Option<usize>,
    sonar_sensors: Vec<usize>,
    /// Distance the sonar reports once a measurement was triggered.
    sonar_echo_m: Option<f64>,
    initial: Vec<f64>,
    /// Each sensor's conversion in the description: what the boards read for a value.
    readings: Vec<Conversion>,
    forced: Vec<Option<f64>>,
    any_forced: bool,
    /// Sensors released since the last read: back to their own value.
    released: Vec<bool>,
    any_released: bool,
    last_time: Option<DcmTime>,
    noise_state: u64,
}

impl SimRobot {
    pub fn new(model: &DeviceModel) -> SimRobot {
        let joints = model
            .joints
            .iter()
            .filter_map(|joint| {
                let name = &joint.name;
                let position_actuator = model.actuator(&format!("{name}/Position/Actuator/Value"))?;
                let stiffness_actuator = model.actuator(&format!("{name}/Hardness/Actuator/Value"))?;
                let position_sensor = model.sensor(&format!("{name}/Position/Sensor/Value"))?;
                Some(SimJoint {
                    position_actuator,
                    stiffness_actuator,
                    position_sensor,
                    position_conversion: model.actuators[position_actuator].conversion(),
                    stiffness_conversion: model.actuators[stiffness_actuator].conversion(),
                    current_sensor: model.sensor(&format!("{name}/ElectricCurrent/Sensor/Value")),
                    temperature_sensor: model.sensor(&format!("{name}/Temperature/Sensor/Value")),
                    max_velocity: joint.max_velocity,
                    min: joint.min,
                    max: joint.max,
                    position: 0.0f64.clamp(joint.min, joint.max),
                    current: 0.0,
                })
            })
            .collect();
        let sonar_sensors = ["US/Left/Sensor/Value", "US/Right/Sensor/Value"]
            .iter()
            .filter_map(|name| model.sensor(name))
            .collect();
        SimRobot {
            joints,
            sonar_trigger: model.actuator("US/Actuator/Value"),
            sonar_sensors,
            sonar_echo_m: None,
            initial: model.sensors.iter().map(|s| s.initial).collect(),
            readings: model.sensors.iter().map(|s| s.conversion()).collect(),
            forced: vec![None; model.sensors.len()],
            any_forced: false,
            released: vec![false; model.sensors.len()],
            any_released: false,
            last_time: None,
            noise_state: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

impl Hardware for SimRobot {
    fn read_sensors(&mut self, _time: DcmTime, sensors: &mut [f64]) {
        let readings = &self.readings;
        let read = |sensors: &mut [f64], sensor: usize, value: f64| {
            sensors[sensor] = readings[sensor].sensor_reading(value);
        };
        // Sensors not modelled keep their initial values (inertial unit upright, battery full).
        if self.last_time.is_none() {
            for (sensor, &value) in self.initial.iter().enumerate() {
                read(sensors, sensor, value);
            }
        }
        for index in 0..self.joints.len() {
            let noise = noise(&mut self.noise_state) * POSITION_NOISE_RAD;
            let joint = &self.joints[index];
            read(sensors, joint.position_sensor, joint.position + noise);
            if let Some(current) = joint.current_sensor {
                read(sensors, current, joint.current);
            }
            if let Some(temperature) = joint.temperature_sensor {
                read(sensors, temperature, 30.0 + 10.0 * joint.current);
            }
        }
        if let Some(echo) = self.sonar_echo_m {
            for &sensor in &self.sonar_sensors {
                read(sensors, sensor, echo);
            }
        }
        if self.any_released {
            for (sensor, released) in self.released.iter_mut().enumerate() {
                if std::mem::take(released) {
                    read(sensors, sensor, self.initial[sensor]);
                }
            }
            self.any_released = false;
        }
        // Forced values are readings already (the cycle converts them).
        if self.any_forced {
            for (value, forced) in sensors.iter_mut().zip(&self.forced) {
                if let Some(forced) = forced {
                    *value = *forced;
                }
            }
        }
    }

    fn write_actuators(&mut self, time: DcmTime, _values: &[f64], raw: &[i64], fired: &[bool]) {
        let dt = match self.last_time {
            Some(last) => f64::from(time.wrapping_sub(last).max(0)) / 1000.0,
            None => 0.0,
        };
        self.last_time = Some(time);
        for joint in &mut self.joints {
            let stiffness =
                joint.stiffness_conversion.from_hardware(raw[joint.stiffness_actuator]).clamp(0.0, 1.0);
            let target = joint.position_conversion.from_hardware(raw[joint.position_actuator]);
            let error = target - joint.position;
            if stiffness < LIMP_STIFFNESS {
                joint.current = 0.0;
                continue;
            }
            let follow = (dt * stiffness / TIME_CONSTANT_S).min(1.0);
            let limit = joint.max_velocity * dt;
            joint.position =
                (joint.position + (error * follow).clamp(-limit, limit)).clamp(joint.min, joint.max);
            joint.current = stiffness * (error.abs() * 2.0).min(1.5);
        }
        if let Some(trigger) = self.sonar_trigger {
            if fired[trigger] {
                self.sonar_echo_m = Some(SONAR_ECHO_M);
            }
        }
    }

    fn force_sensor(&mut self, sensor: usize, value: Option<f64>) -> bool {
        if sensor >= self.forced.len() {
            return false;
        }
        self.forced[sensor] = value;
        if value.is_none() {
            self.released[sensor] = true;
            self.any_released = true;
        }
        self.any_forced = self.forced.iter().any(Option::is_some);
        true
    }

    fn is_simulation(&self) -> bool {
        true
    }
}

/// Deterministic noise in [-1, 1) (xorshift), so simulated runs repeat exactly.
fn noise(state: &mut u64) -> f64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}
