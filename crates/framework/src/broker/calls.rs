//! Routing calls: to an actor in this process or to the client serving the module, and the
//! calls forwarded to a client and still waiting for its answer.

use std::rc::Rc;
use std::time::Instant;

use naobroker_protocol::{excerpt, Value};
use tokio::sync::oneshot;

use super::adapter::{Connection, Outbound};
use super::router::{Location, Origin, PendingCall};
use super::{bump, Broker};
use crate::error::{CallError, CallResult};
use crate::identity::{Caller, ClientId};
use crate::invoke::{unknown_method, Invoke, MethodId, ModuleHandle, Outcome};

/// A client's call to an in-process module, until it is answered.
struct LocalCall {
    client: ClientId,
    id: u64,
    /// The connection it came from: a client forgotten meanwhile is still answered there.
    connection: Option<Rc<dyn Connection>>,
    started: Instant,
}

/// Where a call goes, decided once by the router: an in-process module's actor with the
/// method resolved (`None`: it has no such method, and the call fails as a call), or the
/// client serving the module.
enum Route {
    Local(ModuleHandle, Option<MethodId>),
    Remote(ClientId),
}

impl Broker {
    /// Call `module.method(args)` from the broker's own code.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        bump(&self.inner.counters.calls);
        let caller = Caller::Broker;
        let result = match self.route(module, method) {
            None => Err(CallError::not_found(format!("no module named {}", excerpt(module)))),
            Some(Route::Local(actor, id)) => {
                let started = Instant::now();
                let result = match id {
                    Some(method) => {
                        actor.invoke(Invoke { method, args, post, caller, lost: 0 }).into_future().await
                    }
                    None => Err(unknown_method(module, method)),
                };
                self.finish_call(&Caller::Broker, module, method, started, &result);
                result
            }
            Some(Route::Remote(client)) => {
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

    /// Where `module.method` runs, its name resolved: `None` when there is no such module.
    fn route(&self, module: &str, method: &str) -> Option<Route> {
        Some(match &self.inner.router.borrow().modules.get(module)?.location {
            Location::Local(actor) => Route::Local(Rc::clone(actor), actor.resolve(method)),
            Location::Remote(client) => Route::Remote(client.clone()),
        })
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
            let mut router = self.inner.router.borrow_mut();
            router.next_id += 1;
            let id = router.next_id;
            let call = PendingCall {
                target: target.clone(),
                module: module.to_owned(),
                method: method.to_owned(),
                origin,
                started: Instant::now(),
            };
            router.pending.insert(id, call);
            id
        };
        self.send(target, Outbound::Call { id, module, method, args, post });
    }

    /// Within the limits, and `exit` only from the module's own client: where the call
    /// goes, and the connection it came from (its calls in flight counted).
    fn admit_call(
        &self,
        client: &ClientId,
        module: &str,
        method: &str,
    ) -> Result<(Route, Option<Rc<dyn Connection>>), CallError> {
        let limits = &self.inner.limits;
        limits.check_name("module", module)?;
        limits.check_name("method", method)?;
        let (router, mut clients) = (self.inner.router.borrow(), self.inner.clients.borrow_mut());
        let caller = clients.connected.get_mut(client);
        if caller.as_ref().is_some_and(|caller| caller.calls_in_flight >= limits.max_calls_in_flight) {
            return Err(CallError::refused(format!(
                "{module}.{method}: this client already has max_calls_in_flight ({}) calls under way",
                limits.max_calls_in_flight
            )));
        }
        let route = match router.modules.get(module).map(|entry| &entry.location) {
            None => return Err(CallError::not_found(format!("no module named {}", excerpt(module)))),
            Some(Location::Local(actor)) => Route::Local(Rc::clone(actor), actor.resolve(method)),
            Some(Location::Remote(target)) if method == "exit" && target != client => {
                return Err(CallError::refused(format!(
                    "{module}.exit: only the client that registered {module} may make it exit"
                )))
            }
            Some(Location::Remote(target)) => Route::Remote(target.clone()),
        };
        let connection = caller.map(|caller| {
            caller.calls_in_flight += 1;
            Rc::clone(&caller.connection)
        });
        Ok((route, connection))
    }

    /// A call from a client: refused, forwarded to the module's client, or run here, on
    /// this thread and at once when the module's actor answers at once.
    pub(super) fn call_from(
        &self,
        client: ClientId,
        id: u64,
        module: &str,
        method: &str,
        args: Vec<Value>,
        post: bool,
    ) {
        let (route, connection) = match self.admit_call(&client, module, method) {
            Ok(admitted) => admitted,
            Err(error) => return self.refuse(&client, id, error),
        };
        bump(&self.inner.counters.calls);
        let (actor, method_id) = match route {
            Route::Remote(target) => {
                let origin = Origin::Client { client, id };
                return self.forward(&target, module, method, args, post, origin);
            }
            Route::Local(actor, method_id) => (actor, method_id),
        };
        let started = Instant::now();
        let caller = Caller::Client(client.clone());
        let outcome = match method_id {
            Some(method) => actor.invoke(Invoke { method, args, post, caller, lost: 0 }),
            None => Outcome::Now(Err(unknown_method(module, method))),
        };
        let call = LocalCall { client, id, connection, started };
        match outcome {
            Outcome::Now(result) => self.answer_local(call, module, method, result),
            Outcome::Later(future) => {
                let broker = self.downgrade();
                let (module, method) = (module.to_owned(), method.to_owned());
                actix_rt::spawn(async move {
                    let result = future.await;
                    if let Some(broker) = broker.upgrade() {
                        broker.answer_local(call, &module, &method, result);
                    }
                });
            }
        }
    }

    /// A client's call that an in-process module answered: counted, traced, replied.
    fn answer_local(&self, call: LocalCall, module: &str, method: &str, result: CallResult) {
        let LocalCall { client, id, connection, started } = call;
        self.finish_call(&Caller::Client(client.clone()), module, method, started, &result);
        if result.is_err() {
            bump(&self.inner.counters.call_errors);
        }
        self.reply(&client, connection, id, result);
    }

    /// `client` answered the forwarded call `id`; only the client it was sent to may.
    pub(super) fn complete(&self, client: &ClientId, id: u64, result: CallResult) {
        let pending = {
            let mut router = self.inner.router.borrow_mut();
            match router.pending.get(&id) {
                Some(call) if call.target == *client => router.pending.remove(&id),
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
                if self.knows(&client) {
                    self.reply(&client, None, id, result);
                }
            }
            Origin::Local { reply, .. } => {
                let _ = reply.send(result);
            }
        }
    }
}
