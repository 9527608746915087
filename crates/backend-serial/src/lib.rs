//! The `serial` backend: one frame out and one frame in per cycle to a motor/LED
//! board, over a serial port. Frames are described in `docs/serial.md`.
//!
//! The port is driven by its own thread: the cycle thread only writes the cycle's
//! actuator integers into a seqlocked mailbox and reads the newest sensor values from
//! another, so a slow, missing or unplugged board never stretches the cycle. Sensors
//! and actuators hold their last values meanwhile; errors are counted (`HAL/Error`)
//! and logged when the link changes state; the port is reopened until it answers.

pub mod emulator;
pub mod frame;

use frame::{Frame, SENSORS, STATUS_ACK};

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use naobroker_hardware::time::DcmTime;
use naobroker_hardware::{AnswerCounts, Hardware, LinkStatus};
use serde::Deserialize;

/// `[dcm.serial]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SerialConfig {
    pub port: String,
    pub baud: u32,
    /// How long one exchange (frame out, reply in) may take.
    pub reply_timeout_ms: u64,
    /// Pause between attempts to open a missing port.
    pub reopen_ms: u64,
}

impl Default for SerialConfig {
    fn default() -> Self {
        SerialConfig { port: "/dev/ttyACM0".into(), baud: 1_000_000, reply_timeout_ms: 5, reopen_ms: 500 }
    }
}

/// A mailbox of numbers with a sequence lock: one writer, readers retry on a torn read.
struct Mailbox {
    sequence: AtomicU32,
    time: AtomicI32,
    values: Box<[AtomicU64]>,
    flags: Box<[AtomicBool]>,
}

