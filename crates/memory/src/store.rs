//! ALMemory's store: module data in a concurrent map beside the DCM's real-time slots, which
//! keys belong to the DCM, and what the keys cost in total and per client (`[memory]`).

use std::sync::{Arc, Mutex};

use dashmap::mapref::entry::Entry as MapEntry;
use dashmap::DashMap;
use naobroker_framework::{encoded_size, ClientId, KeyedHasher, KeyedMap, Value};
use naobroker_rtslots::{timestamp_now, RtSlots, SlotKind};

use crate::aliases::Aliases;
use crate::error::StoreError;

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
    /// Whose share the entry counts toward (`None`: the broker's own code).
    writer: Option<ClientId>,
    /// What it counts: [`entry_bytes`].
    bytes: usize,
}

/// Bytes a key costs beside its name and its value: the entry and its slot in the map.
const ENTRY_OVERHEAD: usize = 64;

/// What a key costs toward `max_data_bytes`: its name, its value as MessagePack, the entry.
pub fn entry_bytes(key: &str, value: &Value) -> usize {
    key.len() + encoded_size(value) + ENTRY_OVERHEAD
}

/// ALMemory's totals over the keys clients and the broker's code write (the DCM's real-time
/// slots aside), and what one client may hold of each (`[memory]` in broker.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    pub max_keys: usize,
    pub max_data_bytes: usize,
    /// Percent of each total that the keys one client wrote may take.
    pub client_share_percent: usize,
}

impl StoreLimits {
    /// `percent` of `total`: one client's share.
    pub fn share(&self, total: usize) -> usize {
        total / 100 * self.client_share_percent + total % 100 * self.client_share_percent / 100
    }
}

/// Keys and bytes held, in total or by one client.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub keys: usize,
    pub bytes: usize,
}

/// What every writer holds. The broker's own writes count toward the totals, never refused.
#[derive(Debug, Default)]
struct Accounts {
    total: Usage,
    by_client: KeyedMap<ClientId, Usage>,
}

impl Accounts {
    /// Let `writer` replace `old` (a key's current cost, and whose it is; `None` for a new
    /// key) with `bytes`, when the totals and `writer`'s share allow it.
    fn charge(
        &mut self,
        limits: &StoreLimits,
        old: Option<(Option<&ClientId>, usize)>,
        writer: Option<&ClientId>,
        bytes: usize,
    ) -> Result<(), StoreError> {
        let (old_writer, old_bytes) = old.unwrap_or((None, 0));
        if let Some(client) = writer {
            let keys = self.total.keys + usize::from(old.is_none());
            let total_bytes = self.total.bytes - old_bytes + bytes;
            let mine = self.by_client.get(client).copied().unwrap_or_default();
            // A key the client wrote last is replaced in its own count.
            let (mine_keys, mine_bytes) = match old_writer == Some(client) {
                true => (mine.keys - 1, mine.bytes - old_bytes),
                false => (mine.keys, mine.bytes),
            };
            let (my_keys, my_bytes) = (mine_keys + 1, mine_bytes + bytes);
            check(keys, limits.max_keys, "max_keys", "keys")?;
            check(total_bytes, limits.max_data_bytes, "max_data_bytes", "bytes of keys and values")?;
            check_share(my_keys, limits.share(limits.max_keys), limits, "max_keys", "keys")?;
            let share = limits.share(limits.max_data_bytes);
            check_share(my_bytes, share, limits, "max_data_bytes", "bytes of keys and values")?;
        }
        if old.is_some() {
            self.release(old_writer, Usage { keys: 1, bytes: old_bytes });
        }
        self.total.keys += 1;
        self.total.bytes += bytes;
        if let Some(client) = writer {
            let mine = self.by_client.entry(client.clone()).or_default();
            mine.keys += 1;
            mine.bytes += bytes;
        }
        Ok(())
    }

    fn release(&mut self, writer: Option<&ClientId>, usage: Usage) {
        self.total.keys -= usage.keys;
        self.total.bytes -= usage.bytes;
        let Some(client) = writer else { return };
        if let Some(mine) = self.by_client.get_mut(client) {
            mine.keys -= usage.keys;
            mine.bytes -= usage.bytes;
            if mine.keys == 0 {
                self.by_client.remove(client);
            }
        }
    }
}

fn check(after: usize, limit: usize, name: &str, what: &str) -> Result<(), StoreError> {
    match after <= limit {
        true => Ok(()),
        false => Err(StoreError::Full {
            message: format!("ALMemory would hold {after} {what}, past {name} ({limit}): remove keys first"),
        }),
    }
}

