//! The cycle's request channels are named by the producers the config lists, each taken
//! once; hook ids are unique across channels, so one producer removing its hook never
//! removes another's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{
    ClockMode, CycleConfig, CycleContext, CycleThread, DcmSlots, Phase, RequestChannel, StartedCycle,
    UnknownProducer,
};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

fn start(producers: &'static [&'static str]) -> StartedCycle {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config = CycleConfig { priority: 0, clock: ClockMode::Manual, producers, ..CycleConfig::default() };
    let hardware = Box::new(SimRobot::new(&model));
    CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap()
}

fn step(cycle: &CycleThread, n: u64) {
    let shared = cycle.shared();
    assert!(shared.step_blocking(n, Duration::from_secs(20)), "the cycle stopped at {}", shared.cycles());
}

/// A postProcess hook counting the cycles it ran in; its id.
fn counting_hook(channel: &mut RequestChannel, name: &str, count: &Arc<AtomicU64>) -> u32 {
    let count = Arc::clone(count);
    let callback = move |_: &mut CycleContext<'_>| {
        count.fetch_add(1, Ordering::Relaxed);
    };
    channel.add_hook(Phase::Post, name, Box::new(callback)).unwrap()
}

#[test]
fn each_named_producer_takes_its_channel_once() {
    let mut started = start(&["DCM", "ALMotion"]);
    assert!(started.channels.take("ALMotion").is_ok());
    let again = started.channels.take("ALMotion").err();
    assert_eq!(again, Some(UnknownProducer("ALMotion".into())), "taken already");
    let unknown = started.channels.take("ALSensors").err();
    assert_eq!(unknown, Some(UnknownProducer("ALSensors".into())));
    assert!(started.channels.take("DCM").is_ok());
}

#[test]
fn hook_ids_are_unique_across_channels() {
    let mut started = start(&["DCM", "ALMotion"]);
    let mut first = started.channels.take("DCM").unwrap();
    let mut second = started.channels.take("ALMotion").unwrap();
    let (first_count, second_count) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let first_id = counting_hook(&mut first, "first", &first_count);
    let second_id = counting_hook(&mut second, "second", &second_count);
    assert_ne!(first_id, second_id);
    step(&started.thread, 3);
    first.remove_hook(first_id).unwrap();
    step(&started.thread, 3);
    assert_eq!(first_count.load(Ordering::Relaxed), 3, "removed after 3 cycles");
    assert_eq!(second_count.load(Ordering::Relaxed), 6, "the other producer's hook still runs");
    assert_eq!(second.hook_names(), [(second_id, "second".to_owned())]);
}
