//! The broker's own `ServiceDirectory` module: what is registered, and the counters.

use naobroker_protocol::{excerpt, Value};

use crate::broker::Broker;
use crate::error::CallError;
use crate::module::{Methods, Module, ModuleContext};

pub(crate) struct ServiceDirectory {
    pub(crate) broker: Broker,
}

/// `modules()`: names of every registered module.
fn modules(directory: &mut ServiceDirectory, _: &ModuleContext, (): ()) -> Result<Vec<String>, CallError> {
    Ok(directory.broker.module_names())
}

/// `methods(module)`: `[[name, signature, help], ...]`.
fn methods(
    directory: &mut ServiceDirectory,
    _: &ModuleContext,
    (module,): (String,),
) -> Result<Vec<Vec<String>>, CallError> {
    let infos = directory
        .broker
        .module_methods(&module)
        .ok_or_else(|| CallError::new(format!("no module named {}", excerpt(&module))))?;
    Ok(infos.into_iter().map(|m| vec![m.name, m.signature, m.help]).collect())
}

/// `stats()`: the broker's counters.
fn stats(directory: &mut ServiceDirectory, _: &ModuleContext, (): ()) -> Result<Value, CallError> {
    Ok(directory.broker.stats())
}

impl Module for ServiceDirectory {
    fn name(&self) -> String {
        "ServiceDirectory".into()
    }

    fn description(&self) -> String {
        "Lists the modules the broker knows and shows its counters.".into()
    }

    fn methods(table: &mut Methods<Self>) {
        table
            .add("modules", "Names of every registered module.", modules)
            .add("methods", "Methods of one module: [[name, signature, help], ...].", methods)
            .add(
                "stats",
                "Broker counters: calls, errors, refusals, events sent and dropped, clients.",
                stats,
            );
    }
}
