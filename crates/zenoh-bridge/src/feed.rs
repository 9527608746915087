//! The adapter's thread: the robot's liveliness tokens, each DCM cycle's changed real-time
//! values read from the slots the cycle already publishes (never making the cycle wait), and
//! the events the broker's thread queued.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use naobroker_memory::Store;
use naobroker_rtslots::{SlotKind, CONSISTENT_READ_TRIES};
use zenoh::bytes::Encoding;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Publisher;
use zenoh::{Session, Wait};

use crate::events::{QueuedEvents, Raised};
use crate::keys::{is_plain_key, KeySpace};
use crate::module::Counters;
use crate::ros2::Ros2View;
use crate::watch::ModuleSet;

/// The real-time values: a publisher for each slot whose name is a plain key.
pub(crate) struct RealTime {
    publishers: Vec<Option<Publisher<'static>>>,
    kinds: Vec<SlotKind>,
    /// The values last put; none before the first put (everything goes out once).
    last: Option<Vec<f64>>,
    read: Vec<f64>,
    /// The slots' stamp of the last cycle put.
    stamp: u64,
    cycle_slot: Option<usize>,
    last_cycle: Option<u64>,
    /// With `[zenoh] rate_hz`: the time between two puts, and when the next is due.
    every: Option<Duration>,
    due: Instant,
}

impl RealTime {
    pub(crate) fn declare(
        session: &Session,
        keys: &KeySpace,
        store: &Store,
        every: Option<Duration>,
    ) -> zenoh::Result<RealTime> {
        let layout = store.slots().layout();
        let mut publishers = Vec::with_capacity(layout.len());
        for name in layout.names() {
            publishers.push(if is_plain_key(name) {
                Some(
                    session
                        .declare_publisher(keys.memory(name))
                        .encoding(Encoding::APPLICATION_JSON)
                        .wait()?,
                )
            } else {
                None
            });
        }
        Ok(RealTime {
            publishers,
            kinds: (0..layout.len()).map(|index| layout.kind(index)).collect(),
            last: None,
            read: vec![0.0; layout.len()],
            stamp: 0,
            cycle_slot: store.slot_index("DCM/Cycle"),
            last_cycle: None,
            every,
            due: Instant::now(),
        })
    }

    /// Put the values that changed since the last put, once per new cycle (or at the rate).
    fn publish(&mut self, store: &Store, counters: &Counters) {
        let slots = store.slots();
        if slots.updated_us() == self.stamp {
            return;
        }
        let now = Instant::now();
        if self.every.is_some() && now < self.due {
            return;
        }
        // The values and their stamp, all of one cycle (a cycle's writes under way at each
        // try: read again at the next look, still due).
        let read = slots.read_consistent(CONSISTENT_READ_TRIES, |slots| {
            for (index, value) in self.read.iter_mut().enumerate() {
                *value = slots.get(index);
            }
            slots.updated_us()
        });
        let Some(stamp) = read else { return };
        self.stamp = stamp;
        if let Some(every) = self.every {
            self.due = now + every;
        }
        // With a rate, cycles are skipped on purpose: only those the adapter missed while
        // publishing every cycle are counted (an overload signal).
        if let (Some(slot), None) = (self.cycle_slot, self.every) {
            let cycle = self.read[slot] as u64;
            if let Some(last) = self.last_cycle {
                counters.cycles_skipped.fetch_add(cycle.saturating_sub(last + 1), Ordering::Relaxed);
            }
            self.last_cycle = Some(cycle);
        }
        // The cycle's time, for a subscriber that measures how late the value is.
        let attachment = stamp.to_le_bytes();
        let last = self.last.get_or_insert_with(|| vec![f64::NAN; self.read.len()]);
        for (index, (&value, previous)) in self.read.iter().zip(last.iter_mut()).enumerate() {
            if value.to_bits() == previous.to_bits() {
                continue;
            }
            *previous = value;
            let Some(publisher) = &self.publishers[index] else { continue };
            let payload = match self.kinds[index] {
                SlotKind::Float => {
                    serde_json::Number::from_f64(value).map_or("null".into(), |n| n.to_string())
                }
                SlotKind::Int => (value as i64).to_string(),
                SlotKind::Bool => (value != 0.0).to_string(),
            };
            if publisher.put(payload).attachment(&attachment[..]).wait().is_ok() {
                Counters::bump(&counters.values_put);
            }
        }
    }
}

/// The adapter's thread's state.
pub(crate) struct Feed {
    pub(crate) session: Session,
    pub(crate) keys: KeySpace,
    pub(crate) store: Arc<Store>,
    pub(crate) items: QueuedEvents,
    pub(crate) events: Vec<Publisher<'static>>,
    pub(crate) modules: Arc<ModuleSet>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) stop: Arc<AtomicBool>,
    /// Half the DCM's period: a new cycle is seen within it.
    pub(crate) nap: Duration,
    /// With `[zenoh.ros2]`: the view, and `/cmd_vel`'s subscriber.
    pub(crate) ros2: Option<(Ros2View, Option<zenoh::pubsub::Subscriber<()>>)>,
}

impl Feed {
    pub(crate) fn run(mut self, mut real_time: RealTime, presence: LivelinessToken) {
        let mut module_tokens: BTreeMap<String, LivelinessToken> = BTreeMap::new();
        while !self.stop.load(Ordering::Relaxed) {
            match self.items.recv_timeout(self.nap) {
                Ok(raised) => {
                    self.put(raised);
                    while let Some(raised) = self.items.try_recv() {
                        self.put(raised);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Some(names) = self.modules.take_change() {
                module_tokens.retain(|name, _| names.contains(name));
                for name in names.into_iter().filter(|name| is_plain_key(name) && !name.contains('/')) {
                    if let Entry::Vacant(entry) = module_tokens.entry(name) {
                        let token =
                            self.session.liveliness().declare_token(self.keys.module(entry.key())).wait();
                        if let Ok(token) = token {
                            entry.insert(token);
                        }
                    }
                }
            }
            real_time.publish(&self.store, &self.counters);
            if let Some((view, _)) = &mut self.ros2 {
                view.publish(&self.store, &self.counters);
            }
        }
        drop((module_tokens, presence, real_time, self.ros2.take()));
        let _ = self.session.close().wait();
    }

    fn put(&self, raised: Raised) {
        let Raised { index, value, .. } = raised;
        let payload = serde_json::to_vec(&value).unwrap_or_else(|_| b"null".to_vec());
        if self.events[index].put(payload).wait().is_ok() {
            Counters::bump(&self.counters.events_put);
        }
    }
}
