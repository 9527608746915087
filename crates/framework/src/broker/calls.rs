//! A call between the two halves: the client side admits it (the caller's calls in flight),
//! the router says where it goes ([`Route`]) and keeps it while a client's module answers,
//! and the client side writes the answer.

use std::rc::Rc;
use std::time::Instant;

use naobroker_protocol::Value;
use tokio::sync::oneshot;

use super::adapter::{Connection, Outbound};
use super::router::{Origin, Route};
use super::{bump, Broker};
use crate::error::{CallError, CallResult};
use crate::identity::{Caller, ClientId};
use crate::invoke::{unknown_method, Invoke, Outcome};

/// A client's call to an in-process module, until it is answered.
struct LocalCall {
    client: ClientId,
    id: u64,
    /// The connection it came from: a client forgotten meanwhile is still answered there.
    connection: Option<Rc<dyn Connection>>,
    started: Instant,
}

impl Broker {
    /// Call `module.method(args)` from the broker's own code.
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>, post: bool) -> CallResult {
        bump(&self.inner.counters.calls);
        let caller = Caller::Broker;
        let route = self.router().borrow().route(module, method);
        let result = match route {
            Err(error) => Err(error),
            Ok(Route::Local(actor, id)) => {
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
            Ok(Route::Remote(client)) => {
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
        let id = self.router().borrow_mut().wait_for(target, module, method, origin);
        self.clients().send(target, Outbound::Call { id, module, method, args, post });
    }

    /// Within the limits, and `exit` only from the module's own client: where the call
    /// goes, and the connection it came from (its calls in flight counted).
    fn admit_call(
        &self,
        client: &ClientId,
        module: &str,
        method: &str,
    ) -> Result<(Route, Option<Rc<dyn Connection>>), CallError> {
        let limits = self.limits();
        limits.check_name("module", module)?;
        limits.check_name("method", method)?;
        let clients = self.clients();
        let connection = clients.begin_call(client, module, method)?;
        let route = self.router().borrow().route_from(client, module, method);
        match route {
            Ok(route) => Ok((route, connection)),
            Err(error) => {
                if connection.is_some() {
                    clients.end_call(client);
                }
                Err(error)
            }
        }
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
            Err(error) => return self.clients().refuse(&client, id, error),
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
        self.clients().reply(&client, connection, id, result);
    }

    /// `client` answered the forwarded call `id`; only the client it was sent to may.
    pub(super) fn complete(&self, client: &ClientId, id: u64, result: CallResult) {
        let pending = self.router().borrow_mut().answered(client, id);
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
                let clients = self.clients();
                if clients.knows(&client) {
                    clients.reply(&client, None, id, result);
                }
            }
            Origin::Local { reply, .. } => {
                let _ = reply.send(result);
            }
        }
    }
}
