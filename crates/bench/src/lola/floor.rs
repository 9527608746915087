//! The floor of `naobench lola`: a bare LoLA client thread that reads each 896-byte sensor
//! map and answers at once with one actuator map encoded before the first (every key, as
//! naobroker sends): the best any LoLA client can do on this machine. `naobench physics`
//! steps the simulators against it, answering a stand-up encoded before the first map.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use naobroker_lola::{
    encode_actuator_map, ActuatorKeys, ActuatorMap, ACTUATOR_MAP_MAX_BYTES, SENSOR_MAP_BYTES,
};
use naobroker_rt::{make_realtime, ThreadSpec};

use super::PATIENCE;

/// The client's thread, answering until stopped.
pub struct FloorClient {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<bool>,
}

impl FloorClient {
    /// Connect to `socket` from a thread of its own (SCHED_FIFO at `priority`, if one is
    /// given; on the caller's CPUs) and answer the maps with `answers` in turn, every map
    /// after them with the last.
    pub fn start(socket: &Path, priority: Option<u8>, answers: &[ActuatorMap]) -> FloorClient {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let socket = socket.to_owned();
        let answers = answers.to_vec();
        let thread = std::thread::Builder::new()
            .name("lola-floor".into())
            .spawn(move || answer_every_map(&socket, priority, &answers, &flag))
            .expect("start the floor client");
        FloorClient { stop, thread }
    }

    /// Stop answering and disconnect; whether the thread ran SCHED_FIFO.
    pub fn stop(self) -> bool {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the floor client ends")
    }
}

fn answer_every_map(
    socket: &Path,
    priority: Option<u8>,
    commands: &[ActuatorMap],
    stop: &AtomicBool,
) -> bool {
    let spec = ThreadSpec {
        name: "lola-floor",
        role: "LoLA floor client",
        priority,
        cpu: None,
        keep_cpu_awake: false,
        mlock: false,
    };
    let fifo = make_realtime(&spec).fifo;
    let encoded: Vec<Vec<u8>> = commands
        .iter()
        .map(|commands| {
            let mut answer = [0u8; ACTUATOR_MAP_MAX_BYTES];
            let length = encode_actuator_map(commands, ActuatorKeys::ALL, &mut answer);
            answer[..length].to_vec()
        })
        .collect();
    let (last, ahead) = encoded.split_last().expect("at least one answer");
    let mut answers = ahead.iter().chain(std::iter::repeat(last));
    let mut stream = connect(socket);
    // Maps come every 12 ms: a second of silence means the simulator is gone.
    stream.set_read_timeout(Some(Duration::from_secs(1))).expect("a read timeout");
    let mut map = [0u8; SENSOR_MAP_BYTES];
    while !stop.load(Ordering::Relaxed) {
        let answer = answers.next().expect("the last answer repeats");
        if stream.read_exact(&mut map).is_err() || stream.write_all(answer).is_err() {
            break;
        }
    }
    fifo
}

fn connect(socket: &Path) -> UnixStream {
    let started = Instant::now();
    loop {
        match UnixStream::connect(socket) {
            Ok(stream) => return stream,
            Err(error) => {
                let waited = started.elapsed();
                assert!(waited < PATIENCE, "the floor cannot connect to {}: {error}", socket.display());
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}
