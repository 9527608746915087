//! Proof that a producer on a real-time thread (the motion thread) is refused without
//! allocating or freeing: the refusal names its actuator from a name made once, and the
//! refused request is kept for the producer's next one.

use std::sync::Arc;
use std::time::Duration;

use naobroker_alloc_counter::{counted, start_counting, Counting};
use naobroker_backend_sim::SimRobot;
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{ChannelError, ClockMode, CycleConfig, CycleThread, DcmSlots, StartedCycle};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const CAPACITY: usize = 64;

#[test]
fn a_refused_request_costs_no_allocation_and_is_reused() {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config = CycleConfig {
        priority: 0,
        clock: ClockMode::Manual,
        start_time_ms: 0,
        buffer_capacity: CAPACITY,
        producers: &["DCM", "ALMotion"],
        ..CycleConfig::default()
    };
    let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } = CycleThread::start(
        Arc::clone(&model),
        Box::new(SimRobot::new(&model)),
        RtSlots::new(layout),
        dcm_slots,
        &config,
    )
    .unwrap();
    let mut dcm = channels.take("DCM").unwrap();
    let mut motion = channels.take("ALMotion").unwrap();
    let head = model.actuator("HeadYaw/Position/Actuator/Value").unwrap();
    // HeadYaw's buffer full of the DCM module's commands, far in the future, published by
    // one cycle.
    let mut fill = Request::default();
    fill.push(head, UpdateType::Merge, (0..CAPACITY).map(|n| command(1_000_000 + n as i32)).collect());
    dcm.send(fill).unwrap();
    let shared = Arc::clone(cycle.shared());
    assert!(shared.step_blocking(1, Duration::from_secs(20)), "the DCM did not cycle");
    motion.keep_requests(1, 4);

    let mut refusals = Vec::with_capacity(3);
    start_counting();
    for _ in 0..3 {
        let mut request = motion.reusable_request();
        request.push_command(head, UpdateType::Merge, command(500));
        refusals.push(motion.send(request));
    }
    let allocations = counted();

    assert_eq!(allocations, 0, "allocations or frees while refused three times");
    for refusal in refusals {
        let Err(ChannelError::Overflow(overflow)) = refusal else { panic!("{refusal:?}") };
        assert_eq!(&*overflow.actuator, "Device/SubDeviceList/HeadYaw/Position/Actuator/Value");
        assert_eq!((overflow.would_hold, overflow.capacity), (CAPACITY + 1, CAPACITY));
    }
}

fn command(time: i32) -> TimedCommand {
    TimedCommand { time, value: 0.1 }
}
