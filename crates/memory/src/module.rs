//! The ALMemory module: data, events and micro-events, NAOqi's API over the store, with
//! every write checked against the caller's key prefixes and the broker's limits. Its
//! method table is below; the handlers live in `module/`, grouped by what they act on.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{
    excerpt, Blackboard, Broker, CallError, Caller, Methods, Module, ModuleContext, Value, MEMORY_MODULE,
};
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::store::{Store, StoreLimits};
use events::Events;

mod blackboard;
mod data;
mod events;
mod subscriptions;

/// `[memory]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Values kept per event for `getEventHistory`.
    pub event_history: usize,
    /// Keys clients and the broker's code may create in total (events count as keys; the
    /// DCM's real-time values do not).
    pub max_keys: usize,
    /// Bytes of keys and values (names, values as MessagePack, 64 per entry) in total.
    pub max_data_bytes: usize,
    /// Bytes of the values kept for `getEventHistory` (as MessagePack, 64 per value), in total.
    pub max_history_bytes: usize,
    /// Percent of each total that what one client wrote may take.
    pub client_share_percent: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            event_history: 32,
            max_keys: 100_000,
            max_data_bytes: 128 << 20,
            max_history_bytes: 32 << 20,
            client_share_percent: 25,
        }
    }
}

impl MemoryConfig {
    /// What the store holds to.
    pub fn store_limits(&self) -> StoreLimits {
        StoreLimits {
            max_keys: self.max_keys,
            max_data_bytes: self.max_data_bytes,
            client_share_percent: self.client_share_percent,
        }
    }
}

/// The ALMemory module.
pub struct ALMemory {
    store: Arc<Store>,
    broker: Broker,
    config: MemoryConfig,
    events: Rc<RefCell<Events>>,
    /// One listing of every key or event at a time (`getDataListName`, `getDataList`,
    /// `getEventList`, `getMicroEventList`): each holds a copy of the names.
    listing: Arc<Semaphore>,
}

impl ALMemory {
    pub fn new(store: Arc<Store>, broker: Broker, config: MemoryConfig) -> Self {
        ALMemory { store, broker, config, events: Rc::default(), listing: Arc::new(Semaphore::new(1)) }
    }

    /// Whether `caller` may write or raise `key`: a name within the limits, not under
    /// another client's module prefix nor the DCM's.
    fn check_write(&self, caller: &Caller, key: &str, value: &Value) -> Result<(), CallError> {
        let limits = self.broker.limits();
        limits.check_name("key", key)?;
        limits.check_value(key, value)?;
        self.check_owner(caller, key)
    }

    /// Keys under a module's prefix belong to its client; keys under the DCM's prefixes
    /// (its values, preferences and events) to the broker's own code, in every form: a
    /// client neither writes, raises, declares nor removes one.
    fn check_owner(&self, caller: &Caller, key: &str) -> Result<(), CallError> {
        self.broker.check_key_owner(caller, key)?;
        if *caller != Caller::Broker && Store::is_dcm_owned(key) {
            return Err(CallError::refused(format!(
                "{} is owned by DCM: clients cannot write, raise or remove it (ask the DCM: DCM.set, \
                 DCM.preferences)",
                excerpt(key)
            )));
        }
        Ok(())
    }
}

impl Module for ALMemory {
    fn name(&self) -> String {
        MEMORY_MODULE.into()
    }

    fn description(&self) -> String {
        "Shared data and events: the blackboard of every module, with the DCM's real-time values.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "insertData",
            "Stores a value under a key (keys under Device/, DCM/, HAL/, RobotConfig/ belong to the DCM; \
             Module/... to that module).",
            data::insert_data,
        )
        .add("insertListData", "Stores several values: [[key, value], ...].", data::insert_list_data)
        .add("getData", "The value of a key.", data::get_data)
        .add("getListData", "The values of several keys.", data::get_list_data)
        .add_async("getDataList", "Keys containing the filter string.", data::get_data_list)
        .add_async("getDataListName", "Every key.", data::get_data_list_name)
        .add("removeData", "Removes a key.", data::remove_data)
        .add("getTimestamp", "[value, seconds, microseconds] of the key's last write.", data::get_timestamp)
        .add("getType", "\"Data\", \"Event\" or \"MicroEvent\".", data::get_type)
        .add(
            "getDescriptionList",
            "[[key, type, description], ...] for the keys.",
            data::get_description_list,
        )
        .add_async(
            "getDataOnChange",
            "Waits until the key changes or the timeout (ms, 0 = forever) ends; answers the value.",
            data::get_data_on_change,
        )
        .add("declareEvent", "Declares an event.", events::declare_event)
        .add(
            "raiseEvent",
            "Raises an event (declaring it if needed): stores its value and calls every subscriber.",
            events::raise_event,
        )
        .add("raiseMicroEvent", "Raises a micro-event.", events::raise_micro_event)
        .add("removeEvent", "Removes an event.", events::remove_event)
        .add("removeMicroEvent", "Removes a micro-event.", events::remove_micro_event)
        .add_async("getEventList", "Declared events.", events::get_event_list)
        .add_async("getMicroEventList", "Declared micro-events.", events::get_micro_event_list)
        .add("getSubscribers", "Modules subscribed to an event.", subscriptions::get_subscribers)
        .add("getEventHistory", "The last values of an event, oldest first.", events::get_event_history)
        .add(
            "subscribeToEvent",
            "subscribeToEvent(event, module, method): the broker calls module.method(event, value, message) \
             on each raise.",
            subscriptions::subscribe_to_event,
        )
        .add(
            "subscribeToMicroEvent",
            "subscribeToMicroEvent(event, module, message, method).",
            subscriptions::subscribe_to_micro_event,
        )
        .add(
            "unsubscribeToEvent",
            "unsubscribeToEvent(event, module): only the module's own client may.",
            subscriptions::unsubscribe_to_event,
        )
        .add(
            "unsubscribeToMicroEvent",
            "unsubscribeToMicroEvent(event, module).",
            subscriptions::unsubscribe_to_micro_event,
        )
        .add("stats", "Key count; event delivery is counted in ServiceDirectory.stats.", data::stats);
    }

    /// The broker's blackboard: in-process code raises events and writes keys here, typed.
    fn blackboard(&self) -> Option<Rc<dyn Blackboard>> {
        Some(Rc::new(self.shared()))
    }

    fn started(&mut self, _context: &ModuleContext) {
        tracing::info!(realtime_keys = self.store.slots().layout().len(), "ALMemory ready");
    }
}
