//! The call that runs one method of a module's actor, wherever the call came from, and the
//! handle its router holds on the actor.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use naobroker_protocol::{MethodInfo, Value};

use crate::error::{CallError, CallResult};
use crate::identity::Caller;

/// A method of one module, as its router resolved the name once: its index in the module's
/// announced method list (base methods first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MethodId(pub(crate) usize);

/// A call delivered to a module actor. `post` runs it as a task and answers its id.
pub(crate) struct Invoke {
    pub(crate) method: MethodId,
    pub(crate) args: Vec<Value>,
    pub(crate) post: bool,
    /// Who asked, handed to the method with its context.
    pub(crate) caller: Caller,
    /// For an event callback: events this subscriber lost since its previous one.
    pub(crate) lost: u64,
}

/// What a method handler gives back: a value now, or a future for methods that wait.
pub(crate) enum Outcome {
    Now(CallResult),
    Later(LocalBoxFuture<'static, CallResult>),
}

impl Outcome {
    /// The answer, now or when the method's future ends.
    pub(crate) async fn into_future(self) -> CallResult {
        match self {
            Outcome::Now(result) => result,
            Outcome::Later(future) => future.await,
        }
    }
}

/// A hosted module as its router sees it, whatever the module's type.
pub(crate) trait HostedModule {
    /// Its method list as announced: base methods first, in [`MethodId`] order.
    fn method_infos(&self) -> &[MethodInfo];

    /// The index of `method`, `None` when the module has no such method.
    fn resolve(&self, method: &str) -> Option<MethodId>;

    /// Run one call: at once when the module's state is free (its answer, or the future of a
    /// method that waits), else behind the call that holds it.
    fn invoke(self: Rc<Self>, call: Invoke) -> Outcome;
}

/// A handle on a hosted module: what the broker's router and a serving session hold.
pub(crate) type ModuleHandle = Rc<dyn HostedModule>;

/// The error a call to a method the module does not have ends with.
pub(crate) fn unknown_method(module: &str, method: &str) -> CallError {
    CallError::not_found(format!(
        "{module}.{method}: no method named {}",
        naobroker_protocol::excerpt(method)
    ))
}
