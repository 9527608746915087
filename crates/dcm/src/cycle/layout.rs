//! Where the DCM's keys live among ALMemory's real-time slots, laid out once at start-up.

use naobroker_robot::device::DeviceModel;
use naobroker_rtslots::{SlotKind, SlotLayout};

/// Where the DCM's keys live among ALMemory's real-time slots.
#[derive(Debug, Clone)]
pub struct DcmSlots {
    /// First slot of the actuators' values, in device-model order.
    pub actuators: usize,
    pub actuator_gain: usize,
    pub actuator_offset: usize,
    /// Each actuator's `.../Ack` and `.../Nack` counters (NAOqi: device answered, did not).
    pub actuator_ack: usize,
    pub actuator_nack: usize,
    pub sensors: usize,
    pub sensor_gain: usize,
    pub sensor_offset: usize,
    pub time: usize,
    pub cycle: usize,
    pub cycle_time: usize,
    pub target_cycle_time: usize,
    pub lateness: usize,
    pub overruns: usize,
    pub realtime: usize,
    pub simulation: usize,
    pub hal_ack: usize,
    pub hal_nack: usize,
    pub hal_error: usize,
}

impl DcmSlots {
    /// Lay out every key the DCM publishes, once, at start-up.
    pub fn layout(model: &DeviceModel) -> (SlotLayout, DcmSlots) {
        let mut layout = SlotLayout::new();
        // Each block is contiguous: `DeviceModel::new` refused devices whose keys collide,
        // so every name is new and `add` appends it.
        let mut block = |names: Vec<String>, kind: SlotKind| {
            let first = layout.len();
            for (offset, name) in names.iter().enumerate() {
                let index = layout.add(name, kind);
                assert_eq!(index, first + offset, "{name} is published twice");
            }
            first
        };
        let actuators = block(model.actuators.iter().map(|a| a.full_name()).collect(), SlotKind::Float);
        let actuator_property = |name: &str| model.actuators.iter().map(|a| a.property_key(name)).collect();
        let actuator_gain = block(actuator_property("Gain"), SlotKind::Float);
        let actuator_offset = block(actuator_property("Offset"), SlotKind::Float);
        let actuator_ack = block(actuator_property("Ack"), SlotKind::Int);
        let actuator_nack = block(actuator_property("Nack"), SlotKind::Int);
        let sensors = block(model.sensors.iter().map(|s| s.full_name()).collect(), SlotKind::Float);
        let sensor_property = |name: &str| model.sensors.iter().map(|s| s.property_key(name)).collect();
        let sensor_gain = block(sensor_property("Gain"), SlotKind::Float);
        let sensor_offset = block(sensor_property("Offset"), SlotKind::Float);
        let mut add = |name: &str, kind: SlotKind| layout.add(name, kind);
        let slots = DcmSlots {
            actuators,
            actuator_gain,
            actuator_offset,
            actuator_ack,
            actuator_nack,
            sensors,
            sensor_gain,
            sensor_offset,
            time: add("DCM/Time", SlotKind::Int),
            cycle: add("DCM/Cycle", SlotKind::Int),
            cycle_time: add("DCM/CycleTime", SlotKind::Int),
            target_cycle_time: add("DCM/TargetCycleTime", SlotKind::Int),
            lateness: add("DCM/Lateness", SlotKind::Int),
            overruns: add("DCM/Overruns", SlotKind::Int),
            realtime: add("DCM/Realtime", SlotKind::Bool),
            simulation: add("DCM/Simulation", SlotKind::Bool),
            hal_ack: add("HAL/Ack", SlotKind::Int),
            hal_nack: add("HAL/Nack", SlotKind::Int),
            hal_error: add("HAL/Error", SlotKind::Int),
        };
        (layout, slots)
    }
}