fn check_share(
    after: usize,
    share: usize,
    limits: &StoreLimits,
    name: &str,
    what: &str,
) -> Result<(), StoreError> {
    match after <= share {
        true => Ok(()),
        false => Err(StoreError::Full {
            message: format!(
                "this client's keys would hold {after} {what}, past its share of {name} ({}% = {share}): \
                 remove some of its keys first",
                limits.client_share_percent
            ),
        }),
    }
}

fn owned_by_dcm(key: &str) -> StoreError {
    StoreError::OwnedByDcm { key: key.to_owned() }
}

fn cannot_remove(key: &str) -> StoreError {
    StoreError::CannotRemove { key: key.to_owned() }
}

fn no_key(key: &str) -> StoreError {
    StoreError::NoKey { key: key.to_owned() }
}

/// ALMemory's data: a concurrent map for module data and the DCM's real-time slots, which
/// also answer to NAOqi 2.1's older names (`aliases`). Shared with every thread that
/// reads memory in-process.
#[derive(Debug)]
pub struct Store {
    pub(crate) data: DashMap<String, Entry, KeyedHasher>,
    slots: Arc<RtSlots>,
    aliases: Aliases,
    limits: StoreLimits,
    /// Taken inside a map entry's lock (never the other way round): a write and its count
    /// change together.
    accounts: Mutex<Accounts>,
}

impl Store {
    pub fn new(slots: Arc<RtSlots>, limits: StoreLimits) -> Arc<Store> {
        let aliases = Aliases::for_layout(slots.layout());
        let accounts = Mutex::default();
        Arc::new(Store { data: DashMap::default(), slots, aliases, limits, accounts })
    }

    pub fn limits(&self) -> &StoreLimits {
        &self.limits
    }

    /// What every key counts, in total.
    pub fn usage(&self) -> Usage {
        self.accounts().total
    }

    /// What the keys `client` wrote last count.
    pub fn usage_of(&self, client: &ClientId) -> Usage {
        self.accounts().by_client.get(client).copied().unwrap_or_default()
    }

    fn accounts(&self) -> std::sync::MutexGuard<'_, Accounts> {
        // A panic elsewhere while counting leaves counts that are still whole numbers.
        self.accounts.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The real-time slot a key reads: its own, or the one of the key it is an alias of.
    pub fn slot_index(&self, key: &str) -> Option<usize> {
        self.slots.layout().index_of(key).or_else(|| self.aliases.slot(key))
    }

    pub fn slots(&self) -> &Arc<RtSlots> {
        &self.slots
    }

    pub fn is_dcm_owned(key: &str) -> bool {
        DCM_OWNED_PREFIXES.iter().any(|prefix| key.starts_with(prefix))
    }

