//! Recording streams, `DCM.record(keys)` and `DCM.stopRecord(id)`: a postProcess hook copies
//! the keys' values every cycle into a preallocated lock-free queue (a full queue counts a gap,
//! never waits), and a task on the broker's thread drains it and raises the rows as the event
//! `DCM/Record/<id>` for the recording client (docs/recording.md).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use naobroker_dcm::cycle::{ChannelError, CycleContext};
use naobroker_framework::{Broker, CallError, ErrorKind, Value};
use naobroker_rtslots::{FastAccess, NotRealTimeKey};
use tokio::sync::oneshot;

use crate::handle::{DcmHandle, HookConnection};

/// Recordings at once (each holds one of the cycle's few hook places).
pub(crate) const MAX_RECORDINGS: usize = 4;
/// Rows the queue holds between two drains: seconds of cycles at any period NAOqi uses.
const QUEUE_ROWS: usize = 8192;
/// How often the broker's thread drains a recording's queue.
const DRAIN_PERIOD: Duration = Duration::from_millis(20);
/// Rows in one event at most, so that a late drain does not make one huge message.
const MAX_BATCH_ROWS: usize = 512;
/// A recording nobody subscribed to within this long ends (its client went away).
const SUBSCRIBE_DEADLINE: Duration = Duration::from_secs(10);

