//! Proof that the ALSensors hook does not allocate (nor free) on the DCM cycle thread
//! while every kind of sensor it watches changes and it queues records.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
use naobroker_backend_sim::SimRobot;
use naobroker_dcm::cycle::{ClockMode, CycleConfig, CycleThread, DcmSlots, RequestChannel, StartedCycle};
use naobroker_dcm_module::DcmHandle;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;
use naobroker_sensors::catalog::Key;

/// The cycle thread's count, copied out by the hooks around ALSensors' every cycle.
static CYCLE_THREAD_COUNT: AtomicU64 = AtomicU64::new(0);

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A manual-clock DCM on the simulated NAO, and a channel to force its sensors.
struct Bench {
    cycle: CycleThread,
    forcing: RequestChannel,
    model: Arc<DeviceModel>,
}

impl Bench {
    fn force(&mut self, sensor: &str, value: f64) {
        let index = self.model.sensor(&format!("{sensor}/Sensor/Value")).unwrap();
        self.forcing.force_sensor(index, Some(value)).unwrap();
    }

    fn step(&self, n: u64) {
        let shared = self.cycle.shared();
        assert!(shared.step_blocking(n, Duration::from_secs(20)), "the cycle stopped at {}", shared.cycles());
    }
}

fn start() -> (Bench, DcmHandle) {
    let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
    let (layout, dcm_slots) = DcmSlots::layout(&model);
    let config = CycleConfig {
        priority: 0,
        clock: ClockMode::Manual,
        start_time_ms: 0,
        producers: &["DCM", "forcing"],
        ..CycleConfig::default()
    };
    let hardware = Box::new(SimRobot::new(&model));
    let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } =
        CycleThread::start(Arc::clone(&model), hardware, RtSlots::new(layout), dcm_slots, &config).unwrap();
    let forcing = channels.take("forcing").unwrap();
    let dcm = DcmHandle::new(channels.take("DCM").unwrap());
    (Bench { cycle, forcing, model }, dcm)
}

/// Press, hold and release every watched sensor; each phase outlasts every debounce.
fn exercise(bench: &mut Bench) {
    let phases: [(&str, f64, f64); 9] = [
        ("Head/Touch/Front", 1.0, 0.0),
        ("RHand/Touch/Left", 1.0, 0.0),
        ("LFoot/Bumper/Right", 1.0, 0.0),
        ("US/Left", 0.3, 0.9),
        ("LFoot/FSR/FrontLeft", 3.0, 0.0),
        ("RFoot/FSR/RearRight", 3.0, 0.0),
        ("Battery/Charge", 0.05, 0.9),
        ("Battery/Current", 0.5, -1.0),
        ("ChestBoard/Button", 1.0, 0.0),
    ];
    for round in 0..4 {
        for &(sensor, on, off) in &phases {
            bench.force(sensor, if round % 2 == 0 { on } else { off });
        }
        bench.step(120);
    }
    for _ in 0..3 {
        bench.force("ChestBoard/Button", 1.0);
        bench.step(5);
        bench.force("ChestBoard/Button", 0.0);
        bench.step(5);
    }
    bench.step(60);
}

#[test]
fn the_sensor_hook_does_not_allocate_on_the_cycle_thread() {
    let (mut bench, dcm) = start();
    let _start = dcm
        .at_pre_process("count", |_| {
            start_counting();
            CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst);
        })
        .unwrap();
    let installed = naobroker_sensors::watch::install(&dcm).unwrap();
    let _end =
        dcm.at_post_process("count", |_| CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst)).unwrap();
    let mut records = installed.actor.records;
    let mut raised = Vec::new();
    bench.step(1);
    exercise(&mut bench);
    // Read before stopping the thread: its shutdown frees its buffers, as it should.
    let allocations = CYCLE_THREAD_COUNT.load(Ordering::SeqCst);
    while let Ok(record) = records.pop() {
        if record.raise && !raised.contains(&record.key) {
            raised.push(record.key);
        }
    }
    assert_eq!(installed.actor.stats.dropped.load(Ordering::Relaxed), 0);
    for key in [
        Key::FrontTactilTouched,
        Key::HandRightLeftTouched,
        Key::LeftBumperPressed,
        Key::ChestButtonPressed,
        Key::TripleClickOccurred,
        Key::SonarLeftDetected,
        Key::SonarLeftNothingDetected,
        Key::FootContactChanged,
        Key::BatteryChargeChanged,
        Key::BatteryLowDetected,
        Key::BatteryNearlyEmpty,
        Key::BatteryPowerPluggedChanged,
        Key::BatteryChargingFlagChanged,
    ] {
        assert!(raised.contains(&key), "the hook raised {key:?} while counted: {raised:?}");
    }
    assert_eq!(allocations, 0, "allocations on the cycle thread");
    drop(dcm);
    drop(bench);
}

/// The probe itself must see an allocation when one happens on the watched thread,
/// or the test above could not fail.
#[test]
fn the_probe_sees_allocations_on_the_watched_thread() {
    assert!(allocations_seen_on_a_new_thread() >= 2);
}
