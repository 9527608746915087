//! Every LoLA field to its device of the robot description and back, resolved once at
//! start: a sensor map's values into the DCM's sensor readings, the DCM's actuator
//! integers into an actuator map. LoLA is the robot's boards here, as the simulation is:
//! it reads the integers the DCM sends and reports what the DCM converts, both through
//! the description's own `[[device]]` gains and offsets (a calibration shifts the DCM's
//! conversions, not the robot's).

use naobroker_hardware::Takeover;
use naobroker_lola::names::{self, BatteryOrder, HIP_YAW_PITCH};
use naobroker_lola::{ActuatorKey, ActuatorMap, SensorKey, SensorMap, JOINT_COUNT};
use naobroker_robot::device::{Conversion, DeviceModel};

/// The DCM's one sonar actuator: NAOqi's modes 0–15 fire one measurement, 64 and above
/// measure continuously.
const SONAR_ACTUATOR: &str = "US/Actuator/Value";
const SONAR_CONTINUOUS: f64 = 64.0;
/// RHipYawPitch is not in LoLA: on the robot LHipYawPitch's motor moves both, so a
/// description that declares its position sensor reads LHipYawPitch's.
const COUPLED_HIP_SENSOR: &str = "RHipYawPitch/Position/Sensor/Value";

/// One value of a sensor map and the sensor it fills.
#[derive(Debug, Clone, Copy)]
struct SensorRow {
    key: SensorKey,
    index: usize,
    sensor: usize,
    conversion: Conversion,
}

/// One value of an actuator map and the actuator it comes from.
#[derive(Debug, Clone, Copy)]
struct ActuatorRow {
    key: ActuatorKey,
    index: usize,
    actuator: usize,
    conversion: Conversion,
}

/// A joint's devices, for the link-loss policy.
#[derive(Debug, Clone, Copy)]
struct JointRow {
    index: usize,
    stiffness: usize,
    position: usize,
    sensor: usize,
}

/// The resolved rows; nothing here allocates once built.
#[derive(Debug)]
pub(super) struct Mapping {
    sensors: Vec<SensorRow>,
    actuators: Vec<ActuatorRow>,
    sonar: Option<(usize, Conversion)>,
    joints: Vec<JointRow>,
}

/// The LoLA fields whose device the description lacks (they are not shown).
pub(super) type Unmapped = Vec<&'static str>;

impl Mapping {
    /// The rows of every LoLA field whose device `model` has, `battery` saying the order of
    /// the sensor map's four battery values; and the names of those it has not.
    pub(super) fn new(model: &DeviceModel, battery: BatteryOrder) -> (Mapping, Unmapped) {
        let mut unmapped = Vec::new();
        let mut sensors = Vec::new();
        // RobotConfig goes to ALMemory as texts; the sensor map's Stiffness echoes the
        // Hardness actuators (the relax policy reads it), NAOqi has no sensor for it.
        let keys = SensorKey::ALL
            .into_iter()
            .filter(|key| !matches!(key, SensorKey::RobotConfig | SensorKey::Stiffness));
        for key in keys {
            for (index, &name) in names::sensor_names(key, battery).iter().enumerate() {
                match model.sensor(name) {
                    Some(sensor) => {
                        let conversion = model.sensors[sensor].conversion();
                        sensors.push(SensorRow { key, index, sensor, conversion });
                    }
                    None => unmapped.push(name),
                }
            }
        }
        if let Some(sensor) = model.sensor(COUPLED_HIP_SENSOR) {
            let conversion = model.sensors[sensor].conversion();
            sensors.push(SensorRow { key: SensorKey::Position, index: HIP_YAW_PITCH, sensor, conversion });
        }
        let mut actuators = Vec::new();
        for key in ActuatorKey::ALL.into_iter().filter(|&key| key != ActuatorKey::Sonar) {
            for (index, &name) in names::actuator_names(key).iter().enumerate() {
                match model.actuator(name) {
                    Some(actuator) => {
                        let conversion = model.actuators[actuator].conversion();
                        actuators.push(ActuatorRow { key, index, actuator, conversion });
                    }
                    None => unmapped.push(name),
                }
            }
        }
        let sonar = model.actuator(SONAR_ACTUATOR).map(|sonar| (sonar, model.actuators[sonar].conversion()));
        if sonar.is_none() {
            unmapped.push(SONAR_ACTUATOR);
        }
        let joints = (0..JOINT_COUNT)
            .filter_map(|index| {
                Some(JointRow {
                    index,
                    stiffness: model.actuator(names::STIFFNESS[index])?,
                    position: model.actuator(names::POSITION_ACTUATORS[index])?,
                    sensor: model.sensor(names::POSITION_SENSORS[index])?,
                })
            })
            .collect();
        (Mapping { sensors, actuators, sonar, joints }, unmapped)
    }

