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

/// No device: an index past any model's (`get` finds nothing there).
const NONE: u32 = u32::MAX;

/// What writing a joint reads, packed (26 joints in 17 cache lines): its actuators and their
/// conversions in the description.
struct JointDrive {
    position_actuator: u32,
    stiffness_actuator: u32,
    position: Conversion,
    stiffness: Conversion,
}

/// What reading a joint writes, packed apart from [`JointDrive`]: its sensors (`NONE` for
/// one the model lacks) and what the boards read for a value of each.
struct JointSensing {
    position_sensor: u32,
    current_sensor: u32,
    temperature_sensor: u32,
    position: Conversion,
    current: Conversion,
    temperature: Conversion,
}

pub struct SimRobot {
    /// The devices of each of the body's joints, in the body's order.
    drives: Vec<JointDrive>,
    sensing: Vec<JointSensing>,
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
        let index = |device: usize| u32::try_from(device).expect("fewer than 2^32 devices");
        let reading = |sensor: Option<usize>| match sensor {
            Some(sensor) => (index(sensor), model.sensors[sensor].conversion()),
            None => (NONE, Conversion { gain: 1.0, offset: 0.0 }),
        };
        let (mut drives, mut sensing, mut limits) = (Vec::new(), Vec::new(), Vec::new());
        for joint in &model.joints {
            let name = &joint.name;
            let devices = (
                model.actuator(&format!("{name}/Position/Actuator/Value")),
                model.actuator(&format!("{name}/Hardness/Actuator/Value")),
                model.sensor(&format!("{name}/Position/Sensor/Value")),
            );
            let (Some(position_actuator), Some(stiffness_actuator), Some(position_sensor)) = devices else {
                continue;
            };
            drives.push(JointDrive {
                position_actuator: index(position_actuator),
                stiffness_actuator: index(stiffness_actuator),
                position: model.actuators[position_actuator].conversion(),
                stiffness: model.actuators[stiffness_actuator].conversion(),
            });
            let (current_sensor, current) =
                reading(model.sensor(&format!("{name}/ElectricCurrent/Sensor/Value")));
            let (temperature_sensor, temperature) =
                reading(model.sensor(&format!("{name}/Temperature/Sensor/Value")));
            sensing.push(JointSensing {
                position_sensor: index(position_sensor),
                current_sensor,
                temperature_sensor,
                position: model.sensors[position_sensor].conversion(),
                current,
                temperature,
            });
            limits.push(JointLimits { min: joint.min, max: joint.max, max_velocity: joint.max_velocity });
        }
        let sonar_sensors = ["US/Left/Sensor/Value", "US/Right/Sensor/Value"]
            .iter()
            .filter_map(|name| model.sensor(name))
            .collect();
        SimRobot {
            drives,
            sensing,
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
        // Each joint's sensors through its own conversions, packed beside their indices.
        for (index, devices) in self.sensing.iter().enumerate() {
            let position = self.body.measured_position(index);
            let joint = self.body.joint(index);
            let readings = [
                (devices.position_sensor, devices.position, position),
                (devices.current_sensor, devices.current, joint.current()),
                (devices.temperature_sensor, devices.temperature, joint.temperature()),
            ];
            for (sensor, conversion, value) in readings {
                if let Some(reading) = sensors.get_mut(sensor as usize) {
                    *reading = conversion.sensor_reading(value);
                }
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
        for (index, devices) in self.drives.iter().enumerate() {
            let stiffness = devices.stiffness.from_hardware(raw[devices.stiffness_actuator as usize]);
            let target = devices.position.from_hardware(raw[devices.position_actuator as usize]);
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
