//! In-process real-time hooks (NAOqi atPreProcess / atPostProcess) under the manual clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{ClockMode, CycleConfig, CycleThread, DcmSlots, Shared, StartedCycle};
use naobroker_dcm_module::DcmHandle;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

fn start() -> (CycleThread, DcmHandle) {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config = CycleConfig {
        priority: 0,
        clock: ClockMode::Manual,
        start_time_ms: 0,
        hook_budget_us: 500,
        ..CycleConfig::default()
    };
    let hardware = Box::new(SimRobot::new(&model));
    let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap();
    (cycle, DcmHandle::new(channels.take("DCM").unwrap()))
}

fn step(shared: &Shared, n: u64) {
    assert!(shared.step_blocking(n, Duration::from_secs(5)), "the manual cycle did not run");
}

#[test]
fn a_pre_process_command_is_sent_in_the_same_cycle() {
    let (cycle, dcm) = start();
    let shared = Arc::clone(cycle.shared());
    let led = dcm.actuator("ChestBoard/Led/Blue/Actuator/Value").unwrap();
    let slot =
        shared.slots.layout().index_of("Device/SubDeviceList/ChestBoard/Led/Blue/Actuator/Value").unwrap();
    let _hook = dcm
        .at_pre_process("blink", move |context| {
            context.set(led, if context.cycle % 2 == 1 { 1.0 } else { 0.0 });
        })
        .unwrap();
    step(&shared, 1);
    assert_eq!(shared.slots.get(slot), 1.0, "cycle 1 sends what its preProcess hook asked");
    step(&shared, 1);
    assert_eq!(shared.slots.get(slot), 0.0);
}

#[test]
fn post_process_sees_this_cycles_values_and_its_commands_apply_next_cycle() {
    let (cycle, dcm) = start();
    let shared = Arc::clone(cycle.shared());
    let fast = dcm.fast_access(&["DCM/Time"]).unwrap();
    let seen_time = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&seen_time);
    let stiffness = dcm.actuator("HeadYaw/Hardness/Actuator/Value").unwrap();
    let slot =
        shared.slots.layout().index_of("Device/SubDeviceList/HeadYaw/Hardness/Actuator/Value").unwrap();
    let _hook = dcm
        .at_post_process("observer", move |context| {
            seen.store(fast.get(0) as u64, Ordering::SeqCst);
            assert_eq!(fast.get(0) as i32, context.time);
            context.set(stiffness, 1.0);
        })
        .unwrap();
    step(&shared, 3);
    assert_eq!(seen_time.load(Ordering::SeqCst), 30, "postProcess ran after ALMemory got cycle 3's values");
    assert_eq!(shared.slots.get(slot), 1.0, "queued at cycle 1's postProcess, sent from cycle 2 on");
}

#[test]
fn a_slow_hook_is_reported_and_a_disconnected_hook_stops() {
    let (cycle, dcm) = start();
    let shared = Arc::clone(cycle.shared());
    let calls = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&calls);
    let slow = dcm
        .at_pre_process("slow", move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            let started = Instant::now();
            while started.elapsed() < Duration::from_micros(1500) {}
        })
        .unwrap();
    step(&shared, 4);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    let over = shared.stats.hooks.iter().map(|h| h.over_budget()).sum::<u64>();
    assert_eq!(over, 4, "1.5 ms each against a 500 µs budget");
    let stats = serde_json::to_value(dcm.cycle_stats()).unwrap();
    assert_eq!(stats["hooks"][0]["name"], "slow", "the report names the hook: {stats}");
    assert_eq!(stats["hooks"][0]["over_budget"], 4);
    slow.disconnect();
    step(&shared, 3);
    assert_eq!(calls.load(Ordering::SeqCst), 4, "no call after disconnect");
}
