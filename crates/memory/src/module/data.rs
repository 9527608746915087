//! ALMemory's methods on data: write, read, list, describe and remove keys, and wait for
//! a key to change (`getDataOnChange`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use naobroker_framework::{excerpt, CallError, ClientId, ModuleContext, Value};
use tokio::sync::{oneshot, Semaphore};

use super::ALMemory;
use crate::store::{EntryKind, Store};

impl ALMemory {
    pub(super) fn get(&self, key: &str) -> Result<Value, CallError> {
        self.store.get(key).ok_or_else(|| no_key(key))
    }

    /// Store the value for `writer` and wake whoever waits for the key to change.
    pub(super) fn insert(
        &self,
        key: &str,
        value: Value,
        kind: EntryKind,
        writer: Option<&ClientId>,
    ) -> Result<(), CallError> {
        self.store.insert(key, value.clone(), kind, writer)?;
        if let Some(waiters) = self.events.borrow_mut().waiters.remove(key) {
            for waiter in waiters {
                let _ = waiter.send(value.clone());
            }
        }
        Ok(())
    }
}

fn no_key(key: &str) -> CallError {
    CallError::not_found(format!("no key named {}", excerpt(key)))
}

pub(super) fn insert_data(
    this: &mut ALMemory,
    context: &ModuleContext,
    (key, value): (String, Value),
) -> Result<(), CallError> {
    let caller = context.caller();
    this.check_write(&caller, &key, &value)?;
    this.insert(&key, value, EntryKind::Data, caller.client())
}

/// Checks every pair before it writes any.
pub(super) fn insert_list_data(
    this: &mut ALMemory,
    context: &ModuleContext,
    (list,): (Vec<(String, Value)>,),
) -> Result<(), CallError> {
    let caller = context.caller();
    for (key, value) in &list {
        this.check_write(&caller, key, value)?;
    }
    if let Some((key, _)) = list.iter().find(|(key, _)| Store::is_dcm_owned(key)) {
        return Err(CallError::refused(format!(
            "{key} is owned by DCM: send actuator commands with DCM.set, modules cannot write it"
        )));
    }
    for (key, value) in list {
        this.insert(&key, value, EntryKind::Data, caller.client())?;
    }
    Ok(())
}

pub(super) fn get_data(
    this: &mut ALMemory,
    _: &ModuleContext,
    (key,): (String,),
) -> Result<Value, CallError> {
    this.get(&key)
}

pub(super) fn get_list_data(
    this: &mut ALMemory,
    _: &ModuleContext,
    (keys,): (Vec<String>,),
) -> Result<Vec<Value>, CallError> {
    keys.iter().map(|key| this.get(key)).collect()
}

/// The keys containing `filter`, sorted.
pub(super) fn get_data_list(
    this: &mut ALMemory,
    _: &ModuleContext,
    (filter,): (String,),
) -> impl Future<Output = Result<Value, CallError>> {
    sorted_keys(this, Some(filter))
}

pub(super) fn get_data_list_name(
    this: &mut ALMemory,
    _: &ModuleContext,
    (): (),
) -> impl Future<Output = Result<Value, CallError>> {
    sorted_keys(this, None)
}

/// Every key (containing `filter`), sorted, as the reply's value, listed on a blocking
/// thread (see [`sorted_aside`]).
fn sorted_keys(this: &ALMemory, filter: Option<String>) -> impl Future<Output = Result<Value, CallError>> {
    let store = Arc::clone(&this.store);
    sorted_aside(&this.listing, move || {
        move || {
            let mut keys = store.keys();
            if let Some(filter) = filter {
                keys.retain(|key| key.contains(&filter));
            }
            keys
        }
    })
}

