//! The ALSensors module: follows the hook's records and writes them to ALMemory, in
//! the order the cycle thread queued them.

use std::cell::Cell;
use std::os::unix::net::UnixDatagram;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use naobroker_dcm_module::HookConnection;
use naobroker_framework::{Broker, Methods, Module, ModuleContext, Value};
use naobroker_rt::Wakeups;

use crate::catalog::{Key, Record};
use crate::watch::{Installed, WatchStats};

/// Records written to ALMemory, by kind.
#[derive(Default)]
struct Written {
    raised: Cell<u64>,
    stored: Cell<u64>,
    failed: Cell<u64>,
}

pub struct ALSensors {
    keys: Vec<Key>,
    stats: Arc<WatchStats>,
    written: Rc<Written>,
    broker: Broker,
    follow: Option<(rtrb::Consumer<Record>, UnixDatagram)>,
    _hook: HookConnection,
}

impl ALSensors {
    pub(crate) fn new(installed: Installed, broker: Broker) -> ALSensors {
        let actor = installed.actor;
        // NAOqi's names have no ALSensors/ prefix: reserved, so that no client fakes a touch.
        broker.reserve_keys("ALSensors", actor.keys.iter().map(|key| key.name()));
        ALSensors {
            keys: actor.keys,
            stats: actor.stats,
            written: Rc::default(),
            broker,
            follow: Some((actor.records, actor.wake)),
            _hook: installed.hook,
        }
    }

    fn event_names(&self) -> Vec<&'static str> {
        self.keys.iter().filter(|key| key.is_event()).map(|key| key.name()).collect()
    }

    fn stats(&self) -> Value {
        Value::Map(vec![
            ("raised".into(), self.written.raised.get().into()),
            ("stored".into(), self.written.stored.get().into()),
            ("failed".into(), self.written.failed.get().into()),
            ("dropped".into(), self.stats.dropped.load(Ordering::Relaxed).into()),
        ])
    }

    /// Declare the events, then write each record as the cycle thread queued it: one at
    /// a time, so that subscribers get the events of one sensor in order.
    fn follow(&mut self) {
        let Some((mut records, wake)) = self.follow.take() else { return };
        let broker = self.broker.clone();
        let written = Rc::clone(&self.written);
        let events = self.event_names();
        actix_rt::spawn(async move {
            for event in events {
                if let Err(error) = broker.declare_event(event) {
                    tracing::error!(event, %error, "cannot declare a sensor event");
                }
            }
            let wakeups = match Wakeups::new(wake) {
                Ok(wakeups) => wakeups,
                Err(error) => {
                    tracing::error!(%error, "cannot follow the sensor hook");
                    return;
                }
            };
            let mut batch = Vec::with_capacity(crate::watch::QUEUE_CAPACITY);
            while wakeups.next().await {
                while let Ok(record) = records.pop() {
                    batch.push(record);
                }
                for record in batch.drain(..) {
                    write(&broker, &written, record);
                }
            }
        });
    }
}

/// Raise the record's event, or store its value.
fn write(broker: &Broker, written: &Written, record: Record) {
    let (method, count) =
        if record.raise { ("raiseEvent", &written.raised) } else { ("insertData", &written.stored) };
    let (key, value) = (record.key.name(), record.value.to_value());
    let result = if record.raise { broker.raise_event(key, value) } else { broker.insert_data(key, value) };
    match result {
        Ok(_) => count.set(count.get() + 1),
        Err(error) => {
            written.failed.set(written.failed.get() + 1);
            tracing::warn!(key = record.key.name(), method, %error, "could not write a sensor value");
        }
    }
}

impl Module for ALSensors {
    fn name(&self) -> String {
        "ALSensors".into()
    }

    fn description(&self) -> String {
        "NAOqi's touch, bumper, chest button, foot contact, sonar and battery events, raised on the edges of \
         the DCM's sensor values."
            .into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "getEventList",
            "The events raised on this robot (its description's sensors allow them).",
            |this, _, ()| Ok(this.event_names()),
        )
        .add(
            "stats",
            "Records written to ALMemory (raised, stored, failed) and dropped by a full queue.",
            |this, _, ()| Ok(this.stats()),
        );
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.follow();
    }
}