/// Why `record` or `stopRecord` refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    #[error("record: name at least one key")]
    NoKeys,
    #[error("record: {0}")]
    NotRealTime(#[from] NotRealTimeKey),
    #[error("record: at most {MAX_RECORDINGS} recordings at once")]
    TooMany,
    #[error("record: {0}")]
    Hook(#[from] ChannelError),
    #[error("stopRecord: no recording {0}")]
    Unknown(u64),
}

impl From<RecordError> for CallError {
    fn from(error: RecordError) -> CallError {
        let kind = match &error {
            RecordError::NoKeys | RecordError::NotRealTime(_) => ErrorKind::BadArgument,
            RecordError::TooMany | RecordError::Hook(_) => ErrorKind::Refused,
            RecordError::Unknown(_) => ErrorKind::NotFound,
        };
        CallError::of(kind, error.to_string())
    }
}

/// The recordings running, each ended by sending on its sender.
#[derive(Default)]
pub(crate) struct Recordings {
    last_id: u64,
    active: Rc<RefCell<BTreeMap<u64, oneshot::Sender<()>>>>,
}

/// The event a recording's rows arrive as.
pub(crate) fn record_event(id: u64) -> String {
    format!("DCM/Record/{id}")
}

/// `record([key, ...])`: start recording, answer the id (rows arrive as `DCM/Record/<id>`).
pub(crate) fn record(
    recordings: &mut Recordings,
    handle: &DcmHandle,
    broker: &Broker,
    (keys,): (Vec<String>,),
) -> Result<u64, RecordError> {
    if keys.is_empty() {
        return Err(RecordError::NoKeys);
    }
    if recordings.active.borrow().len() >= MAX_RECORDINGS {
        return Err(RecordError::TooMany);
    }
    let names: Vec<&str> = keys.iter().map(String::as_str).collect();
    let fast = handle.fast_access(&names)?;
    let row_len = 2 + fast.len();
    let (producer, consumer) = rtrb::RingBuffer::new(QUEUE_ROWS * row_len);
    let gaps = Arc::new(AtomicU64::new(0));
    let id = recordings.last_id + 1;
    let hook = handle.at_post_process(&record_event(id), copy_row(fast, producer, Arc::clone(&gaps)))?;
    recordings.last_id = id;
    let (stop, stopped) = oneshot::channel();
    recordings.active.borrow_mut().insert(id, stop);
    let queue = RowQueue { rows: consumer, row_len, gaps };
    let active = Rc::clone(&recordings.active);
    actix_rt::spawn(drain(id, queue, hook, broker.clone(), stopped, active));
    tracing::info!(id, ?keys, "recording started");
    Ok(id)
}

/// `stopRecord(id)`: end a recording; the rows already recorded are still sent.
pub(crate) fn stop_record(recordings: &mut Recordings, (id,): (u64,)) -> Result<(), RecordError> {
    let stop = recordings.active.borrow_mut().remove(&id).ok_or(RecordError::Unknown(id))?;
    let _ = stop.send(());
    Ok(())
}

/// The hook: one row `[dcm_time, cycle, values...]` per cycle, or a gap counted when the
/// queue has no room for it. Allocates, locks and waits on nothing.
fn copy_row(
    fast: FastAccess,
    mut rows: rtrb::Producer<f64>,
    gaps: Arc<AtomicU64>,
) -> impl FnMut(&mut CycleContext<'_>) + Send + 'static {
    let row_len = 2 + fast.len();
    move |context| match rows.write_chunk_uninit(row_len) {
        Ok(chunk) => {
            let head = [f64::from(context.time), context.cycle as f64];
            chunk.fill_from_iter(head.into_iter().chain((0..fast.len()).map(|key| fast.get(key))));
        }
        Err(_) => {
            gaps.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The broker's end of a recording's queue.
struct RowQueue {
    rows: rtrb::Consumer<f64>,
    row_len: usize,
    gaps: Arc<AtomicU64>,
}

impl RowQueue {
    /// Up to [`MAX_BATCH_ROWS`] rows as `{"rows": [[dcm_time, cycle, value...], ...], "gaps": n}`
    /// (`gaps`: cycles lost since the recording started), or `None` when the queue is empty.
    fn batch(&mut self) -> Option<Value> {
        let rows = (self.rows.slots() / self.row_len).min(MAX_BATCH_ROWS);
        if rows == 0 {
            return None;
        }
        let chunk = self.rows.read_chunk(rows * self.row_len).ok()?;
        let values: Vec<f64> = chunk.into_iter().collect();
        let rows = values.chunks_exact(self.row_len).map(|row| {
            let head = [Value::from(row[0] as i64), Value::from(row[1] as u64)];
            Value::Array(head.into_iter().chain(row[2..].iter().map(|&v| Value::from(v))).collect())
        });
        let gaps = self.gaps.load(Ordering::Relaxed);
        Some(Value::Map(vec![("rows".into(), Value::Array(rows.collect())), ("gaps".into(), gaps.into())]))
    }
}

/// Drain a recording until it is stopped, its subscriber leaves, or nobody subscribed in
/// time; then remove its hook and send what was left.
async fn drain(
    id: u64,
    mut queue: RowQueue,
    hook: HookConnection,
    broker: Broker,
    mut stopped: oneshot::Receiver<()>,
    active: Rc<RefCell<BTreeMap<u64, oneshot::Sender<()>>>>,
) {
    let event = record_event(id);
    let (started, mut subscribed) = (Instant::now(), false);
    let mut tick = tokio::time::interval(DRAIN_PERIOD);
    let reason = loop {
        tokio::select! {
            _ = &mut stopped => break "stopped",
            _ = tick.tick() => {}
        }
        if !broker.has_subscribers(&event) {
            if subscribed {
                break "its subscriber left";
            }
            if started.elapsed() > SUBSCRIBE_DEADLINE {
                break "nobody subscribed";
            }
            continue;
        }
        subscribed = true;
        send_batches(&broker, &event, &mut queue);
    };
    hook.disconnect();
    if subscribed {
        send_batches(&broker, &event, &mut queue);
    }
    active.borrow_mut().remove(&id);
    let gaps = queue.gaps.load(Ordering::Relaxed);
    tracing::info!(id, reason, gaps, "recording ended");
}

fn send_batches(broker: &Broker, event: &str, queue: &mut RowQueue) {
    while let Some(batch) = queue.batch() {
        if let Err(error) = broker.raise_event(event, batch) {
            tracing::warn!(%event, %error, "recording rows not raised");
            return;
        }
    }
}

#[cfg(test)]
#[path = "recording_tests.rs"]
mod tests;
