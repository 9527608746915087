//! Each actuator's `Ack` / `Nack` counters in ALMemory's slots: every write acknowledged
//! by the simulation, and a hardware whose devices miss some answers.

use std::sync::Arc;
use std::time::Duration;

use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{ClockMode, CycleConfig, CycleThread, DcmSlots, StartedCycle};
use naobroker_dcm::time::DcmTime;
use naobroker_hardware::{AnswerCounts, Hardware};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

/// A robot whose `deaf` actuator never answers and whose others answer every other write
/// (one answer per two cycles, the second cycle's answer is late and counted with it).
struct FlakyBoard {
    deaf: usize,
    writes: u64,
}

impl Hardware for FlakyBoard {
    fn read_sensors(&mut self, _time: DcmTime, _sensors: &mut [f64]) {}

    fn write_actuators(&mut self, _time: DcmTime, _values: &[f64], _raw: &[i64], _fired: &[bool]) {
        self.writes += 1;
    }

    fn count_answers(&mut self, answers: &mut AnswerCounts) {
        if self.writes % 2 == 1 {
            return;
        }
        for actuator in 0..answers.len() {
            if actuator == self.deaf {
                answers.add(actuator, 0, 2);
            } else {
                answers.add(actuator, 2, 0);
            }
        }
    }
}

fn run(
    hardware: impl FnOnce(&DeviceModel) -> Box<dyn Hardware>,
    cycles: u64,
) -> (Arc<DeviceModel>, CycleThread) {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config =
        CycleConfig { priority: 0, clock: ClockMode::Manual, start_time_ms: 0, ..CycleConfig::default() };
    let hardware = hardware(&model);
    let StartedCycle { thread: cycle, channels: _channels, reports: _reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap();
    assert!(cycle.shared().step_blocking(cycles, Duration::from_secs(10)), "the cycle did not run");
    (model, cycle)
}

fn slot(cycle: &CycleThread, key: &str) -> f64 {
    let slots = &cycle.shared().slots;
    slots.get(slots.layout().index_of(key).unwrap_or_else(|| panic!("{key} is not a slot")))
}

#[test]
fn the_simulation_acknowledges_every_write() {
    let (model, cycle) = run(|model| Box::new(SimRobot::new(model)), 7);
    for actuator in &model.actuators {
        let base = actuator.full_name().strip_suffix("/Value").unwrap().to_owned();
        assert_eq!(slot(&cycle, &format!("{base}/Ack")), 7.0, "{base}");
        assert_eq!(slot(&cycle, &format!("{base}/Nack")), 0.0, "{base}");
    }
    let kind = cycle.shared().slots.layout().index_of("Device/SubDeviceList/HeadYaw/Position/Actuator/Ack");
    assert_eq!(cycle.shared().slots.layout().kind(kind.unwrap()), naobroker_rtslots::SlotKind::Int);
}

#[test]
fn a_device_that_does_not_answer_counts_nacks_alone() {
    let deaf = "LHand/Position/Actuator/Value";
    let (_model, cycle) =
        run(|model| Box::new(FlakyBoard { deaf: model.actuator(deaf).unwrap(), writes: 0 }), 6);
    assert_eq!(slot(&cycle, "Device/SubDeviceList/LHand/Position/Actuator/Nack"), 6.0);
    assert_eq!(slot(&cycle, "Device/SubDeviceList/LHand/Position/Actuator/Ack"), 0.0);
    assert_eq!(slot(&cycle, "Device/SubDeviceList/RHand/Position/Actuator/Ack"), 6.0);
    assert_eq!(slot(&cycle, "Device/SubDeviceList/RHand/Position/Actuator/Nack"), 0.0);
}
