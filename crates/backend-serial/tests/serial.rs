//! The serial backend against the board emulator on a pseudo-terminal: frames both
//! ways, ACK/NACK counted, the board unplugged mid-run and plugged back.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_backend_serial::emulator::Emulator;
use naobroker_backend_serial::{SerialBoard, SerialConfig};
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{
    ClockMode, CycleConfig, CycleThread, DcmSlots, RequestChannel, Shared, StartedCycle,
};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;
use serialport::{SerialPort, TTYPort};

/// A board on a fresh pty, reachable through the symlink `link` (what a udev rule
/// gives a real board: the same name whenever it is plugged in).
fn plug(link: &Path, sensors: usize, nack_every: Option<u64>) -> Emulator {
    let (master, slave) = TTYPort::pair().unwrap();
    let name = slave.name().unwrap();
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(name, link).unwrap();
    drop(slave);
    Emulator::start(Box::new(master) as Box<dyn SerialPort>, sensors, nack_every)
}

struct Bench {
    model: Arc<DeviceModel>,
    cycle: CycleThread,
    channel: RequestChannel,
    link: PathBuf,
}

impl Bench {
    fn new(label: &str, nack_every: Option<u64>) -> (Bench, Emulator) {
        let dir = std::env::temp_dir().join(format!("naobroker-serial-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("board");
        let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
        let emulator = plug(&link, model.sensors.len(), nack_every);
        let config = SerialConfig {
            port: link.display().to_string(),
            baud: 1_000_000,
            reply_timeout_ms: 100,
            reopen_ms: 20,
        };
        let board = SerialBoard::start(config, model.actuators.len(), model.sensors.len()).unwrap();
        let (layout, dcm_slots) = DcmSlots::layout(&model);
        let cycle_config =
            CycleConfig { priority: 0, clock: ClockMode::Manual, start_time_ms: 0, ..CycleConfig::default() };
        let StartedCycle { thread: cycle, mut channels, reports: _reports, wake: _wake } =
            CycleThread::start(
                Arc::clone(&model),
                Box::new(board),
                RtSlots::new(layout),
                dcm_slots,
                &cycle_config,
            )
            .unwrap();
        let channel = channels.take("DCM").unwrap();
        (Bench { model, cycle, channel, link }, emulator)
    }

    fn shared(&self) -> &Shared {
        self.cycle.shared()
    }

    fn slot(&self, key: &str) -> f64 {
        let shared = self.shared();
        shared.slots.get(shared.slots.layout().index_of(key).unwrap())
    }

    fn step(&self) {
        assert!(self.shared().step_blocking(1, Duration::from_secs(20)), "the cycle did not run");
    }

    /// Step cycles until `done` (the I/O thread works beside the cycle).
    fn step_until(&self, what: &str, done: impl Fn(&Bench) -> bool) {
        let started = Instant::now();
        while !done(self) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}: HAL/Ack {} HAL/Nack {} HAL/Error {}",
                self.slot("HAL/Ack"),
                self.slot("HAL/Nack"),
                self.slot("HAL/Error")
            );
            self.step();
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[test]
fn frames_flow_both_ways_and_the_link_survives_an_unplug() {
    let (mut bench, emulator) = Bench::new("plug", None);
    let head = bench.model.actuator("HeadYaw/Position/Actuator/Value").unwrap();
    let mut request = Request::default();
    request.push(head, UpdateType::ClearAll, vec![TimedCommand { time: 10, value: 0.5 }]);
    bench.channel.send(request).unwrap();
    bench.step_until("the board to get HeadYaw", |_| {
        emulator.observed.last_raw.lock().unwrap().get(head) == Some(&2048)
    });
    bench.step_until("sensor frames to come back", |b| b.slot("HAL/Ack") >= 3.0);
    let sensor = bench.model.sensor("Battery/Charge/Sensor/Value").unwrap();
    let reported = bench.slot("Device/SubDeviceList/Battery/Charge/Sensor/Value") - sensor as f64 * 0.5;
    assert!(reported >= 1.0 && reported.fract() == 0.0, "the emulator's values arrived: {reported}");
    assert_eq!(bench.slot("HAL/Error"), 0.0);

    // Unplugged: cycles go on, values hold, errors are counted.
    drop(emulator);
    let errors_before = bench.slot("HAL/Error");
    let acks = bench.slot("HAL/Ack");
    let nacks = bench.slot("Device/SubDeviceList/HeadYaw/Position/Actuator/Nack");
    bench.step_until("errors to be counted", |b| b.slot("HAL/Error") > errors_before + 2.0);
    bench.step_until("frames the board did not answer to count as each actuator's Nack", |b| {
        b.slot("Device/SubDeviceList/HeadYaw/Position/Actuator/Nack") > nacks + 2.0
    });
    assert_eq!(bench.slot("Device/SubDeviceList/HeadYaw/Position/Actuator/Value"), 0.5, "actuators hold");
    let held = bench.slot("Device/SubDeviceList/Battery/Charge/Sensor/Value");
    assert!(held > 0.0, "sensors hold their last values");

    // Plugged back under the same name: the link recovers by itself.
    let emulator = plug(&bench.link, bench.model.sensors.len(), None);
    bench.step_until("the link to recover", |b| b.slot("HAL/Ack") > acks + 2.0);
    assert!(emulator.observed.frames.load(Ordering::Acquire) >= 2);
    let mut request = Request::default();
    request.push(
        head,
        UpdateType::ClearAll,
        vec![TimedCommand { time: bench.shared().now() + 10, value: -0.25 }],
    );
    bench.channel.send(request).unwrap();
    bench.step_until("the new command to reach the board", |_| {
        emulator.observed.last_raw.lock().unwrap().get(head) == Some(&-1024)
    });
    let _ = std::fs::remove_dir_all(bench.link.parent().unwrap());
}

#[test]
fn refused_frames_are_counted_as_nack() {
    let (bench, _emulator) = Bench::new("nack", Some(2));
    bench.step_until("acks and nacks", |b| b.slot("HAL/Ack") >= 3.0 && b.slot("HAL/Nack") >= 3.0);
    // One frame carries every actuator: each counts the board's answers to the frames.
    let yaw = "Device/SubDeviceList/HeadYaw/Position/Actuator";
    let led = "Device/SubDeviceList/ChestBoard/Led/Red/Actuator";
    bench.step_until("each actuator's acks and nacks", |b| {
        b.slot(&format!("{yaw}/Ack")) >= 3.0 && b.slot(&format!("{yaw}/Nack")) >= 3.0
    });
    // The manual clock: no cycle runs between these reads.
    let (ack, nack) = (bench.slot(&format!("{yaw}/Ack")), bench.slot(&format!("{yaw}/Nack")));
    assert_eq!((bench.slot(&format!("{led}/Ack")), bench.slot(&format!("{led}/Nack"))), (ack, nack));
    assert!(ack <= bench.slot("HAL/Ack"), "a frame is acked before the cycle counts it");
    let _ = std::fs::remove_dir_all(bench.link.parent().unwrap());
}
