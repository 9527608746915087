//! Queries from the network: ALMemory read with Zenoh's wildcards (like `getListData`), and
//! calls of the exported methods, made on the broker's thread and answered from here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use naobroker_framework::{CallError, Limits, Value};
use naobroker_memory::Store;
use zenoh::bytes::Encoding;
use zenoh::key_expr::KeyExpr;
use zenoh::query::Query;
use zenoh::Wait;

use crate::bounds::{
    CALL_DEADLINE, MAX_CALLS_IN_FLIGHT, MAX_CALL_PAYLOAD_BYTES, MAX_MEMORY_REPLIES, MAX_MEMORY_REPLY_BYTES,
};
use crate::caller::{self, Answering};
use crate::exports::Exports;
use crate::keys::{is_plain_key, KeySpace, ROOT};
use crate::module::Counters;

/// How often the query and answer threads look whether the adapter stops.
const STOP_LOOK: Duration = Duration::from_millis(100);

/// A query as the session's callbacks queue it.
pub(crate) enum Asked {
    Memory(Query),
    Call(Query),
}

/// A call for the broker's thread to make as the peers' client, answered under `id`.
pub(crate) struct CallRequest {
    pub(crate) id: u64,
    pub(crate) module: String,
    pub(crate) method: String,
    pub(crate) args: Vec<Value>,
}

/// Refuse a query with a message naming what was wrong.
pub(crate) fn refuse(query: &Query, counters: &Counters, message: &str) {
    Counters::bump(&counters.queries_refused);
    let _ = query.reply_err(message.to_owned()).encoding(Encoding::TEXT_PLAIN).wait();
}

/// Answer a query "busy" at once (a queue is full).
pub(crate) fn busy(query: &Query, counters: &Counters, what: &str) {
    Counters::bump(&counters.queries_busy);
    let _ = query.reply_err(format!("busy: {what}; ask again later")).encoding(Encoding::TEXT_PLAIN).wait();
}

