//! Why the live view does not start.

use thiserror::Error;

use crate::bounds::{MAX_EVENTS, MAX_KEYS_RATE_HZ, MAX_VIEWERS, MAX_VIEWER_PATIENCE_S};

#[derive(Debug, Error)]
pub enum FoxgloveError {
    #[error("[foxglove] listen {0:?}: expected HOST:PORT, e.g. 127.0.0.1:8765")]
    BadAddress(String),
    #[error(
        "refusing to serve the Foxglove view on {0}: its WebSocket server has no authentication or \
         encryption, so it stays on loopback; from another machine, tunnel it: \
         ssh -L 8765:localhost:8765 nao@ROBOT, then open ws://localhost:8765 (docs/visualisation.md)"
    )]
    NotLoopback(String),
    #[error("[foxglove] keys: {0}")]
    Keys(#[from] crate::module::KeysError),
    #[error("[foxglove] events: {0} events, at most {MAX_EVENTS}")]
    TooManyEvents(usize),
    #[error("[foxglove] keys_rate_hz {0}: expected more than 0 and at most {MAX_KEYS_RATE_HZ}")]
    KeysRate(f64),
    #[error("[foxglove] viewer_queue: at least 1 message")]
    ViewerQueue,
    #[error("[foxglove] max_viewers {0}: expected 1 to {MAX_VIEWERS}")]
    MaxViewers(usize),
    #[error("[foxglove] viewer_patience_s {0}: expected 1 to {MAX_VIEWER_PATIENCE_S} seconds")]
    ViewerPatience(u64),
    #[error("the robot description has no URDF: {0}")]
    Model(#[from] naobroker_urdf::UrdfError),
    #[error("the robot description's kinematic model: {0}")]
    Kinematics(#[from] naobroker_kinematics::ModelError),
    #[error("the live view's keys: {0}")]
    RealTimeKeys(#[from] naobroker_rtslots::NotRealTimeKey),
    #[error("cannot start the Foxglove server: {0}")]
    Server(String),
}
