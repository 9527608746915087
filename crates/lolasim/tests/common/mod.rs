//! A raw LoLA client on a Unix stream socket, and fresh socket paths, for the simulator's
//! tests.
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use naobroker_lola::{
    decode_sensor_map, encode_actuator_map, ActuatorKeys, ActuatorMap, SensorMap, ACTUATOR_MAP_MAX_BYTES,
    SENSOR_MAP_BYTES,
};

/// How long a test waits for anything before it fails: generous, it returns at once when
/// the condition holds.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A socket path of its own for the test `name`, in a fresh directory.
pub fn socket_path(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("lolasim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory.join("robocup")
}

pub struct Client {
    pub stream: UnixStream,
}

impl Client {
    /// Connect, retrying while the simulator is not listening yet (or restarting).
    pub fn connect(path: &Path) -> Client {
        let end = Instant::now() + PATIENCE;
        loop {
            match UnixStream::connect(path) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(PATIENCE)).unwrap();
                    return Client { stream };
                }
                Err(error) if Instant::now() < end => {
                    let _ = error;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(error) => panic!("cannot connect to {}: {error}", path.display()),
            }
        }
    }

    /// Read exactly one sensor map's 896 bytes and decode them: the map and the bytes.
    pub fn read_map(&mut self) -> (SensorMap, [u8; SENSOR_MAP_BYTES]) {
        let mut wire = [0u8; SENSOR_MAP_BYTES];
        self.stream.read_exact(&mut wire).expect("a sensor map");
        let mut map = SensorMap::default();
        let decoded = decode_sensor_map(&wire, &mut map).expect("a valid sensor map");
        assert_eq!(decoded.consumed, SENSOR_MAP_BYTES, "the map is exactly 896 bytes");
        (map, wire)
    }

    pub fn answer(&mut self, map: &ActuatorMap) {
        let mut wire = [0u8; ACTUATOR_MAP_MAX_BYTES];
        let written = encode_actuator_map(map, ActuatorKeys::ALL, &mut wire);
        self.stream.write_all(&wire[..written]).unwrap();
    }

    /// True when no byte waits to be read.
    pub fn nothing_pending(&self) -> bool {
        self.stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let pending = (&self.stream).read(&mut byte);
        self.stream.set_nonblocking(false).unwrap();
        matches!(pending, Err(error) if error.kind() == ErrorKind::WouldBlock)
    }

    /// True once the simulator closed the connection (end of file).
    pub fn closed(&mut self) -> bool {
        let mut byte = [0u8; SENSOR_MAP_BYTES];
        loop {
            match self.stream.read(&mut byte) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(error) if error.kind() == ErrorKind::ConnectionReset => return true,
                Err(error) => panic!("no end of file within the patience: {error}"),
            }
        }
    }
}

/// Commands holding every joint at `position` with full stiffness.
pub fn hold(position: f32) -> ActuatorMap {
    ActuatorMap { position: [position; 25], stiffness: [1.0; 25], ..ActuatorMap::default() }
}
