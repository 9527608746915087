//! Routing calls: to an actor in this process or to the client serving the module, and the
//! calls forwarded to a client and still waiting for its answer.

use std::rc::Rc;
use std::time::Instant;

use naobroker_protocol::{excerpt, Value};
use tokio::sync::oneshot;

use super::adapter::{Connection, Outbound};
use super::{bump, Broker, Location, ModuleEntry};
use crate::error::{CallError, CallResult};
use crate::identity::{Caller, ClientId};
use crate::invoke::Invoke;

/// Who waits for a forwarded call's answer.
pub(super) enum Origin {
    Client { client: ClientId, id: u64 },
    Local { reply: oneshot::Sender<CallResult>, caller: Caller },
}

impl Origin {
    fn caller(&self) -> Caller {
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

impl Broker {
    /// Call `module.method(args)` from the broker's own code.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        self.call_as(Caller::Broker, module, method, args, post).await
    }

    async fn call_as(
        &self,
        caller: Caller,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
    ) -> CallResult {
        bump(&self.inner.counters.calls);
        let started = Instant::now();
        let location = {
            let state = self.inner.state.borrow();
            match state.modules.get(module) {
                None => None,
                Some(ModuleEntry { location: Location::Local(recipient), .. }) => Some(Ok(recipient.clone())),
                Some(ModuleEntry { location: Location::Remote(client), .. }) => Some(Err(client.clone())),
            }
        };
        let result = match location {
            None => Err(CallError::new(format!("no module named {}", excerpt(module)))),
            Some(Ok(recipient)) => {
                let invoke =
                    Invoke { method: method.to_owned(), args, post, caller: caller.clone(), lost: 0 };
                let result = recipient
                    .send(invoke)
                    .await
                    .unwrap_or_else(|_| Err(CallError::new(format!("module {module} has stopped"))));
                self.finish_call(&caller, module, method, started, &result);
                result
            }
            Some(Err(client)) => {
                let (reply, answer) = oneshot::channel();
                self.forward(&client, module, method, args, post, Origin::Local { reply, caller });
                answer.await.unwrap_or_else(|_| Err(CallError::new(format!("module {module} went away"))))
            }
        };
        if result.is_err() {
            bump(&self.inner.counters.call_errors);
        }
        result
    }

    fn forward(
        &self,
        target: &ClientId,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
        origin: Origin,
    ) {
        let id = {
            let mut state = self.inner.state.borrow_mut();
            state.next_id += 1;
            let id = state.next_id;
            let call = PendingCall {
                target: target.clone(),
                module: module.to_owned(),
                method: method.to_owned(),
                origin,
                started: Instant::now(),
            };
            state.pending.insert(id, call);
            id
        };
        self.send(target, Outbound::Call { id, module, method, args, post });
    }

    /// Within the limits, and `exit` only from the module's own client: answers the client
    /// serving `module`, if a client does.
    fn check_call(
        &self,
        client: &ClientId,
        module: &str,
        method: &str,
    ) -> Result<Option<ClientId>, CallError> {
        let limits = &self.inner.limits;
        limits.check_name("module", module)?;
        limits.check_name("method", method)?;
        let state = self.inner.state.borrow();
        if let Some(caller) = state.clients.get(client) {
            if caller.calls_in_flight >= limits.max_calls_in_flight {
                return Err(CallError::new(format!(
                    "{module}.{method}: this client already has max_calls_in_flight ({}) calls under way",
                    limits.max_calls_in_flight
                )));
            }
        }
        let target = match state.modules.get(module).map(|entry| &entry.location) {
            Some(Location::Remote(target)) => Some(target.clone()),
            _ => None,
        };
        drop(state);
        if method == "exit" && target.as_ref().is_some_and(|target| target != client) {
            return Err(CallError::new(format!(
                "{module}.exit: only the client that registered {module} may make it exit"
            )));
        }
        Ok(target)
    }

    /// A call from a client: refused, forwarded to the module's client, or run here.
    pub(super) fn call_from(
        &self,
        client: ClientId,
        id: u64,
        module: String,
        method: String,
        args: Vec<Value>,
        post: bool,
    ) {
        let target = match self.check_call(&client, &module, &method) {
            Ok(target) => target,
            Err(error) => return self.refuse(&client, id, error),
        };
        let connection: Option<Rc<dyn Connection>> = {
            let mut state = self.inner.state.borrow_mut();
            state.clients.get_mut(&client).map(|caller| {
                caller.calls_in_flight += 1;
                Rc::clone(&caller.connection)
            })
        };
        match target {
            Some(target) => {
                bump(&self.inner.counters.calls);
                self.forward(&target, &module, &method, args, post, Origin::Client { client, id });
            }
            None => {
                let broker = self.clone();
                let caller = Caller::Client(client.clone());
                actix_rt::spawn(async move {
                    let result = broker.call_as(caller, &module, &method, args, post).await;
                    broker.reply(&client, connection, id, result);
                });
            }
        }
    }

    /// `client` answered the forwarded call `id`; only the client it was sent to may.
    pub(super) fn complete(&self, client: &ClientId, id: u64, result: CallResult) {
        let pending = {
            let mut state = self.inner.state.borrow_mut();
            match state.pending.get(&id) {
                Some(call) if call.target == *client => state.pending.remove(&id),
                _ => None,
            }
        };
        match pending {
            Some(call) => {
                self.finish_call(&call.origin.caller(), &call.module, &call.method, call.started, &result);
                self.deliver(call.origin, result)
            }
            None => tracing::debug!(id, "reply to no pending call"),
        }
    }

    pub(super) fn deliver(&self, origin: Origin, result: CallResult) {
        if result.is_err() {
            bump(&self.inner.counters.call_errors);
        }
        match origin {
            Origin::Client { client, id } => {
                if self.inner.state.borrow().clients.contains_key(&client) {
                    self.reply(&client, None, id, result);
                }
            }
            Origin::Local { reply, .. } => {
                let _ = reply.send(result);
            }
        }
    }
}
