//! The `Foxglove` module: which ALMemory keys `/memory` shows, chosen by a client at run time
//! (bounded as the configuration is), and the live view's counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use naobroker_framework::{CallError, Methods, Module, Value};
use thiserror::Error;

use crate::bounds::{MAX_KEYS, MAX_KEY_BYTES};
use crate::gate::Door;

/// What the live view counts.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// DCM cycles written to the viewers.
    pub(crate) cycles_sent: AtomicU64,
    /// DCM cycles that passed between two looks of the view's thread (a viewer sees the
    /// latest cycle; a recording has them all).
    pub(crate) cycles_skipped: AtomicU64,
    /// Log lines not shown on `/log` because the view raised them itself (its server's lines
    /// about a viewer would otherwise go to that viewer, and feed themselves).
    pub(crate) own_log_lines: AtomicU64,
}

/// The keys `/memory` shows, shared with the view's thread.
pub(crate) type SharedKeys = Arc<Mutex<Vec<String>>>;

pub struct FoxgloveModule {
    pub(crate) keys: SharedKeys,
    pub(crate) counters: Arc<Counters>,
    pub(crate) door: Arc<Door>,
}

/// A list of keys `setKeys` or `[foxglove] keys` does not take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeysError {
    #[error("{0} keys, at most {MAX_KEYS}")]
    TooMany(usize),
    /// `shown` is the key's first 40 characters.
    #[error("key {shown:?}: a key has 1 to {MAX_KEY_BYTES} bytes")]
    BadLength { shown: String },
}

/// Keys as `setKeys` and `[foxglove] keys` take them: at most [`MAX_KEYS`], each a non-empty
/// name of at most [`MAX_KEY_BYTES`].
pub(crate) fn check_keys(keys: &[String]) -> Result<(), KeysError> {
    if keys.len() > MAX_KEYS {
        return Err(KeysError::TooMany(keys.len()));
    }
    if let Some(key) = keys.iter().find(|key| key.is_empty() || key.len() > MAX_KEY_BYTES) {
        return Err(KeysError::BadLength { shown: key.chars().take(40).collect() });
    }
    Ok(())
}

fn lock(keys: &SharedKeys) -> std::sync::MutexGuard<'_, Vec<String>> {
    keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Module for FoxgloveModule {
    fn name(&self) -> String {
        "Foxglove".into()
    }

    fn description(&self) -> String {
        "The Foxglove live view (docs/visualisation.md): the ALMemory keys its /memory channel shows, \
         and its counters."
            .into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "setKeys",
            "setKeys([key, ...]): the ALMemory keys /memory shows from now on (at most 64).",
            |this, _, (keys,): (Vec<String>,)| {
                check_keys(&keys).map_err(|error| CallError::bad_argument(error.to_string()))?;
                *lock(&this.keys) = keys;
                Ok(())
            },
        )
        .add("getKeys", "The ALMemory keys /memory shows.", |this, _, ()| Ok(lock(&this.keys).clone()))
        .add(
            "stats",
            "The live view's counters: DCM cycles sent and skipped, each viewer connected (address, \
             messages sent and dropped), messages dropped in all, viewers refused and cut off, the view's \
             own log lines kept off /log.",
            |this, _, ()| {
                let counters = &this.counters;
                let count = |counter: &AtomicU64| Value::from(counter.load(Ordering::Relaxed));
                let mut stats = vec![
                    ("cycles_sent".into(), count(&counters.cycles_sent)),
                    ("cycles_skipped".into(), count(&counters.cycles_skipped)),
                    ("own_log_lines".into(), count(&counters.own_log_lines)),
                ];
                stats.extend(this.door.stats());
                Ok(Value::Map(stats))
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_in_number_and_size() {
        assert!(check_keys(&["Device/SubDeviceList/HeadYaw/Position/Sensor/Value".into()]).is_ok());
        let many = vec!["A".to_owned(); MAX_KEYS + 1];
        assert_eq!(check_keys(&many).unwrap_err().to_string(), "65 keys, at most 64");
        assert!(check_keys(&["".into()]).unwrap_err().to_string().contains("1 to 256 bytes"));
        assert!(check_keys(&["x".repeat(MAX_KEY_BYTES + 1)]).is_err());
    }
}
