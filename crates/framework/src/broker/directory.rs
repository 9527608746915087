//! The broker's own `ServiceDirectory` module: what is registered, and the counters.

use std::cell::Cell;

use naobroker_protocol::Value;
use zeromq::RouterSendHalf;

use super::{Broker, ClientId};
use crate::error::CallError;
use crate::module::{Methods, Module};

pub(crate) struct ServiceDirectory {
    pub(crate) broker: Broker,
}

impl Module for ServiceDirectory {
    fn name(&self) -> String {
        "ServiceDirectory".into()
    }

    fn description(&self) -> String {
        "Lists the modules the broker knows and shows its counters.".into()
    }

    fn methods(methods: &mut Methods<Self>) {
        methods
            .add("modules", "Names of every registered module.", |this, _, ()| Ok(this.broker.module_names()))
            .add(
                "methods",
                "Methods of one module: [[name, signature, help], ...].",
                |this, _, (module,): (String,)| {
                    let infos = this.broker.module_methods(&module).ok_or_else(|| {
                        CallError::new(format!("no module named {}", naobroker_protocol::excerpt(&module)))
                    })?;
                    Ok(infos.into_iter().map(|m| vec![m.name, m.signature, m.help]).collect::<Vec<_>>())
                },
            )
            .add(
                "stats",
                "Broker counters: calls, errors, refusals, events sent and dropped, clients.",
                |this, _, ()| Ok(this.broker.stats()),
            );
    }
}

impl Broker {
    /// Broker counters, as shown by `naocli stats`.
    pub fn stats(&self) -> Value {
        let c = &self.inner.counters;
        let state = self.inner.state.borrow();
        let clients: Vec<Value> = state
            .clients
            .iter()
            .map(|(peer, client)| {
                Value::Map(vec![
                    ("id".into(), ClientId(peer.clone()).to_string().into()),
                    ("name".into(), client.name.as_str().into()),
                    ("liveness".into(), client.keeps_alive.is_some().into()),
                    (
                        "modules".into(),
                        Value::Array(client.modules.iter().map(|m| m.as_str().into()).collect()),
                    ),
                    ("subscriptions".into(), (client.subscriptions(&state.events) as u64).into()),
                    ("events_dropped".into(), client.events_dropped.into()),
                    ("queued_messages".into(), (client.outbox.queue.len() as u64).into()),
                    ("queued_bytes".into(), (client.outbox.bytes as u64).into()),
                ])
            })
            .collect();
        let count = |counter: &Cell<u64>| Value::from(counter.get());
        Value::Map(vec![
            ("calls".into(), count(&c.calls)),
            ("call_errors".into(), count(&c.call_errors)),
            ("bad_frames".into(), count(&c.bad_frames)),
            ("refused".into(), count(&c.refused)),
            ("events_sent".into(), count(&c.events_sent)),
            ("events_dropped".into(), count(&c.events_dropped)),
            ("sends_deferred".into(), count(&c.sends_deferred)),
            ("clients_disconnected".into(), count(&c.clients_disconnected)),
            (
                "oversized_frames".into(),
                self.inner.senders.iter().map(RouterSendHalf::oversized_message_drops).sum::<u64>().into(),
            ),
            ("pending_remote_calls".into(), (state.pending.len() as u64).into()),
            ("modules".into(), (state.modules.len() as u64).into()),
            ("clients".into(), Value::Array(clients)),
        ])
    }
}
