//! Log lines as the `ServiceDirectory/Log` event: the broker process's own `tracing` lines
//! (through [`crate::logs::LogForwarding`]) and the lines module processes send it.

use naobroker_protocol::Value;

use super::Broker;
use crate::error::CallError;
use crate::identity::Caller;
use crate::logs::{self, LogLine, LOG_EVENT};

impl Broker {
    /// Raise this process's `tracing` lines, as [`crate::logs::LogForwarding`] hands them
    /// over, as `ServiceDirectory/Log` events from module `broker`.
    pub(crate) fn forward_own_logs(&self) {
        let mut lines = logs::attach_sink();
        let broker = self.downgrade();
        actix_rt::spawn(async move {
            while let Some(line) = lines.recv().await {
                let Some(broker) = broker.upgrade() else { break };
                broker.publish_log("broker", line);
            }
        });
    }

    /// Raise `line` of `module` as a `ServiceDirectory/Log` event when someone subscribes.
    pub(crate) fn publish_log(&self, module: &str, line: LogLine) {
        if !self.has_subscribers(LOG_EVENT) {
            return;
        }
        let value = Value::Map(vec![
            ("level".into(), line.level.into()),
            ("module".into(), module.into()),
            ("target".into(), line.target.into()),
            ("message".into(), line.message.into()),
        ]);
        logs::delivering(|| self.publish(LOG_EVENT, &value));
    }
}

impl Broker {
    /// A line a module process sends (`ServiceDirectory.log`): raised under its client's name.
    pub(crate) fn publish_client_log(
        &self,
        caller: &Caller,
        level: &str,
        target: String,
        message: String,
    ) -> Result<(), CallError> {
        let level: tracing::Level = level.parse().map_err(|_| {
            CallError::bad_argument(format!("{level:?}: expected TRACE, DEBUG, INFO, WARN or ERROR"))
        })?;
        let module = match caller {
            Caller::Broker => "broker".to_owned(),
            Caller::Client(client) => self.clients().name_of(client),
        };
        self.publish_log(&module, LogLine { level: level.as_str(), target, message });
        Ok(())
    }
}
