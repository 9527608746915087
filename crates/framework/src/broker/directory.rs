//! The broker's own `ServiceDirectory` module: what is registered, and the counters.

use super::Broker;
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
