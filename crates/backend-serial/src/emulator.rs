//! A board emulator for the serial protocol: the other end of a pty in tests, or of a
//! real port for bench work. It answers every ACTUATORS frame with a SENSORS frame.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use super::frame::{self, Frame};

/// What the emulator saw, for tests to check.
#[derive(Default)]
pub struct Observed {
    pub frames: AtomicU64,
    pub last_time: Mutex<i32>,
    pub last_raw: Mutex<Vec<i32>>,
    pub last_fired: Mutex<Vec<bool>>,
}

pub struct Emulator {
    pub observed: Arc<Observed>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Emulator {
    /// Serve `port`. Sensor `i` reports `i × 0.5 + frames received`, so tests can tell
    /// fresh values from stale ones; every `nack_every`-th frame is refused with NACK.
    pub fn start(
        mut port: Box<dyn serialport::SerialPort>,
        sensors: usize,
        nack_every: Option<u64>,
    ) -> Emulator {
        let observed = Arc::new(Observed::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopping) = (Arc::clone(&observed), Arc::clone(&stop));
        let thread = thread::spawn(move || {
            let mut incoming = Vec::new();
            let mut chunk = [0u8; 4096];
            let mut out = Vec::new();
            let mut own_sequence = 0u8;
            while !stopping.load(Ordering::Acquire) {
                match port.read(&mut chunk) {
                    Ok(n) if n > 0 => incoming.extend_from_slice(&chunk[..n]),
                    Ok(_) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::TimedOut => continue,
                    // A pty master reads EIO while no one has the other end open.
                    Err(_) => {
                        thread::sleep(std::time::Duration::from_millis(1));
                        continue;
                    }
                }
                loop {
                    let (acked, status) = match Frame::parse(&incoming) {
                        Ok(None) => break,
                        Ok(Some((request, used))) => {
                            let decoded = frame::decode_actuators(request.payload);
                            let sequence = request.sequence;
                            incoming.drain(..used);
                            let count = seen.frames.fetch_add(1, Ordering::AcqRel) + 1;
                            match decoded {
                                Ok((time, raw, fired)) if nack_every.is_none_or(|n| count % n != 0) => {
                                    *seen.last_time.lock().unwrap() = time;
                                    *seen.last_raw.lock().unwrap() = raw;
                                    *seen.last_fired.lock().unwrap() = fired;
                                    (sequence, frame::STATUS_ACK)
                                }
                                _ => (sequence, frame::STATUS_NACK),
                            }
                        }
                        Err(_) => {
                            incoming.clear();
                            (0, frame::STATUS_NACK)
                        }
                    };
                    let count = seen.frames.load(Ordering::Acquire);
                    let values: Vec<f32> = (0..sensors).map(|i| i as f32 * 0.5 + count as f32).collect();
                    out.clear();
                    own_sequence = own_sequence.wrapping_add(1);
                    frame::encode_sensors(&mut out, own_sequence, acked, status, &values);
                    let _ = port.write_all(&out).and_then(|_| port.flush());
                }
            }
        });
        Emulator { observed, stop, thread: Some(thread) }
    }
}

impl Drop for Emulator {
    /// Unplugging: the port closes with the thread.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
