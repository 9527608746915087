//! The broker's counters, as `ServiceDirectory.stats` and `naocli stats` show them, and the
//! per-module call counters `naocli top` computes rates and latencies from.

use std::cell::Cell;
use std::collections::HashSet;
use std::time::Duration;

use naobroker_protocol::Value;

use super::clients::{ClientSide, ClientState};
use super::Broker;
use crate::hashing::KeyedMap;
use crate::identity::{Caller, ClientId};

/// Latency buckets per module: bucket `i` counts calls that took less than `2^i` µs (the last
/// one, everything longer).
const LATENCY_BUCKETS: usize = 32;

/// One module's calls since the broker started.
struct ModuleCalls {
    calls: u64,
    errors: u64,
    total_latency_us: u64,
    latency_buckets: [u64; LATENCY_BUCKETS],
}

impl ModuleCalls {
    fn add(&mut self, latency: Duration, ok: bool) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.calls += 1;
        self.errors += u64::from(!ok);
        self.total_latency_us = self.total_latency_us.saturating_add(micros);
        let bucket = (u64::BITS - micros.leading_zeros()) as usize;
        self.latency_buckets[bucket.min(LATENCY_BUCKETS - 1)] += 1;
    }
}

/// Calls, errors and latencies per module: a map lookup and a few additions per call, an
/// allocation only on a module's first call. The router's: a module's entry goes with the
/// module, so that a client registering modules under ever new names leaves nothing behind.
#[derive(Default)]
pub(super) struct CallCounts {
    by_module: KeyedMap<String, ModuleCalls>,
}

impl CallCounts {
    pub(super) fn record(&mut self, module: &str, latency: Duration, ok: bool) {
        if let Some(counts) = self.by_module.get_mut(module) {
            return counts.add(latency, ok);
        }
        let mut fresh =
            ModuleCalls { calls: 0, errors: 0, total_latency_us: 0, latency_buckets: [0; LATENCY_BUCKETS] };
        fresh.add(latency, ok);
        self.by_module.insert(module.to_owned(), fresh);
    }

    /// `module` left: its counters go with it.
    pub(super) fn forget(&mut self, module: &str) {
        self.by_module.remove(module);
    }

    /// `{module: {calls, errors, total_latency_us, latency_buckets}}`.
    fn to_value(&self) -> Value {
        let mut modules: Vec<(&String, &ModuleCalls)> = self.by_module.iter().collect();
        modules.sort_by(|a, b| a.0.cmp(b.0));
        let entries = modules.into_iter().map(|(module, counts)| {
            let buckets = counts.latency_buckets.iter().map(|&count| Value::from(count)).collect();
            let counters = Value::Map(vec![
                ("calls".into(), counts.calls.into()),
                ("errors".into(), counts.errors.into()),
                ("total_latency_us".into(), counts.total_latency_us.into()),
                ("latency_buckets".into(), Value::Array(buckets)),
            ]);
            (module.as_str().into(), counters)
        });
        Value::Map(entries.collect())
    }
}

impl ClientSide {
    /// Every client's entry that `caller` may read (see [`Broker::stats_for`]), its modules'
    /// callbacks counted by `callbacks_of`.
    fn client_entries(
        &self,
        caller: &Caller,
        callbacks_of: impl Fn(&HashSet<String>) -> usize,
    ) -> Vec<Value> {
        let clients = self.state.borrow();
        let own =
            caller.client().and_then(|client| clients.connected.get(client).map(|known| (client, known)));
        let visible = |client: &ClientId, known: &ClientState| match (caller, own) {
            (Caller::Broker, _) => true,
            (Caller::Client(_), Some((_, me))) if me.connection.reads_all_stats() => true,
            (Caller::Client(_), Some((id, me))) => {
                client == id || (!me.session.is_empty() && known.keeps_alive.as_ref() == Some(&me.session))
            }
            (Caller::Client(id), None) => client == id,
        };
        clients
            .connected
            .iter()
            .filter(|(client, known)| visible(client, known))
            .map(|(client, known)| {
                Value::Map(vec![
                    ("id".into(), client.to_string().into()),
                    ("name".into(), known.name.as_str().into()),
                    ("liveness".into(), known.keeps_alive.is_some().into()),
                    (
                        "modules".into(),
                        Value::Array(known.modules.iter().map(|m| m.as_str().into()).collect()),
                    ),
                    ("subscriptions".into(), (known.subscriptions(&callbacks_of) as u64).into()),
                    ("events_dropped".into(), known.events_dropped.into()),
                    ("queued_messages".into(), (known.outbox.queue.len() as u64).into()),
                    ("queued_bytes".into(), (known.outbox.bytes as u64).into()),
                ])
            })
            .collect()
    }
}

impl Broker {
    /// Broker counters: calls, errors, refusals, events, each client's queue, and every
    /// wire's own counters; every client's entry.
    pub fn stats(&self) -> Value {
        self.stats_for(&Caller::Broker)
    }

    /// [`Self::stats`] as `caller` may read it: the broker's own code and a client the
    /// configuration names see every client's entry; any other client, its own (its main
    /// connection and its session's liveness connections): who else is connected, with
    /// which modules and queues, is not its business.
    pub fn stats_for(&self, caller: &Caller) -> Value {
        let (c, clients) = (&self.inner.counters, self.clients());
        let k = &clients.counters;
        let router = self.router().borrow();
        let entries = clients.client_entries(caller, |modules| router.events.callbacks_of(modules));
        let count = |counter: &Cell<u64>| Value::from(counter.get());
        let mut counters = vec![
            ("calls".into(), count(&c.calls)),
            ("call_errors".into(), count(&c.call_errors)),
            ("bad_frames".into(), count(&k.bad_frames)),
            ("refused".into(), count(&k.refused)),
            ("events_sent".into(), count(&c.events_sent)),
            ("events_dropped".into(), count(&c.events_dropped)),
            ("sends_deferred".into(), count(&k.sends_deferred)),
            ("replies_encoded_aside".into(), count(&k.replies_encoded_aside)),
            ("clients_disconnected".into(), count(&k.clients_disconnected)),
            ("unfinished_bytes".into(), (clients.unfinished.held() as u64).into()),
            ("unfinished_refused".into(), clients.unfinished.refusals().into()),
        ];
        for wire in &router.wires {
            counters.extend(wire.counters().into_iter().map(|(name, value)| (name.into(), value.into())));
        }
        counters.extend([
            ("pending_remote_calls".into(), (router.pending.len() as u64).into()),
            ("modules".into(), (router.modules.len() as u64).into()),
            ("by_module".into(), router.call_counts.to_value()),
            ("clients".into(), Value::Array(entries)),
        ]);
        Value::Map(counters)
    }
}
