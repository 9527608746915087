//! The router's own state: the modules it routes calls to (actors in this process, modules
//! clients serve), who listens to which event, the calls forwarded to a client and waiting
//! for its answer, the keys modules reserved, and what in-process code writes to.
//!
//! The client side (`clients.rs`) holds the rest: connections, sessions, liveness, queues and
//! event windows. Each has its own cell: code that needs both borrows both.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use naobroker_protocol::MethodInfo;
use tokio::sync::oneshot;

use super::adapter::Wire;
use super::blackboard::Blackboard;
use super::events::Registry;
use crate::error::CallResult;
use crate::hashing::KeyedMap;
use crate::identity::{Caller, ClientId};
use crate::invoke::ModuleHandle;

/// Where a module runs: an actor in this process, or a client's process.
pub(super) enum Location {
    Local(ModuleHandle),
    Remote(ClientId),
}

pub(super) struct ModuleEntry {
    pub(super) location: Location,
    pub(super) methods: Vec<MethodInfo>,
}

/// Who waits for a forwarded call's answer.
pub(super) enum Origin {
    Client { client: ClientId, id: u64 },
    Local { reply: oneshot::Sender<CallResult>, caller: Caller },
}

impl Origin {
    pub(super) fn caller(&self) -> Caller {
        match self {
            Origin::Client { client, .. } => Caller::Client(client.clone()),
            Origin::Local { caller, .. } => caller.clone(),
        }
    }
}

/// A call forwarded to a remote module. It waits as long as the module's client lives.
pub(super) struct PendingCall {
    pub(super) target: ClientId,
    pub(super) module: String,
    pub(super) method: String,
    pub(super) origin: Origin,
    /// When it was forwarded, for the per-module counters and the trace.
    pub(super) started: Instant,
}

#[derive(Default)]
pub(super) struct Router {
    pub(super) modules: KeyedMap<String, ModuleEntry>,
    pub(super) events: Registry,
    /// Keys and events without a module prefix that a module reserved (NAOqi's standard
    /// names, `robotHasFallen`, `FrontTactilTouched`): key → module.
    pub(super) reserved_keys: HashMap<String, String>,
    pub(super) pending: HashMap<u64, PendingCall>,
    pub(super) next_id: u64,
    /// The wires listening for clients, for their counters.
    pub(super) wires: Vec<Rc<dyn Wire>>,
    pub(super) blackboard: Option<Rc<dyn Blackboard>>,
}
