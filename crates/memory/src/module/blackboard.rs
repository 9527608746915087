//! ALMemory as the broker's blackboard: the typed writes in-process code makes (the DCM,
//! ALMotion, ALSensors, modules in the broker), checked as the broker's own calls are.

use naobroker_framework::{Blackboard, CallError, Caller, Value};

use super::ALMemory;
use crate::store::EntryKind;

impl ALMemory {
    /// Another handle on the same store and events, for the broker to write through while
    /// the module's actor serves calls.
    pub(super) fn shared(&self) -> ALMemory {
        ALMemory {
            store: self.store.clone(),
            broker: self.broker.clone(),
            config: self.config.clone(),
            events: self.events.clone(),
            listing: self.listing.clone(),
        }
    }
}

impl Blackboard for ALMemory {
    fn declare_event(&self, name: &str) -> Result<(), CallError> {
        self.check_write(&Caller::Broker, name, &Value::Nil)?;
        self.declare(name, EntryKind::Event, None)
    }

    fn raise_event(&self, name: &str, value: Value) -> Result<(), CallError> {
        self.check_write(&Caller::Broker, name, &value)?;
        self.raise(name, value, EntryKind::Event, None)
    }

    fn insert_data(&self, key: &str, value: Value) -> Result<(), CallError> {
        self.check_write(&Caller::Broker, key, &value)?;
        self.insert(key, value, EntryKind::Data, None)
    }
}