    /// Put what `map` says into `readings` (one per sensor of the model), as the boards
    /// read it: each value through its sensor's description conversion.
    pub(super) fn read(&self, map: &SensorMap, readings: &mut [f64]) {
        for row in &self.sensors {
            let value = match row.key {
                SensorKey::Status => f64::from(map.status[row.index]),
                key => f64::from(sensor_floats(map, key)[row.index]),
            };
            readings[row.sensor] = row.conversion.sensor_reading(value);
        }
    }

    /// Fill `map` with the DCM's integers (`raw`, one per actuator of the model) as the
    /// boards take them: each through its actuator's description conversion. `fired`
    /// says which trigger actuators applied a command this cycle (the sonar).
    pub(super) fn write(&self, raw: &[i64], fired: &[bool], map: &mut ActuatorMap) {
        for row in &self.actuators {
            actuator_floats(map, row.key)[row.index] = row.conversion.from_hardware(raw[row.actuator]) as f32;
        }
        if let Some((sonar, conversion)) = self.sonar {
            let enabled = fired[sonar] || conversion.from_hardware(raw[sonar]) >= SONAR_CONTINUOUS;
            map.sonar = [enabled; 2];
        }
    }

    /// The relax policy's commands for a link that came back: each joint's stiffness from
    /// what the robot applies now (`map`'s echo) to 0 in `ramp_ms`, its position held where
    /// it is. `takeover` keeps its room: it was made for every joint.
    pub(super) fn relax(&self, map: &SensorMap, ramp_ms: u32, takeover: &mut Vec<Takeover>) {
        takeover.clear();
        for joint in &self.joints {
            let from = f64::from(map.stiffness[joint.index]).clamp(0.0, 1.0);
            takeover.push(Takeover::Ramp { actuator: joint.stiffness, from, to: 0.0, ramp_ms });
            takeover.push(Takeover::Hold { actuator: joint.position, sensor: joint.sensor });
        }
    }

    /// How many commands [`Mapping::relax`] gives at most.
    pub(super) fn relax_commands(&self) -> usize {
        2 * self.joints.len()
    }
}

/// A sensor map's float array for `key` (empty for the two that hold no floats).
fn sensor_floats(map: &SensorMap, key: SensorKey) -> &[f32] {
    match key {
        SensorKey::Accelerometer => &map.accelerometer,
        SensorKey::Angles => &map.angles,
        SensorKey::Battery => &map.battery,
        SensorKey::Current => &map.current,
        SensorKey::Fsr => &map.fsr,
        SensorKey::Gyroscope => &map.gyroscope,
        SensorKey::Position => &map.position,
        SensorKey::Sonar => &map.sonar,
        SensorKey::Stiffness => &map.stiffness,
        SensorKey::Temperature => &map.temperature,
        SensorKey::Touch => &map.touch,
        SensorKey::RobotConfig | SensorKey::Status => &[],
    }
}

/// An actuator map's float array for `key` (empty for the sonar's bools).
fn actuator_floats(map: &mut ActuatorMap, key: ActuatorKey) -> &mut [f32] {
    match key {
        ActuatorKey::Position => &mut map.position,
        ActuatorKey::Stiffness => &mut map.stiffness,
        ActuatorKey::REar => &mut map.r_ear,
        ActuatorKey::LEar => &mut map.l_ear,
        ActuatorKey::Chest => &mut map.chest,
        ActuatorKey::LEye => &mut map.l_eye,
        ActuatorKey::REye => &mut map.r_eye,
        ActuatorKey::LFoot => &mut map.l_foot,
        ActuatorKey::RFoot => &mut map.r_foot,
        ActuatorKey::Skull => &mut map.skull,
        ActuatorKey::Sonar => &mut [],
    }
}