    /// The value of a key: a real-time slot, or module data.
    pub fn get(&self, key: &str) -> Option<Value> {
        if let Some(index) = self.slot_index(key) {
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
        if self.slot_index(key).is_some() {
            return Some(self.slots.updated_us());
        }
        self.data.get(key).map(|entry| entry.unix_us)
    }

    pub fn kind(&self, key: &str) -> Option<EntryKind> {
        if self.slot_index(key).is_some() {
            return Some(EntryKind::Data);
        }
        self.data.get(key).map(|entry| entry.kind)
    }

    /// Write module data or an event's value, for `writer` (`None`: the broker's own code,
    /// counted but never refused for the totals). Data under the DCM's prefixes is refused,
    /// and so is any write to one of its real-time values or over its own data (a
    /// preference); its events (`DCM/PostProcess`) may be raised, by the broker's own code
    /// only: ALMemory refuses clients every key under the DCM's prefixes. A client's write
    /// that would take the totals or its share past `[memory]`'s limits is refused.
    pub fn insert(
        &self,
        key: &str,
        value: Value,
        kind: EntryKind,
        writer: Option<&ClientId>,
    ) -> Result<(), StoreError> {
        let owned = Store::is_dcm_owned(key);
        if self.slot_index(key).is_some() || (owned && kind == EntryKind::Data) {
            return Err(owned_by_dcm(key));
        }
        let unix_us = timestamp_now();
        let bytes = entry_bytes(key, &value);
        match self.data.entry(key.to_owned()) {
            MapEntry::Occupied(mut occupied) => {
                let entry = occupied.get_mut();
                if owned && entry.kind == EntryKind::Data {
                    return Err(owned_by_dcm(key));
                }
                let old = Some((entry.writer.as_ref(), entry.bytes));
                self.accounts().charge(&self.limits, old, writer, bytes)?;
                entry.value = value;
                entry.unix_us = unix_us;
                entry.writer = writer.cloned();
                entry.bytes = bytes;
                if kind != EntryKind::Data {
                    entry.kind = kind;
                }
            }
            MapEntry::Vacant(vacant) => {
                self.accounts().charge(&self.limits, None, writer, bytes)?;
                vacant.insert(Entry { value, unix_us, kind, writer: writer.cloned(), bytes });
            }
        }
        Ok(())
    }

    /// Give back what a removed entry counted.
    fn released(&self, entry: &Entry) {
        self.accounts().release(entry.writer.as_ref(), Usage { keys: 1, bytes: entry.bytes });
    }

    /// The DCM's own data (its preferences): a key it owns that is neither a real-time
    /// slot nor an event. Only the DCM, holding the store in-process, calls this.
    pub fn insert_owned(&self, key: &str, value: Value) -> Result<(), StoreError> {
        if !Store::is_dcm_owned(key) || self.slot_index(key).is_some() {
            return Err(StoreError::NotDcmData { key: key.to_owned() });
        }
        let bytes = entry_bytes(key, &value);
        let entry = Entry { value, unix_us: timestamp_now(), kind: EntryKind::Data, writer: None, bytes };
        match self.data.entry(key.to_owned()) {
            MapEntry::Occupied(occupied) if occupied.get().kind != EntryKind::Data => {
                Err(StoreError::Event { key: key.to_owned() })
            }
            MapEntry::Occupied(mut occupied) => {
                let old = Some((occupied.get().writer.as_ref(), occupied.get().bytes));
                self.accounts().charge(&self.limits, old, None, bytes)?;
                occupied.insert(entry);
                Ok(())
            }
            MapEntry::Vacant(vacant) => {
                self.accounts().charge(&self.limits, None, None, bytes)?;
                vacant.insert(entry);
                Ok(())
            }
        }
    }

    /// Remove the DCM's own data (a preference that no longer exists); never an event.
    pub fn remove_owned(&self, key: &str) {
        if !Store::is_dcm_owned(key) {
            return;
        }
        if let Some((_, entry)) = self.data.remove_if(key, |_, entry| entry.kind == EntryKind::Data) {
            self.released(&entry);
        }
    }

    /// Remove a key. The DCM's data and real-time values are never removed; its events
    /// only by the broker's own code (ALMemory refuses clients).
    pub fn remove(&self, key: &str) -> Result<(), StoreError> {
        if self.slot_index(key).is_some() {
            return Err(cannot_remove(key));
        }
        if !Store::is_dcm_owned(key) {
            let (_, entry) = self.data.remove(key).ok_or_else(|| no_key(key))?;
            self.released(&entry);
            return Ok(());
        }
        match self.data.remove_if(key, |_, entry| entry.kind != EntryKind::Data) {
            Some((_, entry)) => {
                self.released(&entry);
                Ok(())
            }
            None if self.data.contains_key(key) => Err(cannot_remove(key)),
            None => Err(no_key(key)),
        }
    }

    /// How many keys [`Store::keys`] lists, counted without listing them.
    pub fn key_count(&self) -> usize {
        self.slots.layout().len() + self.aliases.names().count() + self.data.len()
    }

    /// Every key, real-time slots (and their aliases) first.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.slots.layout().names().map(str::to_owned).collect();
        keys.extend(self.aliases.names().map(str::to_owned));
        keys.extend(self.data.iter().map(|entry| entry.key().clone()));
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_rtslots::SlotLayout;

    fn store() -> Arc<Store> {
        let mut layout = SlotLayout::new();
        layout.add("DCM/Time", SlotKind::Int);
        Store::new(RtSlots::new(layout), crate::MemoryConfig::default().store_limits())
    }

    #[test]
    fn the_dcm_writes_its_own_data_that_clients_cannot() {
        let store = store();
        store.insert_owned("RobotConfig/Body/Type", Value::from("NAO")).unwrap();
        assert_eq!(store.get("RobotConfig/Body/Type"), Some(Value::from("NAO")));
        assert!(store.insert("RobotConfig/Body/Type", Value::from("x"), EntryKind::Data, None).is_err());
        assert!(store.insert_owned("Mine/Key", Value::Nil).is_err(), "not a DCM key");
        assert!(store.insert_owned("DCM/Time", Value::Nil).is_err(), "a real-time slot");
        store.remove_owned("RobotConfig/Body/Type");
        assert_eq!(store.get("RobotConfig/Body/Type"), None);
    }

    #[test]
    fn the_dcm_data_is_never_turned_into_an_event_nor_removed() {
        let store = store();
        store.insert_owned("RobotConfig/Body/Type", Value::from("NAO")).unwrap();
        for kind in [EntryKind::Event, EntryKind::MicroEvent] {
            let error = store.insert("RobotConfig/Body/Type", Value::from("x"), kind, None).unwrap_err();
            assert!(error.to_string().contains("owned by DCM"), "{error}");
        }
        let error = store.remove("RobotConfig/Body/Type").unwrap_err();
        assert!(error.to_string().contains("cannot be removed"), "{error}");
        assert_eq!(store.get("RobotConfig/Body/Type"), Some(Value::from("NAO")));
        assert_eq!(store.kind("RobotConfig/Body/Type"), Some(EntryKind::Data));
        assert!(
            store.insert("DCM/Time", Value::from(1), EntryKind::Event, None).is_err(),
            "a real-time slot"
        );
        assert!(store.remove("DCM/Time").is_err());
    }

    #[test]
    fn the_dcm_data_functions_leave_its_events_alone() {
        let store = store();
        store.insert("DCM/PostProcess", Value::from(1), EntryKind::Event, None).unwrap();
        let error = store.insert_owned("DCM/PostProcess", Value::from(2)).unwrap_err();
        assert!(error.to_string().contains("is an event"), "{error}");
        store.remove_owned("DCM/PostProcess");
        assert_eq!(store.get("DCM/PostProcess"), Some(Value::from(1)));
        assert_eq!(store.kind("DCM/PostProcess"), Some(EntryKind::Event));
        store.remove("DCM/PostProcess").unwrap();
        let error = store.remove("DCM/PostProcess").unwrap_err();
        assert!(error.to_string().contains("no key named"), "{error}");
    }

    const ACCELEROMETER_X: &str = "Device/SubDeviceList/InertialSensor/AccelerometerX/Sensor/Value";
    const ACC_X: &str = "Device/SubDeviceList/InertialSensor/AccX/Sensor/Value";
    const GYR_Z: &str = "Device/SubDeviceList/InertialSensor/GyrZ/Sensor/Value";

    /// A robot with an accelerometer's X axis and no gyrometer.
    fn inertial_store() -> Arc<Store> {
        let mut layout = SlotLayout::new();
        layout.add("DCM/Time", SlotKind::Int);
        layout.add(ACCELEROMETER_X, SlotKind::Float);
        Store::new(RtSlots::new(layout), crate::MemoryConfig::default().store_limits())
    }

    #[test]
    fn an_alias_reads_the_slot_of_its_key_live() {
        let store = inertial_store();
        let slot = store.slots().layout().index_of(ACCELEROMETER_X).unwrap();
        assert_eq!(store.slot_index(ACC_X), Some(slot));
        for value in [0.0, -9.81, 3.25] {
            store.slots().set(slot, value);
            assert_eq!(store.get(ACC_X), Some(Value::F64(value)));
            assert_eq!(store.get(ACC_X), store.get(ACCELEROMETER_X));
        }
        assert_eq!(store.kind(ACC_X), Some(EntryKind::Data));
        assert_eq!(store.timestamp(ACC_X), store.timestamp(ACCELEROMETER_X));
    }

    #[test]
    fn an_alias_is_listed_and_refuses_writes_as_its_key_does() {
        let store = inertial_store();
        let keys = store.keys();
        assert!(keys.iter().any(|key| key == ACC_X), "{keys:?}");
        assert!(!keys.iter().any(|key| key == GYR_Z), "no gyrometer, no GyrZ: {keys:?}");
        assert_eq!(store.get(GYR_Z), None);
        for kind in [EntryKind::Data, EntryKind::Event, EntryKind::MicroEvent] {
            let error = store.insert(ACC_X, Value::F64(1.0), kind, None).unwrap_err();
            assert_eq!(error, StoreError::OwnedByDcm { key: ACC_X.to_owned() });
        }
        assert!(store.insert_owned(ACC_X, Value::F64(1.0)).is_err(), "the DCM's data never shadows it");
        assert_eq!(store.remove(ACC_X).unwrap_err(), StoreError::CannotRemove { key: ACC_X.to_owned() });
        assert_eq!(store.get(ACC_X), Some(Value::F64(0.0)));
    }
}
