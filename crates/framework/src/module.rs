//! The `Module` trait, its method table, and the context a module's methods see.

use std::any::Any;
use std::future::Future;
use std::rc::Rc;

use futures::FutureExt;
use naobroker_protocol::{to_value, MethodInfo, MethodType, Value};
use serde::Serialize;

use crate::args::{Args, Signature};
use crate::broker::Blackboard;
use crate::error::{CallError, CallResult};
use crate::identity::Caller;
use crate::invoke::Outcome;
use crate::proxy::Proxy;
use crate::session::Session;

/// A NAOqi module: a name and a set of typed methods.
///
/// ```
/// use naobroker_framework::{Methods, Module, Value};
///
/// struct Echo;
///
/// impl Module for Echo {
///     fn name(&self) -> String {
///         "Echo".into()
///     }
///     fn methods(methods: &mut Methods<Self>) {
///         methods.add("echo", "Returns its argument.", |_, _, (value,): (Value,)| Ok(value));
///     }
/// }
/// ```
pub trait Module: Sized + Unpin + 'static {
    /// The name other modules call it by (`ALMemory`, `DCM`, `Echo`).
    fn name(&self) -> String;

    /// Registers the module's methods; base methods (`ping`, `version`, ...) come for free.
    fn methods(methods: &mut Methods<Self>);

    /// One line for `getModuleHelp`.
    fn description(&self) -> String {
        String::new()
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_owned()
    }

    /// Called once the module can reach the broker (subscribe to events here).
    fn started(&mut self, _context: &ModuleContext) {}

    /// The blackboard this module implements, if it is one (ALMemory): in-process code then
    /// raises events and writes keys through the broker, typed ([`crate::Broker::raise_event`]).
    fn blackboard(&self) -> Option<Rc<dyn Blackboard>> {
        None
    }
}

type Handler<M> = Box<dyn Fn(&mut M, &ModuleContext, Vec<Value>) -> Outcome>;

pub(crate) struct MethodEntry<M> {
    pub(crate) info: MethodInfo,
    pub(crate) handler: Handler<M>,
}

/// The method table a [`Module`] fills in [`Module::methods`].
pub struct Methods<M> {
    pub(crate) entries: Vec<MethodEntry<M>>,
}

/// The typed signature of a method taking `A` and answering `R`.
pub(crate) fn method_type<A: Args, R: Signature>() -> MethodType {
    MethodType { params: A::types(), returns: R::value_type() }
}

fn encode<R: Serialize + 'static>(result: Result<R, CallError>) -> CallResult {
    result.map(|value| {
        // A handler that answers a Value gives it as it is: serialising it into a Value
        // would copy it whole (a 100 000-key listing, a megabyte blob) on the broker's thread.
        let mut answered = Some(value);
        match (&mut answered as &mut dyn Any).downcast_mut::<Option<Value>>() {
            Some(value) => value.take().unwrap_or(Value::Nil),
            None => answered.as_ref().map(to_value).unwrap_or(Value::Nil),
        }
    })
}

impl<M: Module> Methods<M> {
    pub(crate) fn new() -> Self {
        Methods { entries: Vec::new() }
    }

    /// A method that answers at once. Arguments are decoded into `A` (a tuple).
    pub fn add<A, R, F>(&mut self, name: &str, help: &str, handler: F) -> &mut Self
    where
        A: Args + 'static,
        R: Serialize + Signature + 'static,
        F: Fn(&mut M, &ModuleContext, A) -> Result<R, CallError> + 'static,
    {
        self.push::<A, R>(
            name,
            help,
            Box::new(move |module, context, args| match A::decode(args) {
                Ok(args) => Outcome::Now(encode(handler(module, context, args))),
                Err(error) => Outcome::Now(Err(error.into())),
            }),
        )
    }

