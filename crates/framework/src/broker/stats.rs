//! The broker's counters, as `ServiceDirectory.stats` and `naocli stats` show them.

use std::cell::Cell;

use naobroker_protocol::Value;

use super::Broker;

impl Broker {
    /// Broker counters: calls, errors, refusals, events, each client's queue, and every
    /// wire's own counters.
    pub fn stats(&self) -> Value {
        let c = &self.inner.counters;
        let state = self.inner.state.borrow();
        let clients: Vec<Value> = state
            .clients
            .iter()
            .map(|(client, known)| {
                Value::Map(vec![
                    ("id".into(), client.to_string().into()),
                    ("name".into(), known.name.as_str().into()),
                    ("liveness".into(), known.keeps_alive.is_some().into()),
                    (
                        "modules".into(),
                        Value::Array(known.modules.iter().map(|m| m.as_str().into()).collect()),
                    ),
                    ("subscriptions".into(), (known.subscriptions(&state.events) as u64).into()),
                    ("events_dropped".into(), known.events_dropped.into()),
                    ("queued_messages".into(), (known.outbox.queue.len() as u64).into()),
                    ("queued_bytes".into(), (known.outbox.bytes as u64).into()),
                ])
            })
            .collect();
        let count = |counter: &Cell<u64>| Value::from(counter.get());
        let mut counters = vec![
            ("calls".into(), count(&c.calls)),
            ("call_errors".into(), count(&c.call_errors)),
            ("bad_frames".into(), count(&c.bad_frames)),
            ("refused".into(), count(&c.refused)),
            ("events_sent".into(), count(&c.events_sent)),
            ("events_dropped".into(), count(&c.events_dropped)),
            ("sends_deferred".into(), count(&c.sends_deferred)),
            ("clients_disconnected".into(), count(&c.clients_disconnected)),
        ];
        for wire in &state.wires {
            counters.extend(wire.counters().into_iter().map(|(name, value)| (name.into(), value.into())));
        }
        counters.extend([
            ("pending_remote_calls".into(), (state.pending.len() as u64).into()),
            ("modules".into(), (state.modules.len() as u64).into()),
            ("clients".into(), Value::Array(clients)),
        ]);
        Value::Map(counters)
    }
}
