//! The message that runs one method of a module's actor, wherever the call came from.

use actix::Message;
use naobroker_protocol::Value;

use crate::error::CallResult;
use crate::identity::Caller;

/// A call delivered to a module actor. `post` runs it as a task and answers its id.
pub struct Invoke {
    pub method: String,
    pub args: Vec<Value>,
    pub post: bool,
    /// Who asked, for the module's permission checks.
    pub caller: Caller,
    /// For an event callback: events this subscriber lost since its previous one.
    pub lost: u64,
}

impl Message for Invoke {
    type Result = CallResult;
}
