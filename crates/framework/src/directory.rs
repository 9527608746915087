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
        .ok_or_else(|| CallError::not_found(format!("no module named {}", excerpt(&module))))?;
    Ok(infos.into_iter().map(|m| vec![m.name, m.signature, m.help]).collect())
}

/// `log(level, target, message)`: a module process's log line, raised as the
/// `ServiceDirectory/Log` event under its client's name while someone subscribes.
fn log(
    directory: &mut ServiceDirectory,
    context: &ModuleContext,
    (level, target, message): (String, String, String),
) -> Result<(), CallError> {
    directory.broker.publish_client_log(&context.caller(), &level, target, message)
}

/// `stats()`: the broker's counters, with the clients the caller may see.
fn stats(directory: &mut ServiceDirectory, context: &ModuleContext, (): ()) -> Result<Value, CallError> {
    Ok(directory.broker.stats_for(&context.caller()))
}

impl Module for ServiceDirectory {
    fn name(&self) -> String {
        "ServiceDirectory".into()
    }

    fn description(&self) -> String {
        "Lists the modules the broker knows and shows its counters.".into()
    }

    /// The broker process's own `tracing` lines go to `ServiceDirectory/Log`'s subscribers.
    fn started(&mut self, _: &ModuleContext) {
        self.broker.forward_own_logs();
    }

    fn methods(table: &mut Methods<Self>) {
        table
            .add("modules", "Names of every registered module.", modules)
            .add("methods", "Methods of one module: [[name, signature, help], ...].", methods)
            .add("log", "A module process's log line (level, target, message) for ServiceDirectory/Log.", log)
            .add(
                "stats",
                "Broker counters: calls, errors, refusals, events sent and dropped, clients.",
                stats,
            );
    }
}
