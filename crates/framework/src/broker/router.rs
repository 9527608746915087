//! The router: the modules it routes calls to (actors in this process, modules clients
//! serve), who listens to which event, the calls forwarded to a client and waiting for its
//! answer, the keys modules reserved, what in-process code writes to, and each module's
//! call counters.
//!
//! Its behaviour is here (routing, calls waiting, modules and clients going), in
//! `permissions.rs` and in `events.rs` and `fanout.rs` (subscribers and fan-out). The
//! client side (`clients.rs`) holds the rest: connections, sessions, liveness, queues and
//! event windows. The router never borrows the client side: where an operation needs both,
//! the broker asks the router what to do (a [`Route`], the calls a gone module leaves
//! waiting) and has the client side do it.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Instant;

use naobroker_protocol::{excerpt, MethodInfo};
use tokio::sync::oneshot;

use super::adapter::Wire;
use super::blackboard::Blackboard;
use super::events::Registry;
use super::stats::CallCounts;
use crate::error::{CallError, CallResult};
use crate::hashing::KeyedMap;
use crate::identity::{Caller, ClientId};
use crate::invoke::{MethodId, ModuleHandle};

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
    pub(super) call_counts: CallCounts,
}

/// Where a call goes, decided once by the router: an in-process module's actor with the
/// method resolved (`None`: it has no such method, and the call fails as a call), or the
/// client serving the module.
pub(super) enum Route {
    Local(ModuleHandle, Option<MethodId>),
    Remote(ClientId),
}

impl Router {
    /// Where `module.method` runs, its name resolved: not found when there is no such module.
    #[inline]
    pub(super) fn route(&self, module: &str, method: &str) -> Result<Route, CallError> {
        match &self.modules.get(module) {
            None => Err(CallError::not_found(format!("no module named {}", excerpt(module)))),
            Some(entry) => Ok(match &entry.location {
                Location::Local(actor) => Route::Local(Rc::clone(actor), actor.resolve(method)),
                Location::Remote(client) => Route::Remote(client.clone()),
            }),
        }
    }

    /// Where `client`'s call to `module.method` goes: [`Self::route`], and `exit` of a module
    /// another client serves refused.
    #[inline]
    pub(super) fn route_from(
        &self,
        client: &ClientId,
        module: &str,
        method: &str,
    ) -> Result<Route, CallError> {
        let route = self.route(module, method)?;
        match &route {
            Route::Remote(target) if method == "exit" && target != client => Err(CallError::refused(
                format!("{module}.exit: only the client that registered {module} may make it exit"),
            )),
            _ => Ok(route),
        }
    }

    /// A call forwarded to `target`'s module waits for its answer: the id it goes under.
    pub(super) fn wait_for(&mut self, target: &ClientId, module: &str, method: &str, origin: Origin) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let call = PendingCall {
            target: target.clone(),
            module: module.to_owned(),
            method: method.to_owned(),
            origin,
            started: Instant::now(),
        };
        self.pending.insert(id, call);
        id
    }

    /// `client` answered the forwarded call `id`: the call, when it was sent to that client.
    pub(super) fn answered(&mut self, client: &ClientId, id: u64) -> Option<PendingCall> {
        match self.pending.get(&id) {
            Some(call) if call.target == *client => self.pending.remove(&id),
            _ => None,
        }
    }

    /// Forget `module` with its callbacks and counters: the calls that waited for it, to be
    /// failed; `None` when there was no such module.
    pub(super) fn remove_module(&mut self, module: &str) -> Option<Vec<PendingCall>> {
        let entry = self.modules.remove(module)?;
        self.events.remove_module(module);
        self.call_counts.forget(module);
        Some(match entry.location {
            Location::Remote(client) => {
                let ids: Vec<u64> = self
                    .pending
                    .iter()
                    .filter(|(_, call)| call.target == client && call.module == module)
                    .map(|(id, _)| *id)
                    .collect();
                ids.into_iter().filter_map(|id| self.pending.remove(&id)).collect()
            }
            Location::Local(_) => Vec::new(),
        })
    }

    /// `client` is gone: forget its event streams and the calls it waited for (its modules
    /// go one by one, with [`Self::remove_module`]).
    pub(super) fn client_left(&mut self, client: &ClientId, events: &HashSet<String>) {
        for event in events {
            self.events.remove_client(event, client);
        }
        self.pending
            .retain(|_, call| !matches!(&call.origin, Origin::Client { client: c, .. } if c == client));
    }
}
