//! The actor that hosts one module: its state behind one borrow, its method table resolved
//! by index, NAOqi's base methods and posted tasks.
//!
//! A module is an actor: its state is reached by one call at a time, in the order the calls
//! come. Whoever routes a call (the broker's router, a client session serving the module)
//! resolves the method's name once ([`ModuleHandle::resolve`]) and hands the actor the
//! index with the call; the actor runs it on the caller's thread without a mailbox or a task
//! when its state is free, and queues it behind the call that holds its state when it is not
//! (a method that, in its synchronous part, makes the broker call its own module again).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::FutureExt;
use naobroker_protocol::{MethodInfo, MethodType, Value};

use crate::args::Args;
use crate::error::{CallError, CallResult};
use crate::hashing::KeyedMap;
use crate::invoke::{HostedModule, Invoke, MethodId, Outcome};
use crate::module::{method_info, method_type, MethodEntry, Methods, Module, ModuleContext};
use tasks::Tasks;

mod tasks;
#[cfg(test)]
mod tests;

/// Methods every module has, NAOqi's ALModule base, in the order they are announced.
#[derive(Clone, Copy)]
enum Base {
    Ping,
    Version,
    GetMethodList,
    GetMethodHelp,
    GetModuleHelp,
    GetUsage,
    Exit,
    IsRunning,
    Wait,
    Stop,
}

/// A base method: what it is, its name, its typed signature, its help.
type BaseMethod = (Base, &'static str, fn() -> MethodType, &'static str);

const BASE_METHODS: &[BaseMethod] = &[
    (Base::Ping, "ping", method_type::<(), bool>, "Returns true: the module is alive."),
    (Base::Version, "version", method_type::<(), String>, "The module's version."),
    (Base::GetMethodList, "getMethodList", method_type::<(), Vec<String>>, "Names of all methods."),
    (
        Base::GetMethodHelp,
        "getMethodHelp",
        method_type::<(String,), Vec<String>>,
        "Help of one method: [name, signature, help].",
    ),
    (Base::GetModuleHelp, "getModuleHelp", method_type::<(), String>, "What the module does."),
    (
        Base::GetUsage,
        "getUsage",
        method_type::<(String,), String>,
        "Signature and help of one method, as one line.",
    ),
    (Base::Exit, "exit", method_type::<(), bool>, "Stops a remote module's process."),
    (
        Base::IsRunning,
        "isRunning",
        method_type::<(u64,), bool>,
        "Whether a task started with post is still running.",
    ),
    (
        Base::Wait,
        "wait",
        method_type::<(u64, i64), bool>,
        "Waits for a posted task (timeout ms, 0 = forever): true when it ended, its error when it failed.",
    ),
    (Base::Stop, "stop", method_type::<(u64,), bool>, "Stops a posted task."),
];

/// What the actor's state holds: the module and its handlers.
struct State<M: Module> {
    module: M,
    methods: Methods<M>,
    started: bool,
}

/// The actor that hosts one [`Module`], in the broker or in a remote process.
pub(crate) struct ModuleActor<M: Module> {
    state: RefCell<State<M>>,
    name: String,
    infos: Vec<MethodInfo>,
    /// Its own method names, fixed when it is hosted: a client's name is only looked up in
    /// it, never added, so no chosen name can make the table's chains longer.
    ids: KeyedMap<String, MethodId>,
    /// The context calls are made in, less the caller each call brings.
    context: ModuleContext,
    tasks: Rc<RefCell<Tasks>>,
    on_exit: Option<Box<dyn Fn()>>,
    /// Calls waiting for the state while another call holds it.
    deferred: Cell<u32>,
}

