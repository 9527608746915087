//! The ALMemory module: data, events and micro-events, NAOqi's API over the store, with
//! every write checked against the caller's key prefixes and the broker's limits.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use naobroker_framework::{excerpt, Broker, CallError, Caller, Methods, Module, ModuleContext, Value};
use serde::Deserialize;
use tokio::sync::oneshot;

use crate::store::{EntryKind, Store};

/// `[memory]` in `broker.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Values kept per event for `getEventHistory`.
    pub event_history: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { event_history: 32 }
    }
}

struct EventEntry {
    kind: EntryKind,
    history: VecDeque<Value>,
}

#[derive(Default)]
struct Events {
    entries: HashMap<String, EventEntry>,
    waiters: HashMap<String, Vec<oneshot::Sender<Value>>>,
}

/// The ALMemory module.
pub struct ALMemory {
    store: Arc<Store>,
    broker: Broker,
    config: MemoryConfig,
    events: Rc<RefCell<Events>>,
}

impl ALMemory {
    pub fn new(store: Arc<Store>, broker: Broker, config: MemoryConfig) -> Self {
        ALMemory { store, broker, config, events: Rc::default() }
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
            return Err(CallError::new(format!(
                "{} is owned by DCM: clients cannot write, raise or remove it (ask the DCM: DCM.set, \
                 DCM.preferences)",
                excerpt(key)
            )));
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Value, CallError> {
        self.store.get(key).ok_or_else(|| CallError::new(format!("no key named {}", excerpt(key))))
    }

    fn insert(&self, key: &str, value: Value, kind: EntryKind) -> Result<(), CallError> {
        self.store.insert(key, value.clone(), kind)?;
        if let Some(waiters) = self.events.borrow_mut().waiters.remove(key) {
            for waiter in waiters {
                let _ = waiter.send(value.clone());
            }
        }
        Ok(())
    }

    fn declare(&self, name: &str, kind: EntryKind) {
        let mut events = self.events.borrow_mut();
        let entry = events
            .entries
            .entry(name.to_owned())
            .or_insert_with(|| EventEntry { kind, history: VecDeque::new() });
        entry.kind = kind;
        // The DCM's events get their value when it raises them: nothing else creates a
        // key under its prefixes (a subscriber's placeholder would block a preference).
        if self.store.get(name).is_none() && !Store::is_dcm_owned(name) {
            let _ = self.store.insert(name, Value::Nil, kind);
        }
    }

    fn raise(&self, name: &str, value: Value, kind: EntryKind) -> Result<(), CallError> {
        if !self.events.borrow().entries.contains_key(name) {
            self.declare(name, kind);
        }
        self.insert(name, value.clone(), kind)?;
        {
            let mut events = self.events.borrow_mut();
            let entry = events.entries.get_mut(name).expect("declared above");
            entry.history.push_back(value.clone());
            while entry.history.len() > self.config.event_history {
                entry.history.pop_front();
            }
        }
        self.broker.publish(name, &value);
        Ok(())
    }

    /// NAOqi's subscribeToEvent: only the module's own client (or the broker) may subscribe it.
    fn subscribe(
        &self,
        caller: &Caller,
        name: &str,
        callback: (&str, &str),
        message: Value,
        kind: EntryKind,
    ) -> Result<bool, CallError> {
        let (module, method) = callback;
        self.broker.subscribe_callback(caller, name, module, method, message)?;
        if !self.events.borrow().entries.contains_key(name) {
            self.declare(name, kind);
        }
        Ok(true)
    }

    fn unsubscribe(&self, caller: &Caller, name: &str, module: &str) -> Result<bool, CallError> {
        if !self.events.borrow().entries.contains_key(name) {
            return Err(CallError::new(format!("no event named {}", excerpt(name))));
        }
        self.broker.unsubscribe_callback(caller, name, module)?;
        Ok(true)
    }

    fn remove_event(&self, name: &str, kind: EntryKind) -> Result<bool, CallError> {
        let mut events = self.events.borrow_mut();
        match events.entries.get(name) {
            Some(entry) if entry.kind == kind => {
                events.entries.remove(name);
                drop(events);
                self.store.remove(name)?;
                Ok(true)
            }
            _ => Err(CallError::new(format!("no {} named {}", kind.as_str(), excerpt(name)))),
        }
    }

    fn event_names(&self, kind: EntryKind) -> Vec<String> {
        let mut names: Vec<String> = self
            .events
            .borrow()
            .entries
            .iter()
            .filter(|(_, entry)| entry.kind == kind)
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

fn timestamp_value(unix_us: u64) -> (u64, u64) {
    (unix_us / 1_000_000, unix_us % 1_000_000)
}

impl Module for ALMemory {
    fn name(&self) -> String {
        "ALMemory".into()
    }

    fn description(&self) -> String {
        "Shared data and events: the blackboard of every module, with the DCM's real-time values.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("insertData", "Stores a value under a key (keys under Device/, DCM/, HAL/, RobotConfig/ belong to the DCM; Module/... to that module).",
            |this, ctx, (key, value): (String, Value)| {
                this.check_write(&ctx.caller(), &key, &value)?;
                this.insert(&key, value, EntryKind::Data)
            })
        .add("insertListData", "Stores several values: [[key, value], ...].",
            |this, ctx, (list,): (Vec<(String, Value)>,)| {
                let caller = ctx.caller();
                for (key, value) in &list {
                    this.check_write(&caller, key, value)?;
                }
                if let Some((key, _)) = list.iter().find(|(key, _)| Store::is_dcm_owned(key)) {
                    return Err(CallError::new(format!("{key} is owned by DCM: send actuator commands with DCM.set, modules cannot write it")));
                }
                for (key, value) in list {
                    this.insert(&key, value, EntryKind::Data)?;
                }
                Ok(())
            })
        .add("getData", "The value of a key.", |this, _, (key,): (String,)| this.get(&key))
        .add("getListData", "The values of several keys.", |this, _, (keys,): (Vec<String>,)| {
            keys.iter().map(|key| this.get(key)).collect::<Result<Vec<_>, _>>()
        })
        .add("getDataList", "Keys containing the filter string.", |this, _, (filter,): (String,)| {
            let mut keys: Vec<String> = this.store.keys().into_iter().filter(|k| k.contains(&filter)).collect();
            keys.sort();
            Ok(keys)
        })
        .add("getDataListName", "Every key.", |this, _, ()| {
            let mut keys = this.store.keys();
            keys.sort();
            Ok(keys)
        })
        .add("removeData", "Removes a key.", |this, ctx, (key,): (String,)| {
            this.check_owner(&ctx.caller(), &key)?;
            Ok(this.store.remove(&key)?)
        })
        .add("getTimestamp", "[value, seconds, microseconds] of the key's last write.", |this, _, (key,): (String,)| {
            let value = this.get(&key)?;
            let (seconds, micros) = timestamp_value(this.store.timestamp(&key).unwrap_or(0));
            Ok(vec![value, seconds.into(), micros.into()])
        })
        .add("getType", "\"Data\", \"Event\" or \"MicroEvent\".", |this, _, (key,): (String,)| {
            this.store.kind(&key).map(EntryKind::as_str).ok_or_else(|| CallError::new(format!("no key named {}", excerpt(&key))))
        })
        .add("getDescriptionList", "[[key, type, description], ...] for the keys.", |this, _, (keys,): (Vec<String>,)| {
            keys.iter()
                .map(|key| {
                    let kind = this.store.kind(key).ok_or_else(|| CallError::new(format!("no key named {}", excerpt(key))))?;
                    let description = if this.store.slots().layout().index_of(key).is_some() {
                        "written by the DCM every cycle (real-time slot)"
                    } else {
                        ""
                    };
                    Ok(vec![key.clone(), kind.as_str().to_owned(), description.to_owned()])
                })
                .collect::<Result<Vec<_>, CallError>>()
        })
        .add_async("getDataOnChange", "Waits until the key changes or the timeout (ms, 0 = forever) ends; answers the value.",
            |this, _, (key, timeout_ms): (String, i64)| {
                let current = this.store.get(&key);
                let store = Arc::clone(&this.store);
                let is_slot = store.slots().layout().index_of(&key).is_some();
                let receiver = (!is_slot).then(|| {
                    let (sender, receiver) = oneshot::channel();
                    this.events.borrow_mut().waiters.entry(key.clone()).or_default().push(sender);
                    receiver
                });
                async move {
                    let current = current.ok_or_else(|| CallError::new(format!("no key named {}", excerpt(&key))))?;
                    let change = async {
                        match receiver {
                            Some(receiver) => receiver.await.map_err(|_| CallError::new("ALMemory stopped")),
                            // Real-time keys change with the DCM cycle: look once per ms.
                            None => loop {
                                tokio::time::sleep(Duration::from_millis(1)).await;
                                let now = store.get(&key).unwrap_or(Value::Nil);
                                if now != current {
                                    return Ok(now);
                                }
                            },
                        }
                    };
                    if timeout_ms <= 0 {
                        return change.await;
                    }
                    tokio::time::timeout(Duration::from_millis(timeout_ms as u64), change)
                        .await
                        .map_err(|_| CallError::new(format!("{} did not change within {timeout_ms} ms", excerpt(&key))))?
                }
            })
        .add("declareEvent", "Declares an event.", |this, ctx, (name,): (String,)| {
            this.check_write(&ctx.caller(), &name, &Value::Nil)?;
            this.declare(&name, EntryKind::Event);
            Ok(())
        })
        .add("raiseEvent", "Raises an event (declaring it if needed): stores its value and calls every subscriber.",
            |this, ctx, (name, value): (String, Value)| {
                this.check_write(&ctx.caller(), &name, &value)?;
                this.raise(&name, value, EntryKind::Event)
            })
        .add("raiseMicroEvent", "Raises a micro-event.",
            |this, ctx, (name, value): (String, Value)| {
                this.check_write(&ctx.caller(), &name, &value)?;
                this.raise(&name, value, EntryKind::MicroEvent)
            })
        .add("removeEvent", "Removes an event.", |this, ctx, (name,): (String,)| {
            this.check_owner(&ctx.caller(), &name)?;
            this.remove_event(&name, EntryKind::Event)
        })
        .add("removeMicroEvent", "Removes a micro-event.", |this, ctx, (name,): (String,)| {
            this.check_owner(&ctx.caller(), &name)?;
            this.remove_event(&name, EntryKind::MicroEvent)
        })
        .add("getEventList", "Declared events.", |this, _, ()| Ok(this.event_names(EntryKind::Event)))
        .add("getMicroEventList", "Declared micro-events.", |this, _, ()| Ok(this.event_names(EntryKind::MicroEvent)))
        .add("getSubscribers", "Modules subscribed to an event.", |this, _, (name,): (String,)| {
            if !this.events.borrow().entries.contains_key(&name) {
                return Err(CallError::new(format!("no event named {}", excerpt(&name))));
            }
            Ok(this.broker.callback_subscribers(&name))
        })
        .add("getEventHistory", "The last values of an event, oldest first.", |this, _, (name,): (String,)| {
            let events = this.events.borrow();
            let entry = events.entries.get(&name).ok_or_else(|| CallError::new(format!("no event named {}", excerpt(&name))))?;
            Ok(entry.history.iter().cloned().collect::<Vec<_>>())
        })
        .add("subscribeToEvent", "subscribeToEvent(event, module, method): the broker calls module.method(event, value, message) on each raise.",
            |this, ctx, (name, module, method): (String, String, String)| this.subscribe(&ctx.caller(), &name, (&module, &method), Value::from(""), EntryKind::Event))
        .add("subscribeToMicroEvent", "subscribeToMicroEvent(event, module, message, method).",
            |this, ctx, (name, module, message, method): (String, String, Value, String)| this.subscribe(&ctx.caller(), &name, (&module, &method), message, EntryKind::MicroEvent))
        .add("unsubscribeToEvent", "unsubscribeToEvent(event, module): only the module's own client may.", |this, ctx, (name, module): (String, String)| this.unsubscribe(&ctx.caller(), &name, &module))
        .add("unsubscribeToMicroEvent", "unsubscribeToMicroEvent(event, module).", |this, ctx, (name, module): (String, String)| this.unsubscribe(&ctx.caller(), &name, &module))
        .add("stats", "Key count; event delivery is counted in ServiceDirectory.stats.", |this, _, ()| {
            Ok(Value::Map(vec![("keys".into(), (this.store.keys().len() as u64).into())]))
        });
    }

    fn started(&mut self, _context: &ModuleContext) {
        tracing::info!(realtime_keys = self.store.slots().layout().len(), "ALMemory ready");
    }
}