/// The query thread's state.
pub(crate) struct Answerer {
    pub(crate) keys: KeySpace,
    pub(crate) store: Arc<Store>,
    pub(crate) exports: Exports,
    pub(crate) calls: tokio::sync::mpsc::Sender<CallRequest>,
    pub(crate) answers: mpsc::SyncSender<Answering>,
    pub(crate) limits: Limits,
    pub(crate) next_id: u64,
    pub(crate) in_flight: Arc<AtomicUsize>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Answerer {
    pub(crate) fn run(mut self, asked: mpsc::Receiver<Asked>) {
        while !self.stop.load(Ordering::Relaxed) {
            match asked.recv_timeout(STOP_LOOK) {
                Ok(Asked::Memory(query)) => self.memory(&query),
                Ok(Asked::Call(query)) => self.call(query),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn memory(&self, query: &Query) {
        Counters::bump(&self.counters.memory_queries);
        match memory_replies(query.key_expr(), &self.keys, &self.store) {
            Ok(replies) => {
                for (key_expr, payload) in replies {
                    let _ = query.reply(key_expr, payload).encoding(Encoding::APPLICATION_JSON).wait();
                }
            }
            Err(refusal) => refuse(query, &self.counters, &refusal.to_string()),
        }
    }

    /// A call of one exported method: its arguments a JSON array in the payload. A key with
    /// wildcards is no call (a sweep of the key space gets nothing from here).
    fn call(&mut self, query: Query) {
        let key = query.key_expr().as_str();
        if key.contains(['*', '$']) {
            return;
        }
        let Some(target) = self.keys.call_target(key) else {
            let message =
                format!("{key}: a call's key is {ROOT}/{}/call/<Module>/<method>", self.keys.robot());
            return refuse(&query, &self.counters, &message);
        };
        let (module, method) = (target.module.to_owned(), target.method.to_owned());
        if !self.exports.serves(&module, &method) {
            let message = format!(
                "{module}.{method} is not exported to Zenoh peers ([zenoh] calls and moves: docs/team.md)"
            );
            return refuse(&query, &self.counters, &message);
        }
        let args = match arguments(query.payload().map(|payload| payload.to_bytes())) {
            Ok(args) => args,
            Err(error) => return refuse(&query, &self.counters, &format!("{module}.{method}: {error}")),
        };
        if let Err(error) = within_limits(&self.limits, &args) {
            return refuse(&query, &self.counters, &format!("{module}.{method}: {error}"));
        }
        if self.in_flight.load(Ordering::Acquire) >= MAX_CALLS_IN_FLIGHT {
            return busy(&query, &self.counters, &format!("{MAX_CALLS_IN_FLIGHT} calls under way"));
        }
        let Ok(permit) = self.calls.try_reserve() else {
            return busy(&query, &self.counters, "the broker stops");
        };
        self.next_id += 1;
        let id = self.next_id;
        if let Err(
            mpsc::TrySendError::Full(Answering::Asked { query, .. })
            | mpsc::TrySendError::Disconnected(Answering::Asked { query, .. }),
        ) = self.answers.try_send(Answering::Asked { id, query })
        {
            return busy(&query, &self.counters, "the answers are not taken");
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Counters::bump(&self.counters.calls);
        permit.send(CallRequest { id, module, method, args });
    }
}

/// Why a memory query is refused whole.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MemoryRefusal {
    #[error("{0} matches more than {MAX_MEMORY_REPLIES} ALMemory keys: narrow it")]
    TooManyKeys(String),
    #[error("{0}: the values take more than {MAX_MEMORY_REPLY_BYTES} bytes")]
    TooManyBytes(String),
}

/// Every ALMemory key the query's key expression matches, with its value as JSON; more than
/// [`MAX_MEMORY_REPLIES`] keys or [`MAX_MEMORY_REPLY_BYTES`] refused whole. A key that
/// does not exist gets no reply.
fn memory_replies(
    asked: &KeyExpr<'_>,
    keys: &KeySpace,
    store: &Store,
) -> Result<Vec<(KeyExpr<'static>, Vec<u8>)>, MemoryRefusal> {
    let matching = |key: &str| {
        let key_expr = KeyExpr::try_from(keys.memory(key)).ok()?;
        asked.intersects(&key_expr).then_some(key_expr)
    };
    let mut found: Vec<(KeyExpr<'static>, Value)> = Vec::new();
    match exact_memory_key(asked.as_str()) {
        Some(key) => {
            if let (Some(key_expr), Some(value)) = (matching(key), store.get(key)) {
                found.push((key_expr, value));
            }
        }
        None => {
            for key in store.keys() {
                let Some(key_expr) = is_plain_key(&key).then(|| matching(&key)).flatten() else { continue };
                if found.len() == MAX_MEMORY_REPLIES {
                    return Err(MemoryRefusal::TooManyKeys(asked.to_string()));
                }
                if let Some(value) = store.get(&key) {
                    found.push((key_expr, value));
                }
            }
        }
    }
    let mut bytes = 0;
    found
        .into_iter()
        .map(|(key_expr, value)| {
            let payload = serde_json::to_vec(&value).unwrap_or_else(|_| b"null".to_vec());
            bytes += payload.len();
            if bytes > MAX_MEMORY_REPLY_BYTES {
                return Err(MemoryRefusal::TooManyBytes(asked.to_string()));
            }
            Ok((key_expr, payload))
        })
        .collect()
}

/// The ALMemory key of a query for one key (of this robot or of any: `naobroker/*/memory/K`),
/// none when the key part has wildcards or the query is not for memory.
fn exact_memory_key(asked: &str) -> Option<&str> {
    let mut chunks = asked.splitn(4, '/');
    let (root, robot, section, key) = (chunks.next()?, chunks.next()?, chunks.next()?, chunks.next()?);
    // `**` for the robot may also stand for chunks of the key (`naobroker/**/memory/X` matches
    // the key `Y/memory/X` too): that query lists the keys.
    let robot_is_one_chunk = !robot.contains("**");
    (root == ROOT && robot_is_one_chunk && section == "memory" && !key.contains(['*', '$'])).then_some(key)
}

/// A call's arguments: its payload, a JSON array of at most [`MAX_CALL_PAYLOAD_BYTES`]; no
/// payload, none.
fn arguments(payload: Option<std::borrow::Cow<'_, [u8]>>) -> Result<Vec<Value>, CallError> {
    let Some(payload) = payload else { return Ok(Vec::new()) };
    if payload.is_empty() {
        return Ok(Vec::new());
    }
    if payload.len() > MAX_CALL_PAYLOAD_BYTES {
        return Err(CallError::bad_argument(format!(
            "the arguments take {} bytes, at most {MAX_CALL_PAYLOAD_BYTES}",
            payload.len()
        )));
    }
    serde_json::from_slice(&payload).map_err(|error| {
        CallError::bad_argument(format!("the payload is the arguments as a JSON array: {error}"))
    })
}

/// A call's arguments held to the broker's limits on any value: `max_value_depth` (the
/// array of arguments is the first level, as on the broker's wires) and `max_value_bytes`.
pub(crate) fn within_limits(limits: &Limits, args: &[Value]) -> Result<(), CallError> {
    fn depth(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            Value::Map(entries) => {
                1 + entries.iter().map(|(key, value)| depth(key).max(depth(value))).max().unwrap_or(0)
            }
            _ => 0,
        }
    }
    let nesting = 1 + args.iter().map(depth).max().unwrap_or(0);
    if nesting > limits.max_value_depth {
        return Err(CallError::bad_argument(format!(
            "the arguments are nested {nesting} levels deep, more than max_value_depth ({})",
            limits.max_value_depth
        )));
    }
    limits.check_value("the arguments", &Value::Array(args.to_vec()))
}

/// The calls under way, each with its deadline.
struct Waiting<Q> {
    calls: HashMap<u64, (Q, Instant)>,
}

impl<Q> Waiting<Q> {
    fn insert(&mut self, id: u64, query: Q, now: Instant) {
        self.calls.insert(id, (query, now + CALL_DEADLINE));
    }

    fn remove(&mut self, id: u64) -> Option<Q> {
        self.calls.remove(&id).map(|(query, _)| query)
    }

    /// The calls past their deadline, taken out.
    fn expired(&mut self, now: Instant) -> Vec<Q> {
        let ids: Vec<u64> =
            self.calls.iter().filter(|(_, (_, deadline))| *deadline <= now).map(|(id, _)| *id).collect();
        ids.into_iter().filter_map(|id| self.remove(id)).collect()
    }
}

/// The answer thread: each call's answer, as the broker wrote it, sent back to the peer
/// that asked; a call not answered within [`CALL_DEADLINE`] is answered "timed out" and
/// frees its place (its answer, if it comes, is dropped).
pub(crate) fn answer(
    answers: mpsc::Receiver<Answering>,
    in_flight: Arc<AtomicUsize>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
) {
    let mut waiting: Waiting<Query> = Waiting { calls: HashMap::new() };
    while !stop.load(Ordering::Relaxed) {
        let received = answers.recv_timeout(STOP_LOOK);
        let now = Instant::now();
        for query in waiting.expired(now) {
            Counters::bump(&counters.calls_timed_out);
            let message = format!("timed out: no answer within {} s", CALL_DEADLINE.as_secs());
            let _ = query.reply_err(message).encoding(Encoding::TEXT_PLAIN).wait();
            in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        let answered = match received {
            Ok(Answering::Asked { id, query }) => {
                waiting.insert(id, query, now);
                continue;
            }
            Ok(Answering::Answered(answered)) => answered,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let Some((id, result)) = caller::decode(&answered) else { continue };
        let Some(query) = waiting.remove(id) else { continue };
        let _ = match result {
            Ok(payload) => {
                query.reply(query.key_expr().clone(), payload).encoding(Encoding::APPLICATION_JSON).wait()
            }
            Err(message) => query
                .reply_err(String::from_utf8_lossy(message).into_owned())
                .encoding(Encoding::TEXT_PLAIN)
                .wait(),
        };
        drop(query);
        in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use naobroker_framework::ErrorKind;
    use naobroker_memory::{EntryKind, MemoryConfig};
    use naobroker_rtslots::{RtSlots, SlotKind, SlotLayout};

    use super::*;

    fn store() -> Arc<Store> {
        let mut layout = SlotLayout::new();
        layout.add("DCM/Time", SlotKind::Int);
        layout.add("Device/SubDeviceList/HeadYaw/Position/Sensor/Value", SlotKind::Float);
        layout.add("Device/SubDeviceList/HeadPitch/Position/Sensor/Value", SlotKind::Float);
        let limits = MemoryConfig { max_data_bytes: 1 << 30, ..MemoryConfig::default() }.store_limits();
        Store::new(RtSlots::new(layout), limits)
    }

    fn asked(key_expr: &str, store: &Store) -> Result<Vec<String>, String> {
        let keys = KeySpace::new("nao-a");
        let replies = memory_replies(&KeyExpr::try_from(key_expr).unwrap(), &keys, store)
            .map_err(|refusal| refusal.to_string())?;
        Ok(replies
            .into_iter()
            .map(|(key, payload)| format!("{key}={}", String::from_utf8(payload).unwrap()))
            .collect())
    }

    #[test]
    fn memory_is_read_with_wildcards_like_get_list_data() {
        let store = store();
        store.insert("Team/Role", Value::from("striker"), EntryKind::Data, None).unwrap();
        store.insert("odd*key", Value::from(1), EntryKind::Data, None).unwrap();
        let positions = asked("naobroker/nao-a/memory/Device/SubDeviceList/*/Position/Sensor/Value", &store);
        assert_eq!(positions.unwrap().len(), 2);
        assert_eq!(
            asked("naobroker/*/memory/Team/Role", &store).unwrap(),
            ["naobroker/nao-a/memory/Team/Role=\"striker\""]
        );
        assert_eq!(asked("naobroker/nao-b/memory/Team/Role", &store).unwrap(), Vec::<String>::new());
        assert_eq!(asked("naobroker/nao-a/memory/No/Such/Key", &store).unwrap(), Vec::<String>::new());
        // A key Zenoh cannot name is not listed.
        let everything = asked("naobroker/nao-a/**", &store).unwrap();
        assert!(everything.iter().any(|reply| reply.starts_with("naobroker/nao-a/memory/Team/Role=")));
        assert!(!everything.iter().any(|reply| reply.contains("odd")), "{everything:?}");
    }

    #[test]
    fn a_query_for_too_many_keys_or_bytes_is_refused() {
        let store = store();
        for index in 0..MAX_MEMORY_REPLIES {
            store.insert(&format!("Flood/{index}"), Value::from(index), EntryKind::Data, None).unwrap();
        }
        assert_eq!(asked("naobroker/nao-a/memory/Flood/*", &store).unwrap().len(), MAX_MEMORY_REPLIES);
        store.insert("Flood/last", Value::Nil, EntryKind::Data, None).unwrap();
        let refused = asked("naobroker/nao-a/memory/Flood/*", &store).unwrap_err();
        assert!(refused.contains("more than 10000 ALMemory keys"), "{refused}");
        // 15 values of 1 MiB and their quotes fit in 16 MiB; a 16th does not.
        let big = Value::from("x".repeat(1 << 20));
        for index in 0..15 {
            store.insert(&format!("Big/{index}"), big.clone(), EntryKind::Data, None).unwrap();
        }
        assert_eq!(asked("naobroker/nao-a/memory/Big/*", &store).unwrap().len(), 15);
        store.insert("Big/15", big, EntryKind::Data, None).unwrap();
        let refused = asked("naobroker/nao-a/memory/Big/*", &store).unwrap_err();
        assert!(refused.contains("more than 16777216 bytes"), "{refused}");
    }

    #[test]
    fn one_memory_key_is_read_without_a_listing() {
        assert_eq!(exact_memory_key("naobroker/nao-a/memory/DCM/Time"), Some("DCM/Time"));
        assert_eq!(exact_memory_key("naobroker/*/memory/DCM/Time"), Some("DCM/Time"));
        assert_eq!(exact_memory_key("naobroker/nao-a/memory/DCM/*"), None);
        assert_eq!(exact_memory_key("naobroker/nao-a/**"), None);
        assert_eq!(exact_memory_key("**/Time"), None);
        assert_eq!(exact_memory_key("naobroker/**/memory/DCM/Time"), None);
        // `**` for the robot also matches a key with `memory` in it.
        let store = store();
        store.insert("Y/memory/X", Value::from(1), EntryKind::Data, None).unwrap();
        store.insert("X", Value::from(2), EntryKind::Data, None).unwrap();
        let both = asked("naobroker/**/memory/X", &store).unwrap();
        assert!(both.contains(&"naobroker/nao-a/memory/Y/memory/X=1".to_owned()), "{both:?}");
        assert!(both.contains(&"naobroker/nao-a/memory/X=2".to_owned()), "{both:?}");
    }

    #[test]
    fn arguments_are_held_to_the_broker_limits() {
        let limits = Limits::default();
        let mut deep = Value::from("deep");
        for _ in 0..limits.max_value_depth - 1 {
            deep = Value::Array(vec![deep]);
        }
        assert!(within_limits(&limits, &[deep.clone()]).is_ok());
        let refused = within_limits(&limits, &[Value::Array(vec![deep])]).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::BadArgument);
        let refused = refused.to_string();
        assert!(refused.contains("nested 33 levels deep, more than max_value_depth (32)"), "{refused}");
        let big = Value::from("x".repeat(limits.max_value_bytes));
        assert!(within_limits(&limits, &[big]).unwrap_err().to_string().contains("max_value_bytes"));
    }

    #[test]
    fn a_call_past_its_deadline_is_taken_out() {
        let start = Instant::now();
        let mut waiting = Waiting { calls: HashMap::new() };
        waiting.insert(1, "first", start);
        waiting.insert(2, "second", start + Duration::from_secs(1));
        assert!(waiting.expired(start + CALL_DEADLINE - Duration::from_millis(1)).is_empty());
        assert_eq!(waiting.expired(start + CALL_DEADLINE), ["first"]);
        assert_eq!(waiting.remove(1), None);
        assert_eq!(waiting.remove(2), Some("second"));
    }

    #[test]
    fn arguments_are_a_bounded_json_array() {
        assert_eq!(arguments(None).unwrap(), Vec::<Value>::new());
        let args = arguments(Some(br#"["DCM/Time", 1, 2.5, true]"#.as_slice().into())).unwrap();
        assert_eq!(args, [Value::from("DCM/Time"), Value::from(1), Value::F64(2.5), Value::Boolean(true)]);
        let not_array = arguments(Some(br#"{"a": 1}"#.as_slice().into())).unwrap_err();
        assert!(not_array.message.contains("JSON array"), "{not_array}");
        assert_eq!(not_array.kind, ErrorKind::BadArgument);
        let huge = format!("[\"{}\"]", "x".repeat(MAX_CALL_PAYLOAD_BYTES));
        let refused = arguments(Some(huge.as_bytes().into())).unwrap_err();
        assert!(refused.message.contains("at most 65536"), "{refused}");
        assert_eq!(refused.kind, ErrorKind::BadArgument);
    }
}
