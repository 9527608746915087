//! ALMemory's store: module data in a concurrent map beside the DCM's real-time slots, and
//! which keys belong to the DCM.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use dashmap::DashMap;
use naobroker_framework::Value;

use crate::slots::{RtSlots, SlotKind};

/// Keys only the DCM may write (seed 003: modules ask the DCM, never ALMemory); its
/// preferences (`RobotConfig/...`, `Device/DeviceList/...`) among them.
pub const DCM_OWNED_PREFIXES: [&str; 4] = ["Device/", "DCM/", "HAL/", "RobotConfig/"];

/// What kind of entry a key is (`getType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Data,
    Event,
    MicroEvent,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Data => "Data",
            EntryKind::Event => "Event",
            EntryKind::MicroEvent => "MicroEvent",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) value: Value,
    pub(crate) unix_us: u64,
    pub(crate) kind: EntryKind,
}

pub fn timestamp_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// ALMemory's data: a concurrent map for module data and the DCM's real-time slots.
/// Shared with every thread that reads memory in-process.
#[derive(Debug)]
pub struct Store {
    pub(crate) data: DashMap<String, Entry>,
    slots: Arc<RtSlots>,
}

impl Store {
    pub fn new(slots: Arc<RtSlots>) -> Arc<Store> {
        Arc::new(Store { data: DashMap::new(), slots })
    }

    pub fn slots(&self) -> &Arc<RtSlots> {
        &self.slots
    }

    pub fn is_dcm_owned(key: &str) -> bool {
        DCM_OWNED_PREFIXES.iter().any(|prefix| key.starts_with(prefix))
    }

    /// The value of a key: a real-time slot, or module data.
    pub fn get(&self, key: &str) -> Option<Value> {
        if let Some(index) = self.slots.layout().index_of(key) {
            let raw = self.slots.get(index);
            return Some(match self.slots.layout().kind(index) {
                SlotKind::Float => Value::F64(raw),
                SlotKind::Int => Value::from(raw as i64),
                SlotKind::Bool => Value::Boolean(raw != 0.0),
            });
        }
        self.data.get(key).map(|entry| entry.value.clone())
    }

    /// Unix time (µs) of the key's last write.
    pub fn timestamp(&self, key: &str) -> Option<u64> {
        if self.slots.layout().index_of(key).is_some() {
            return Some(self.slots.updated_us());
        }
        self.data.get(key).map(|entry| entry.unix_us)
    }

    pub fn kind(&self, key: &str) -> Option<EntryKind> {
        if self.slots.layout().index_of(key).is_some() {
            return Some(EntryKind::Data);
        }
        self.data.get(key).map(|entry| entry.kind)
    }

    /// Write module data; a key the DCM owns is refused. Events may live under the
    /// DCM's prefixes (`DCM/PostProcess`) as long as they are not one of its values.
    pub fn insert(&self, key: &str, value: Value, kind: EntryKind) -> Result<(), String> {
        let owned = match kind {
            EntryKind::Data => Store::is_dcm_owned(key),
            EntryKind::Event | EntryKind::MicroEvent => self.slots.layout().index_of(key).is_some(),
        };
        if owned {
            return Err(format!(
                "{key} is owned by DCM: send actuator commands with DCM.set, modules cannot write it"
            ));
        }
        let unix_us = timestamp_now();
        match self.data.get_mut(key) {
            Some(mut entry) => {
                entry.value = value;
                entry.unix_us = unix_us;
                if kind != EntryKind::Data {
                    entry.kind = kind;
                }
            }
            None => {
                self.data.insert(key.to_owned(), Entry { value, unix_us, kind });
            }
        }
        Ok(())
    }

    /// The DCM's own data (its preferences): a key it owns that is not a real-time slot.
    /// Only the DCM, holding the store in-process, calls this.
    pub fn insert_owned(&self, key: &str, value: Value) -> Result<(), String> {
        if !Store::is_dcm_owned(key) || self.slots.layout().index_of(key).is_some() {
            return Err(format!("{key} is not a key for the DCM's data"));
        }
        let entry = Entry { value, unix_us: timestamp_now(), kind: EntryKind::Data };
        self.data.insert(key.to_owned(), entry);
        Ok(())
    }

    /// Remove the DCM's own data (a preference that no longer exists).
    pub fn remove_owned(&self, key: &str) {
        if Store::is_dcm_owned(key) {
            self.data.remove(key);
        }
    }

    pub fn remove(&self, key: &str) -> Result<(), String> {
        let is_event = self.data.get(key).is_some_and(|entry| entry.kind != EntryKind::Data);
        if Store::is_dcm_owned(key) && !is_event {
            return Err(format!("{key} is owned by DCM and cannot be removed"));
        }
        self.data
            .remove(key)
            .map(|_| ())
            .ok_or_else(|| format!("no key named {}", naobroker_framework::excerpt(key)))
    }

    /// Every key, real-time slots first.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.slots.layout().names().map(str::to_owned).collect();
        keys.extend(self.data.iter().map(|entry| entry.key().clone()));
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::SlotLayout;

    #[test]
    fn the_dcm_writes_its_own_data_that_clients_cannot() {
        let mut layout = SlotLayout::new();
        layout.add("DCM/Time", SlotKind::Int);
        let store = Store::new(RtSlots::new(layout));
        store.insert_owned("RobotConfig/Body/Type", Value::from("NAO")).unwrap();
        assert_eq!(store.get("RobotConfig/Body/Type"), Some(Value::from("NAO")));
        assert!(store.insert("RobotConfig/Body/Type", Value::from("x"), EntryKind::Data).is_err());
        assert!(store.insert_owned("Mine/Key", Value::Nil).is_err(), "not a DCM key");
        assert!(store.insert_owned("DCM/Time", Value::Nil).is_err(), "a real-time slot");
        store.remove_owned("RobotConfig/Body/Type");
        assert_eq!(store.get("RobotConfig/Body/Type"), None);
    }
}
