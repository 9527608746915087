//! The recording hook on a real cycle thread under the manual clock: one row per cycle in
//! order, a gap counted (not waited for) when the queue is full, and no allocation either way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{ClockMode, CycleConfig, CycleThread, DcmSlots, Shared, StartedCycle};
use naobroker_framework::Value;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

use super::{copy_row, RowQueue};
use crate::handle::DcmHandle;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const KEYS: [&str; 2] = [
    "Device/SubDeviceList/HeadYaw/Position/Actuator/Value",
    "Device/SubDeviceList/HeadYaw/Position/Sensor/Value",
];

fn start() -> (CycleThread, DcmHandle) {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config =
        CycleConfig { priority: 0, clock: ClockMode::Manual, start_time_ms: 0, ..CycleConfig::default() };
    let hardware = Box::new(SimRobot::new(&model));
    let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap();
    (cycle, DcmHandle::new(channels.take("DCM").unwrap()))
}

fn step(shared: &Shared, n: u64) {
    assert!(shared.step_blocking(n, Duration::from_secs(20)), "the manual cycle did not run");
}

/// The cycles of the rows in `batch`, each row checked for its length.
fn cycles_of(batch: &Value) -> Vec<u64> {
    let rows = batch.as_map().unwrap().iter().find(|(k, _)| k.as_str() == Some("rows")).unwrap().1.clone();
    let rows = rows.as_array().unwrap().clone();
    rows.iter()
        .map(|row| {
            let row = row.as_array().unwrap();
            assert_eq!(row.len(), 2 + KEYS.len());
            row[1].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn the_hook_copies_every_cycle_counts_gaps_when_full_and_never_allocates() {
    assert!(allocations_seen_on_a_new_thread() > 0, "the counting allocator is installed");
    let (cycle, dcm) = start();
    let shared = Arc::clone(cycle.shared());
    let fast = dcm.fast_access(&KEYS).unwrap();
    let row_len = 2 + KEYS.len();
    // Room for 50 rows: the test drains after 40 cycles, then lets 60 pass.
    let (producer, consumer) = rtrb::RingBuffer::new(50 * row_len);
    let gaps = Arc::new(AtomicU64::new(0));
    let mut copy = copy_row(fast, producer, Arc::clone(&gaps));
    let allocations = Arc::new(AtomicU64::new(u64::MAX));
    let seen = Arc::clone(&allocations);
    let _hook = dcm
        .at_post_process("record", move |context| {
            start_counting();
            let before = counted();
            copy(context);
            let spent = counted() - before;
            let most = seen.load(Ordering::SeqCst);
            seen.store(if most == u64::MAX { spent } else { most.max(spent) }, Ordering::SeqCst);
        })
        .unwrap();
    let mut queue = RowQueue { rows: consumer, row_len, gaps: Arc::clone(&gaps) };
    step(&shared, 40);
    let first = cycles_of(&queue.batch().unwrap());
    assert_eq!(first, (1..=40).collect::<Vec<u64>>(), "every cycle once, in order");
    assert!(queue.batch().is_none());
    step(&shared, 60);
    let second = cycles_of(&queue.batch().unwrap());
    assert_eq!(second, (41..=90).collect::<Vec<u64>>(), "the queue kept what fit");
    assert_eq!(gaps.load(Ordering::SeqCst), 10, "the 10 cycles that did not fit are counted");
    assert_eq!(allocations.load(Ordering::SeqCst), 0, "the hook allocated on the cycle thread");
}
