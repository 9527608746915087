//! The live view's bounds: what a configuration may ask of it.

/// User-chosen ALMemory keys on `/memory` at most.
pub const MAX_KEYS: usize = 64;
/// Events with a channel of their own at most.
pub const MAX_EVENTS: usize = 64;
/// The fastest `/memory` is written (per second): ALMemory's keys are read on the view's
/// thread, one lookup each.
pub const MAX_KEYS_RATE_HZ: f64 = 50.0;
/// The longest ALMemory key `/memory` takes, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// The most viewers `[foxglove] max_viewers` may let in at once.
pub const MAX_VIEWERS: usize = 256;
/// Bytes a viewer's queue holds at most, beside `[foxglove] viewer_queue` messages.
pub const VIEWER_QUEUE_BYTES: usize = 8 << 20;
/// The largest WebSocket frame relayed to a viewer; a viewer sent a larger one is cut off
/// (the view's largest are the channels' advertisements and the robot description, well below).
pub const MAX_FRAME_BYTES: usize = 16 << 20;
/// The largest frame, and the largest message, a viewer may send; a viewer sending a larger
/// one is cut off (Foxglove's requests are small JSON: subscribe, unsubscribe, ...).
pub(crate) const MAX_VIEWER_MESSAGE_BYTES: usize = 64 << 10;
/// The longest `[foxglove] viewer_patience_s`, in seconds.
pub(crate) const MAX_VIEWER_PATIENCE_S: u64 = 3600;
