//! Proof that the cycle thread does not allocate (nor free) in steady state while
//! requests, hooks and sensor forcing flow through it, with both clocks (the `lola`
//! backend clocking it: `naobroker-backend-lola`'s own test).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
use naobroker_backend_sim::SimRobot;
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{
    ClockMode, CycleConfig, CycleThread, DcmSlots, Phase, RequestChannel, StartedCycle,
};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

/// The cycle thread's count, copied out by its hooks every cycle.
static CYCLE_THREAD_COUNT: AtomicU64 = AtomicU64::new(0);

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Count on the cycle thread from inside: its hooks run on it; the preProcess one also
/// sets a stiffness from a sensor read through fast access, every cycle.
fn add_counting_hooks(channel: &mut RequestChannel, model: &DeviceModel, slots: &Arc<RtSlots>) {
    let stiffness = model.actuator("HeadYaw/Hardness/Actuator/Value").unwrap();
    let fast = slots.fast_access(&["Device/SubDeviceList/HeadYaw/Position/Sensor/Value"]).unwrap();
    channel
        .add_hook(
            Phase::Pre,
            "count",
            Box::new(move |context| {
                start_counting();
                CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst);
                let position = fast.get(0);
                context.set(stiffness, if position.abs() > 10.0 { 0.0 } else { 1.0 });
            }),
        )
        .unwrap();
    channel
        .add_hook(Phase::Post, "count", Box::new(|_| CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst)))
        .unwrap();
}

/// A request of 20 timed commands for `actuator` from `now` on.
fn request(actuator: usize, now: i32, merge: bool) -> Request {
    let mut request = Request::default();
    let commands = (1..=20).map(|i| TimedCommand { time: now + 5 * i, value: 0.01 * f64::from(i) }).collect();
    request.push(actuator, if merge { UpdateType::Merge } else { UpdateType::ClearAfter }, commands);
    request
}

fn run(clock: ClockMode) -> u64 {
    CYCLE_THREAD_COUNT.store(0, Ordering::SeqCst);
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let slots = RtSlots::new(layout);
    let config =
        CycleConfig { period_us: 1000, priority: 0, clock, start_time_ms: 1000, ..CycleConfig::default() };
    let hardware = Box::new(SimRobot::new(&model));
    let StartedCycle { thread: cycle, mut channels, mut reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, Arc::clone(&slots), dcm_slots, &config).unwrap();
    let mut channel = channels.take("DCM").unwrap();
    let head = model.actuator("HeadYaw/Position/Actuator/Value").unwrap();
    add_counting_hooks(&mut channel, &model, &slots);
    let sensor = model.sensor("InertialSensor/AngleX/Sensor/Value").unwrap();
    let shared = Arc::clone(cycle.shared());
    let started = Instant::now();
    let mut sent = 0;
    while shared.cycles() < 400 && started.elapsed() < Duration::from_secs(20) {
        if channel.send(request(head, shared.now(), sent % 2 == 0)).is_ok() {
            sent += 1;
        }
        if sent % 10 == 0 {
            channel.force_sensor(sensor, Some(0.1)).unwrap();
        }
        if clock == ClockMode::Manual {
            shared.grant(2);
        }
        while reports.pop().is_ok() {}
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(shared.cycles() >= 400, "the cycle ran {} times", shared.cycles());
    assert!(sent > 100, "requests flowed while the cycle ran ({sent})");
    assert_eq!(shared.stats.refused.load(Ordering::Relaxed), 0);
    // Read before stopping the thread: its shutdown frees its buffers, as it should.
    let allocations = CYCLE_THREAD_COUNT.load(Ordering::SeqCst);
    drop(cycle);
    allocations
}

#[test]
fn the_cycle_thread_does_not_allocate_in_steady_state() {
    assert_eq!(run(ClockMode::Manual), 0, "allocations on the cycle thread (manual clock)");
    assert_eq!(run(ClockMode::Real), 0, "allocations on the cycle thread (real clock, 1 ms)");
}

/// The probe itself must see an allocation when one happens on the watched thread,
/// or the test above could not fail.
#[test]
fn the_probe_sees_allocations_on_the_watched_thread() {
    assert!(allocations_seen_on_a_new_thread() >= 2);
}