    /// A method that waits (for time, another module, the DCM cycle...). The handler
    /// runs on the module's state at once and returns a future that must not borrow it.
    pub fn add_async<A, R, F, Fut>(&mut self, name: &str, help: &str, handler: F) -> &mut Self
    where
        A: Args + 'static,
        R: Serialize + Signature + 'static,
        F: Fn(&mut M, &ModuleContext, A) -> Fut + 'static,
        Fut: Future<Output = Result<R, CallError>> + 'static,
    {
        self.push::<A, R>(
            name,
            help,
            Box::new(move |module, context, args| match A::decode(args) {
                Ok(args) => Outcome::Later(handler(module, context, args).map(encode).boxed_local()),
                Err(error) => Outcome::Now(Err(error.into())),
            }),
        )
    }

    /// A method that waits, after checks made at once: when the handler answers `Err`, the
    /// call fails at once and so does its `post` (no task id), instead of a task that fails.
    pub fn add_async_checked<A, R, F, Fut>(&mut self, name: &str, help: &str, handler: F) -> &mut Self
    where
        A: Args + 'static,
        R: Serialize + Signature + 'static,
        F: Fn(&mut M, &ModuleContext, A) -> Result<Fut, CallError> + 'static,
        Fut: Future<Output = Result<R, CallError>> + 'static,
    {
        self.push::<A, R>(
            name,
            help,
            Box::new(move |module, context, args| match A::decode(args).map_err(CallError::from) {
                Ok(args) => match handler(module, context, args) {
                    Ok(future) => Outcome::Later(future.map(encode).boxed_local()),
                    Err(error) => Outcome::Now(Err(error)),
                },
                Err(error) => Outcome::Now(Err(error)),
            }),
        )
    }

    fn push<A: Args, R: Signature>(&mut self, name: &str, help: &str, handler: Handler<M>) -> &mut Self {
        let info = method_info(name, method_type::<A, R>(), help);
        self.entries.retain(|entry| entry.info.name != name);
        self.entries.push(MethodEntry { info, handler });
        self
    }
}

/// A method's description, its readable signature its types in words.
pub(crate) fn method_info(name: &str, types: MethodType, help: &str) -> MethodInfo {
    MethodInfo {
        name: name.to_owned(),
        signature: types.to_string(),
        help: help.to_owned(),
        types: Some(types),
    }
}

/// What a module's methods can reach: the broker or its connection to the broker, and the
/// call being handled.
///
/// Each call hands its method a context of its own: [`Self::caller`] is that call's caller
/// for as long as the method keeps the context, across its awaits too.
#[derive(Clone)]
pub struct ModuleContext {
    pub(crate) session: Session,
    pub(crate) module: Rc<str>,
    /// Who made the call this context was handed with (the broker's own code for the
    /// context `started` sees).
    caller: Caller,
    /// For an event callback, the events its subscription lost before it.
    lost: u64,
}

impl ModuleContext {
    pub(crate) fn new(session: Session, module: &str) -> Self {
        ModuleContext { session, module: module.into(), caller: Caller::Broker, lost: 0 }
    }

    /// The context of one call: made by `caller`, after `lost` events for a callback.
    pub(crate) fn for_call(&self, caller: Caller, lost: u64) -> Self {
        ModuleContext { session: self.session.clone(), module: Rc::clone(&self.module), caller, lost }
    }

    /// Who made the call this context was handed with: the broker's own code, or a client,
    /// for permission checks.
    pub fn caller(&self) -> Caller {
        self.caller.clone()
    }

    /// In an event callback, how many events this subscription lost since the previous one.
    pub fn events_lost(&self) -> u64 {
        self.lost
    }

    /// The name of the module this context belongs to.
    pub fn module_name(&self) -> &str {
        &self.module
    }

    /// The session the module is attached to (in-process broker or remote connection).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A proxy to another module, wherever it runs.
    pub fn proxy(&self, module: &str) -> Proxy {
        Proxy::new(self.session.clone(), module)
    }

    /// Raise an ALMemory event without waiting for its delivery.
    pub fn raise_event(&self, name: &str, value: Value) {
        let (session, name) = (self.session.clone(), name.to_owned());
        actix_rt::spawn(async move {
            if let Err(error) = session.raise_event(&name, value).await {
                tracing::warn!(event = %name, %error, "raiseEvent failed");
            }
        });
    }
}