impl<M: Module> ModuleActor<M> {
    /// Host `module`; its `started` runs before its first call, or soon on its own.
    pub(crate) fn start(
        module: M,
        context: ModuleContext,
        on_exit: Option<Box<dyn Fn()>>,
    ) -> Rc<ModuleActor<M>> {
        let mut methods = Methods::new();
        M::methods(&mut methods);
        let name = module.name();
        let infos: Vec<MethodInfo> = BASE_METHODS
            .iter()
            .map(|(_, name, types, help)| method_info(name, types(), help))
            .chain(methods.entries.iter().map(|entry| entry.info.clone()))
            .collect();
        let ids =
            infos.iter().enumerate().map(|(index, info)| (info.name.clone(), MethodId(index))).collect();
        let actor = Rc::new(ModuleActor {
            state: RefCell::new(State { module, methods, started: false }),
            name,
            infos,
            ids,
            context,
            tasks: Rc::default(),
            on_exit,
            deferred: Cell::new(0),
        });
        let weak = Rc::downgrade(&actor);
        actix_rt::spawn(async move {
            if let Some(actor) = weak.upgrade() {
                if let Ok(mut state) = actor.state.try_borrow_mut() {
                    actor.start_once(&mut state);
                }
            }
        });
        actor
    }

    fn start_once(&self, state: &mut State<M>) {
        if !state.started {
            state.started = true;
            state.module.started(&self.context);
        }
    }

    /// The module's own method at `id`, past the base methods.
    fn own(&self, state: &State<M>, id: MethodId) -> Option<usize> {
        id.0.checked_sub(BASE_METHODS.len()).filter(|index| *index < state.methods.entries.len())
    }

    fn run(&self, state: &mut State<M>, id: MethodId, context: &ModuleContext, args: Vec<Value>) -> Outcome {
        match BASE_METHODS.get(id.0) {
            Some((base, ..)) => self.base_method(state, *base, args),
            None => match self.own(state, id) {
                Some(index) => {
                    let State { module, methods, .. } = state;
                    let MethodEntry { handler, .. } = &methods.entries[index];
                    handler(module, context, args)
                }
                None => Outcome::Now(Err(CallError::not_found(format!("no method with index {}", id.0)))),
            },
        }
    }

    fn base_method(&self, state: &mut State<M>, base: Base, args: Vec<Value>) -> Outcome {
        let result = match base {
            Base::Ping => decoded::<()>(args).map(|_| Value::from(true)),
            Base::Version => decoded::<()>(args).map(|_| state.module.version().into()),
            Base::GetMethodList => decoded::<()>(args)
                .map(|_| Value::Array(self.infos.iter().map(|m| m.name.as_str().into()).collect())),
            Base::GetMethodHelp | Base::GetUsage => decoded::<(String,)>(args).and_then(|(name,)| {
                let info = self.infos.iter().find(|info| info.name == name).ok_or_else(|| {
                    CallError::not_found(format!("no method named {}", naobroker_protocol::excerpt(&name)))
                })?;
                Ok(if matches!(base, Base::GetUsage) {
                    format!("{}{} — {}", info.name, info.signature, info.help).into()
                } else {
                    Value::Array(vec![
                        info.name.as_str().into(),
                        info.signature.as_str().into(),
                        info.help.as_str().into(),
                    ])
                })
            }),
            Base::GetModuleHelp => decoded::<()>(args).map(|_| state.module.description().into()),
            Base::Exit => decoded::<()>(args).and_then(|_| match &self.on_exit {
                Some(exit) => {
                    exit();
                    Ok(true.into())
                }
                None => {
                    Err(CallError::refused(format!("{} is built into the broker and cannot exit", self.name)))
                }
            }),
            Base::IsRunning => decoded::<(u64,)>(args).map(|(id,)| self.tasks.borrow().is_running(id).into()),
            Base::Stop => decoded::<(u64,)>(args).map(|(id,)| self.tasks.borrow_mut().stop(id).into()),
            Base::Wait => {
                return match decoded::<(u64, i64)>(args) {
                    Err(error) => Outcome::Now(Err(error)),
                    Ok((id, timeout_ms)) => Outcome::Later(Tasks::wait(&self.tasks, id, timeout_ms)),
                }
            }
        };
        Outcome::Now(result)
    }