/// The names a listing gathers, sorted, as the reply's value, one listing at a time (each
/// holds a copy of its names). Once the listing's turn comes, `start` runs on the broker's
/// thread and hands over what gathers the names (cheap there: handles, not the names); they
/// are gathered, sorted and converted on a blocking thread, so that whatever the store's
/// size the broker's thread does little.
pub(super) fn sorted_aside<T, G>(
    listing: &Arc<Semaphore>,
    start: impl FnOnce() -> G,
) -> impl Future<Output = Result<Value, CallError>>
where
    T: AsRef<str> + Ord + Send + 'static,
    G: FnOnce() -> Vec<T> + Send + 'static,
{
    let listing = Arc::clone(listing);
    async move {
        let _turn = listing.acquire_owned().await.map_err(|_| CallError::new("ALMemory stopped"))?;
        let gather = start();
        let listed = tokio::task::spawn_blocking(move || {
            let mut names = gather();
            names.sort_unstable();
            Value::Array(names.iter().map(|name| Value::from(name.as_ref())).collect())
        });
        listed.await.map_err(|_| CallError::new("ALMemory: listing the names failed"))
    }
}

pub(super) fn remove_data(
    this: &mut ALMemory,
    context: &ModuleContext,
    (key,): (String,),
) -> Result<(), CallError> {
    this.check_owner(&context.caller(), &key)?;
    Ok(this.store.remove(&key)?)
}

/// `[value, seconds, microseconds]`: the value and the Unix time of its last write.
pub(super) fn get_timestamp(
    this: &mut ALMemory,
    _: &ModuleContext,
    (key,): (String,),
) -> Result<Vec<Value>, CallError> {
    let value = this.get(&key)?;
    let unix_us = this.store.timestamp(&key).unwrap_or(0);
    let (seconds, micros) = (unix_us / 1_000_000, unix_us % 1_000_000);
    Ok(vec![value, seconds.into(), micros.into()])
}

pub(super) fn get_type(
    this: &mut ALMemory,
    _: &ModuleContext,
    (key,): (String,),
) -> Result<&'static str, CallError> {
    this.store.kind(&key).map(EntryKind::as_str).ok_or_else(|| no_key(&key))
}

/// `[key, type, description]` of each key; the description says which keys the DCM
/// writes every cycle, and which key a NAOqi 2.1 name stands for.
pub(super) fn get_description_list(
    this: &mut ALMemory,
    _: &ModuleContext,
    (keys,): (Vec<String>,),
) -> Result<Vec<Vec<String>>, CallError> {
    keys.iter()
        .map(|key| {
            let kind = this.store.kind(key).ok_or_else(|| no_key(key))?;
            let layout = this.store.slots().layout();
            let description = match this.store.slot_index(key) {
                Some(_) if layout.index_of(key).is_some() => {
                    "written by the DCM every cycle (real-time slot)".to_owned()
                }
                Some(index) => {
                    format!("NAOqi 2.1 name of {}, written by the DCM every cycle", layout.name(index))
                }
                None => String::new(),
            };
            Ok(vec![key.clone(), kind.as_str().to_owned(), description])
        })
        .collect()
}

/// The key's next value, or an error when `timeout_ms` (> 0) passes first. A write
/// through ALMemory wakes the call; a real-time slot is looked at once per ms.
pub(super) fn get_data_on_change(
    this: &mut ALMemory,
    _: &ModuleContext,
    (key, timeout_ms): (String, i64),
) -> impl Future<Output = Result<Value, CallError>> {
    let current = this.store.get(&key);
    let store = Arc::clone(&this.store);
    let is_slot = store.slot_index(&key).is_some();
    let receiver = (!is_slot).then(|| {
        let (sender, receiver) = oneshot::channel();
        this.events.borrow_mut().waiters.entry(key.clone()).or_default().push(sender);
        receiver
    });
    async move {
        let current = current.ok_or_else(|| no_key(&key))?;
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
}

/// The number of keys (event delivery is counted by the broker).
pub(super) fn stats(this: &mut ALMemory, _: &ModuleContext, (): ()) -> Result<Value, CallError> {
    Ok(Value::Map(vec![("keys".into(), (this.store.key_count() as u64).into())]))
}
