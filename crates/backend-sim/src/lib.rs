//! The `sim` backend, a simulated NAO: the robot description's devices in front of the shared
//! simulated body (`naobroker-simbody`: joints following their commands with stiffness-scaled
//! first-order dynamics and speed limits, sensors with a little noise, a sonar echo); LEDs echo.
//!
//! It is the hardware: it reads the integers the boards would receive and reports what
//! the boards would read, both through the description's own gains and offsets (its
//! `[[device]]` values). A calibration changes the DCM's conversions, not the robot's.

use naobroker_hardware::time::DcmTime;
use naobroker_hardware::Hardware;
use naobroker_robot::device::{Conversion, DeviceModel};
use naobroker_simbody::{JointLimits, SimBody};

/// A simulated joint's devices: indices in the device model and their conversions.
struct JointDevices {
    position_actuator: usize,
    stiffness_actuator: usize,
    position_sensor: usize,
    /// The description's conversions of the position and stiffness actuators.
    position_conversion: Conversion,
    stiffness_conversion: Conversion,
    current_sensor: Option<usize>,
    temperature_sensor: Option<usize>,
}

pub struct SimRobot {
    /// The devices of each of the body's joints, in the body's order.
    joints: Vec<JointDevices>,
    body: SimBody,
    sonar_trigger: Option<usize>,
    sonar_sensors: Vec<usize>,
    initial: Vec<f64>,
    /// Each sensor's conversion in the description: what the boards read for a value.
    readings: Vec<Conversion>,
    forced: Vec<Option<f64>>,
    any_forced: bool,
    /// Sensors released since the last read: back to their own value.
    released: Vec<bool>,
    any_released: bool,
    last_time: Option<DcmTime>,
}

impl SimRobot {
    pub fn new(model: &DeviceModel) -> SimRobot {
        let (joints, limits): (Vec<JointDevices>, Vec<JointLimits>) = model
            .joints
            .iter()
            .filter_map(|joint| {
                let name = &joint.name;
                let position_actuator = model.actuator(&format!("{name}/Position/Actuator/Value"))?;
                let stiffness_actuator = model.actuator(&format!("{name}/Hardness/Actuator/Value"))?;
                let position_sensor = model.sensor(&format!("{name}/Position/Sensor/Value"))?;
                let devices = JointDevices {
                    position_actuator,
                    stiffness_actuator,
                    position_sensor,
                    position_conversion: model.actuators[position_actuator].conversion(),
                    stiffness_conversion: model.actuators[stiffness_actuator].conversion(),
                    current_sensor: model.sensor(&format!("{name}/ElectricCurrent/Sensor/Value")),
                    temperature_sensor: model.sensor(&format!("{name}/Temperature/Sensor/Value")),
                };
                let limits = JointLimits { min: joint.min, max: joint.max, max_velocity: joint.max_velocity };
                Some((devices, limits))
            })
            .unzip();
        let sonar_sensors = ["US/Left/Sensor/Value", "US/Right/Sensor/Value"]
            .iter()
            .filter_map(|name| model.sensor(name))
            .collect();
        SimRobot {
            joints,
            body: SimBody::new(&limits),
            sonar_trigger: model.actuator("US/Actuator/Value"),
            sonar_sensors,
            initial: model.sensors.iter().map(|s| s.initial).collect(),
            readings: model.sensors.iter().map(|s| s.conversion()).collect(),
            forced: vec![None; model.sensors.len()],
            any_forced: false,
            released: vec![false; model.sensors.len()],
            any_released: false,
            last_time: None,
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
        for (index, devices) in self.joints.iter().enumerate() {
            read(sensors, devices.position_sensor, self.body.measured_position(index));
            let joint = self.body.joint(index);
            if let Some(current) = devices.current_sensor {
                read(sensors, current, joint.current());
            }
            if let Some(temperature) = devices.temperature_sensor {
                read(sensors, temperature, joint.temperature());
            }
        }
        if let Some(echo) = self.body.sonar_echo() {
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
        let dt_s = match self.last_time {
            Some(last) => f64::from(time.wrapping_sub(last).max(0)) / 1000.0,
            None => 0.0,
        };
        self.last_time = Some(time);
        for (index, devices) in self.joints.iter().enumerate() {
            let stiffness = devices.stiffness_conversion.from_hardware(raw[devices.stiffness_actuator]);
            let target = devices.position_conversion.from_hardware(raw[devices.position_actuator]);
            self.body.drive(index, target, stiffness, dt_s);
        }
        if let Some(trigger) = self.sonar_trigger {
            if fired[trigger] {
                self.body.trigger_sonar();
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