impl Mailbox {
    fn new(values: usize, flags: usize) -> Mailbox {
        Mailbox {
            sequence: AtomicU32::new(0),
            time: AtomicI32::new(0),
            values: (0..values).map(|_| AtomicU64::new(0)).collect(),
            flags: (0..flags).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    fn write(&self, time: DcmTime, values: impl Iterator<Item = u64>, flags: &[bool]) {
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(sequence.wrapping_add(1), Ordering::Release);
        std::sync::atomic::fence(Ordering::Release);
        self.time.store(time, Ordering::Relaxed);
        for (slot, value) in self.values.iter().zip(values) {
            slot.store(value, Ordering::Relaxed);
        }
        for (slot, &flag) in self.flags.iter().zip(flags) {
            slot.store(flag, Ordering::Relaxed);
        }
        self.sequence.store(sequence.wrapping_add(2), Ordering::Release);
    }

    /// Copy out a consistent snapshot; `None` when the writer kept interfering.
    fn read(&self, values: &mut [u64], flags: &mut [bool]) -> Option<(u32, DcmTime)> {
        for _ in 0..4 {
            let before = self.sequence.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let time = self.time.load(Ordering::Relaxed);
            for (value, slot) in values.iter_mut().zip(self.values.iter()) {
                *value = slot.load(Ordering::Relaxed);
            }
            for (flag, slot) in flags.iter_mut().zip(self.flags.iter()) {
                *flag = slot.load(Ordering::Relaxed);
            }
            std::sync::atomic::fence(Ordering::Acquire);
            if self.sequence.load(Ordering::Relaxed) == before {
                return Some((before, time));
            }
        }
        None
    }
}

struct Link {
    actuators: Mailbox,
    sensors: Mailbox,
    ack: AtomicU64,
    nack: AtomicU64,
    errors: AtomicU64,
    /// Frames the board did not acknowledge: not sent (no port), unanswered, refused.
    unanswered: AtomicU64,
    stop: AtomicBool,
    io_thread: OnceLock<Thread>,
}

/// The serial board as the DCM's hardware.
pub struct SerialBoard {
    link: Arc<Link>,
    sensor_bits: Vec<u64>,
    no_flags: Vec<bool>,
    last_sensor_sequence: u32,
    /// `ack` and `unanswered` as last counted into the actuators' answers.
    counted: (u64, u64),
    io: Option<JoinHandle<()>>,
}

impl SerialBoard {
    /// Start the I/O thread for `sensors` sensors and `actuators` actuators. The port
    /// is opened by that thread; a missing board is not an error here.
    pub fn start(config: SerialConfig, actuators: usize, sensors: usize) -> std::io::Result<SerialBoard> {
        let link = Arc::new(Link {
            actuators: Mailbox::new(actuators, actuators),
            sensors: Mailbox::new(sensors, 0),
            ack: AtomicU64::new(0),
            nack: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            unanswered: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            io_thread: OnceLock::new(),
        });
        let io_link = Arc::clone(&link);
        let io = thread::Builder::new()
            .name("serial-io".into())
            .spawn(move || SerialIo::new(config, io_link, actuators, sensors).run())?;
        let _ = link.io_thread.set(io.thread().clone());
        Ok(SerialBoard {
            link,
            sensor_bits: vec![0; sensors],
            no_flags: Vec::new(),
            last_sensor_sequence: 0,
            counted: (0, 0),
            io: Some(io),
        })
    }
}

impl Drop for SerialBoard {
    fn drop(&mut self) {
        self.link.stop.store(true, Ordering::Release);
        if let Some(io) = self.io.take() {
            io.thread().unpark();
            let _ = io.join();
        }
    }
}

impl Hardware for SerialBoard {
    fn read_sensors(&mut self, _time: DcmTime, sensors: &mut [f64]) {
        if let Some((sequence, _)) = self.link.sensors.read(&mut self.sensor_bits, &mut self.no_flags) {
            if sequence != self.last_sensor_sequence {
                self.last_sensor_sequence = sequence;
                for (value, bits) in sensors.iter_mut().zip(&self.sensor_bits) {
                    *value = f64::from_bits(*bits);
                }
            }
        }
    }

    fn write_actuators(&mut self, time: DcmTime, _values: &[f64], raw: &[i64], fired: &[bool]) {
        self.link.actuators.write(time, raw.iter().map(|&r| r as u64), fired);
        if let Some(io) = self.link.io_thread.get() {
            io.unpark();
        }
    }

    /// One frame carries every actuator: each counts the board's answers to the frames.
    fn count_answers(&mut self, answers: &mut AnswerCounts) {
        let answered = self.link.ack.load(Ordering::Relaxed);
        let unanswered = self.link.unanswered.load(Ordering::Relaxed);
        answers.add_to_every(answered - self.counted.0, unanswered - self.counted.1);
        self.counted = (answered, unanswered);
    }

    fn link(&self) -> LinkStatus {
        LinkStatus {
            ack: self.link.ack.load(Ordering::Relaxed),
            nack: self.link.nack.load(Ordering::Relaxed),
            errors: self.link.errors.load(Ordering::Relaxed),
        }
    }
}

/// The I/O thread's side: owns the port.
struct SerialIo {
    config: SerialConfig,
    link: Arc<Link>,
    port: Option<Box<dyn serialport::SerialPort>>,
    raw: Vec<u64>,
    fired: Vec<bool>,
    sensors: Vec<u64>,
    sequence: u8,
    last_sent: u32,
    last_attempt: Option<Instant>,
    healthy: bool,
    out: Vec<u8>,
    incoming: Vec<u8>,
}

impl SerialIo {
    fn new(config: SerialConfig, link: Arc<Link>, actuators: usize, sensors: usize) -> SerialIo {
        SerialIo {
            config,
            link,
            port: None,
            raw: vec![0; actuators],
            fired: vec![false; actuators],
            sensors: vec![0; sensors],
            sequence: 0,
            last_sent: 0,
            last_attempt: None,
            healthy: true,
            out: Vec::with_capacity(16 + actuators * 4),
            incoming: Vec::with_capacity(64 + sensors * 4),
        }
    }

    fn run(mut self) {
        while !self.link.stop.load(Ordering::Acquire) {
            thread::park_timeout(Duration::from_millis(100));
            let Some((sequence, time)) = self.link.actuators.read(&mut self.raw, &mut self.fired) else {
                continue;
            };
            if sequence == self.last_sent {
                continue;
            }
            self.last_sent = sequence;
            if self.port.is_none() && !self.open() {
                self.link.unanswered.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            // Only this thread counts acks: unchanged after the exchange, it was not acked.
            let acked = self.link.ack.load(Ordering::Relaxed);
            let exchanged = self.exchange(time);
            if self.link.ack.load(Ordering::Relaxed) == acked {
                self.link.unanswered.fetch_add(1, Ordering::Relaxed);
            }
            match exchanged {
                Ok(()) => self.set_healthy(true, "board answering"),
                Err(error) => {
                    self.link.errors.fetch_add(1, Ordering::Relaxed);
                    if error.kind() != std::io::ErrorKind::TimedOut {
                        self.port = None;
                    }
                    self.set_healthy(false, &error.to_string());
                }
            }
        }
    }

    fn set_healthy(&mut self, healthy: bool, why: &str) {
        if healthy != self.healthy {
            self.healthy = healthy;
            if healthy {
                tracing::info!(port = %self.config.port, "serial board link restored");
            } else {
                let port = &self.config.port;
                tracing::warn!(%port, why, "serial board link lost: actuators and sensors hold");
            }
        }
    }

    fn open(&mut self) -> bool {
        let now = Instant::now();
        if self
            .last_attempt
            .is_some_and(|at| now.duration_since(at) < Duration::from_millis(self.config.reopen_ms))
        {
            return false;
        }
        self.last_attempt = Some(now);
        match serialport::new(&self.config.port, self.config.baud)
            .timeout(Duration::from_millis(self.config.reply_timeout_ms))
            .open()
        {
            Ok(port) => {
                self.port = Some(port);
                true
            }
            Err(error) => {
                self.link.errors.fetch_add(1, Ordering::Relaxed);
                self.set_healthy(false, &error.to_string());
                false
            }
        }
    }

    fn exchange(&mut self, time: DcmTime) -> std::io::Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        self.out.clear();
        frame::encode_actuators(&mut self.out, self.sequence, time, &self.raw, &self.fired);
        let port = self.port.as_mut().expect("opened");
        port.write_all(&self.out)?;
        port.flush()?;
        let deadline = Instant::now() + Duration::from_millis(self.config.reply_timeout_ms);
        self.incoming.clear();
        loop {
            match Frame::parse(&self.incoming) {
                Ok(Some((reply, used))) => {
                    let result = accept(&self.link, &mut self.sensors, self.sequence, &reply);
                    self.incoming.drain(..used);
                    return result;
                }
                Ok(None) => {}
                Err(error) => {
                    self.incoming.clear();
                    self.link.nack.fetch_add(1, Ordering::Relaxed);
                    return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, error.to_string()));
                }
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "no reply from the board"));
            }
            let mut chunk = [0u8; 512];
            let port = self.port.as_mut().expect("opened");
            match port.read(&mut chunk) {
                Ok(0) => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "port closed")),
                Ok(n) => self.incoming.extend_from_slice(&chunk[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {}
                Err(error) => return Err(error),
            }
        }
    }
}

/// Check a reply to frame `sequence` and publish its sensor values.
fn accept(link: &Link, sensors: &mut [u64], sequence: u8, reply: &Frame<'_>) -> std::io::Result<()> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    if reply.kind != SENSORS {
        return Err(bad("the board answered a frame that is not SENSORS"));
    }
    let (acked, status, values) = frame::decode_sensors(reply.payload).map_err(|e| bad(&e.to_string()))?;
    if acked != sequence {
        link.nack.fetch_add(1, Ordering::Relaxed);
        return Err(bad("the board acknowledged another sequence number"));
    }
    if status != STATUS_ACK {
        link.nack.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    }
    link.ack.fetch_add(1, Ordering::Relaxed);
    for (slot, value) in sensors.iter_mut().zip(values) {
        *slot = f64::from(value).to_bits();
    }
    link.sensors.write(0, sensors.iter().copied(), &[]);
    Ok(())
}