    fn post(
        &self,
        state: &mut State<M>,
        id: MethodId,
        context: &ModuleContext,
        args: Vec<Value>,
    ) -> CallResult {
        if self.own(state, id).is_none() {
            return Err(CallError::not_found(format!("no method named {}", self.infos[id.0].name)));
        }
        self.tasks.borrow().check_room(&self.name)?;
        let future = match self.run(state, id, context, args) {
            Outcome::Now(Err(error)) => return Err(error),
            Outcome::Now(Ok(_)) => None,
            Outcome::Later(future) => Some(future),
        };
        let task = match future {
            Some(future) => {
                Tasks::spawn(&self.tasks, format!("{}.{}", self.name, self.infos[id.0].name), future)
            }
            None => self.tasks.borrow_mut().finished_at_once(),
        };
        Ok(task.into())
    }

    /// The call run on the state it holds.
    fn invoke_on(&self, state: &mut State<M>, call: Invoke) -> Outcome {
        self.start_once(state);
        let Invoke { method, args, post, caller, lost } = call;
        let Some(info) = self.infos.get(method.0) else {
            return Outcome::Now(Err(CallError::not_found(format!(
                "{}: no method with index {}",
                self.name, method.0
            ))));
        };
        if lost > 0 {
            let (module, method) = (&self.name, &info.name);
            tracing::warn!(%module, %method, lost, "events lost before this callback");
        }
        let context = self.context.for_call(caller, lost);
        let outcome = match post {
            true => Outcome::Now(self.post(state, method, &context, args)),
            false => self.run(state, method, &context, args),
        };
        // The error names the method; only a failed call pays for the text.
        let name_error = |error: CallError| error.in_method(&self.name, &info.name);
        match outcome {
            Outcome::Now(result) => Outcome::Now(result.map_err(name_error)),
            Outcome::Later(future) => {
                let prefix = (self.name.clone(), info.name.clone());
                Outcome::Later(
                    future
                        .map(move |result| result.map_err(|error| error.in_method(&prefix.0, &prefix.1)))
                        .boxed_local(),
                )
            }
        }
    }
}

impl<M: Module> HostedModule for ModuleActor<M> {
    fn method_infos(&self) -> &[MethodInfo] {
        &self.infos
    }

    fn resolve(&self, method: &str) -> Option<MethodId> {
        self.ids.get(method).copied()
    }

    fn invoke(self: Rc<Self>, call: Invoke) -> Outcome {
        if self.deferred.get() == 0 {
            if let Ok(mut state) = self.state.try_borrow_mut() {
                return self.invoke_on(&mut state, call);
            }
        }
        // Another call holds the state (this call was made from its synchronous part), or
        // calls already wait for it: this one waits its turn behind them, in order.
        let waiting = Deferred::new(self);
        Outcome::Later(
            async move {
                let outcome = loop {
                    tokio::task::yield_now().await;
                    if let Ok(mut state) = waiting.0.state.try_borrow_mut() {
                        break waiting.0.invoke_on(&mut state, call);
                    }
                };
                drop(waiting);
                outcome.into_future().await
            }
            .boxed_local(),
        )
    }
}

/// A call waiting for its actor's state, counted in `deferred` until it runs or is dropped.
struct Deferred<M: Module>(Rc<ModuleActor<M>>);

impl<M: Module> Deferred<M> {
    fn new(actor: Rc<ModuleActor<M>>) -> Self {
        actor.deferred.set(actor.deferred.get() + 1);
        Deferred(actor)
    }
}

impl<M: Module> Drop for Deferred<M> {
    fn drop(&mut self) {
        self.0.deferred.set(self.0.deferred.get() - 1);
    }
}

/// A base method's arguments, decoded as a module's own method's are.
fn decoded<A: Args>(args: Vec<Value>) -> Result<A, CallError> {
    Ok(A::decode(args)?)
}
