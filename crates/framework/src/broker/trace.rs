//! What the core tells whoever listens about each call and event (`ServiceDirectory/Trace`),
//! and the per-module counters every finished call adds to.

use std::time::Instant;

use naobroker_protocol::Value;

use super::Broker;
use crate::error::CallResult;
use crate::identity::Caller;

/// The event the core raises per finished call and per published event, only while someone
/// subscribes to it.
pub(super) const TRACE_EVENT: &str = "ServiceDirectory/Trace";

/// Events of the broker's own (`ServiceDirectory/Trace`, `ServiceDirectory/Log`): never
/// traced, so that tracing and logging do not feed themselves.
const OWN_EVENTS: &str = "ServiceDirectory/";

impl Broker {
    /// A call to `module.method` ended: counted for its module, and traced when someone listens.
    pub(super) fn finish_call(
        &self,
        caller: &Caller,
        module: &str,
        method: &str,
        started: Instant,
        result: &CallResult,
    ) {
        let latency = started.elapsed();
        let traced = {
            let mut router = self.router().borrow_mut();
            router.call_counts.record(module, latency, result.is_ok());
            router.events.traced()
        };
        if !traced {
            return;
        }
        let mut fields = vec![
            ("kind".into(), "call".into()),
            ("caller".into(), self.caller_name(caller).into()),
            ("module".into(), module.into()),
            ("method".into(), method.into()),
            ("duration_us".into(), u64::try_from(latency.as_micros()).unwrap_or(u64::MAX).into()),
            ("ok".into(), result.is_ok().into()),
        ];
        if let Err(error) = result {
            fields.push(("error".into(), error.to_string().into()));
        }
        self.publish(TRACE_EVENT, &Value::Map(fields));
    }

    /// Event `name` is being published: traced with its number of subscribers when someone
    /// listens (the call that raised it, `ALMemory.raiseEvent` for a client, is traced too).
    pub(super) fn trace_event(&self, name: &str) {
        let subscribers = {
            let events = &self.router().borrow().events;
            if name.starts_with(OWN_EVENTS) || !events.traced() {
                return;
            }
            events.subscriber_count(name)
        };
        let fields = vec![
            ("kind".into(), "event".into()),
            ("event".into(), name.into()),
            ("subscribers".into(), (subscribers as u64).into()),
        ];
        self.publish(TRACE_EVENT, &Value::Map(fields));
    }

    /// The client's name and id (`naocli (client-0a1b…)`), or `broker` for the broker's own code.
    fn caller_name(&self, caller: &Caller) -> String {
        match caller {
            Caller::Broker => "broker".to_owned(),
            Caller::Client(client) => self.clients().describe(client),
        }
    }
}
