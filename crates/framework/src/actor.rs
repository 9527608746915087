//! The actor that hosts one module: its method table, NAOqi's base methods and posted tasks.

use std::cell::RefCell;
use std::rc::Rc;

use actix::{Actor, Context, Handler, ResponseFuture};
use naobroker_protocol::{MethodInfo, Value};

use crate::args::Args;
use crate::error::{CallError, CallResult};
use crate::invoke::Invoke;
use crate::module::{MethodEntry, Methods, Module, ModuleContext, Outcome};
use tasks::Tasks;

mod tasks;

/// Methods every module has, NAOqi's ALModule base.
const BASE_METHODS: &[(&str, &str, &str)] = &[
    ("ping", "() -> bool", "Returns true: the module is alive."),
    ("version", "() -> String", "The module's version."),
    ("getMethodList", "() -> Vec<String>", "Names of all methods."),
    ("getMethodHelp", "(String) -> [name, signature, help]", "Help of one method."),
    ("getModuleHelp", "() -> String", "What the module does."),
    ("getUsage", "(String) -> String", "Signature and help of one method, as one line."),
    ("exit", "() -> bool", "Stops a remote module's process."),
    ("isRunning", "(u64) -> bool", "Whether a task started with post is still running."),
    (
        "wait",
        "(u64, i64) -> bool",
        "Waits for a posted task (timeout ms, 0 = forever): true when it ended, its error when it failed.",
    ),
    ("stop", "(u64) -> bool", "Stops a posted task."),
];

/// The actor that hosts one [`Module`], in the broker or in a remote process.
pub struct ModuleActor<M: Module> {
    module: M,
    name: String,
    methods: Methods<M>,
    context: ModuleContext,
    tasks: Rc<RefCell<Tasks>>,
    on_exit: Option<Box<dyn Fn()>>,
}

impl<M: Module> ModuleActor<M> {
    pub(crate) fn new(module: M, context: ModuleContext, on_exit: Option<Box<dyn Fn()>>) -> Self {
        let mut methods = Methods::new();
        M::methods(&mut methods);
        let name = module.name();
        ModuleActor { module, name, methods, context, tasks: Rc::default(), on_exit }
    }

    /// The method list as announced to the broker: base methods first.
    pub(crate) fn method_infos(&self) -> Vec<MethodInfo> {
        BASE_METHODS
            .iter()
            .map(|(name, signature, help)| MethodInfo {
                name: (*name).into(),
                signature: (*signature).into(),
                help: (*help).into(),
            })
            .chain(self.methods.entries.iter().map(|entry| entry.info.clone()))
            .collect()
    }

    fn find(&self, method: &str) -> Option<&MethodEntry<M>> {
        self.methods.entries.iter().find(|entry| entry.info.name == method)
    }

    fn run(&mut self, method: &str, args: Vec<Value>) -> Outcome {
        if let Some(outcome) = self.base_method(method, &args) {
            return outcome;
        }
        match self.methods.entries.iter().position(|entry| entry.info.name == method) {
            Some(index) => {
                let handler = &self.methods.entries[index].handler;
                handler(&mut self.module, &self.context, args)
            }
            None => Outcome::Now(Err(CallError::new(format!("no method named {method}")))),
        }
    }

    fn base_method(&mut self, method: &str, args: &[Value]) -> Option<Outcome> {
        let now = |result: CallResult| Some(Outcome::Now(result));
        match method {
            "ping" => now(decoded::<()>(args).map(|_| Value::from(true))),
            "version" => now(decoded::<()>(args).map(|_| self.module.version().into())),
            "getMethodList" => now(decoded::<()>(args)
                .map(|_| Value::Array(self.method_infos().into_iter().map(|m| m.name.into()).collect()))),
            "getMethodHelp" | "getUsage" => now(decoded::<(String,)>(args).and_then(|(name,)| {
                let info =
                    self.method_infos().into_iter().find(|info| info.name == name).ok_or_else(|| {
                        CallError::new(format!("no method named {}", naobroker_protocol::excerpt(&name)))
                    })?;
                Ok(if method == "getUsage" {
                    format!("{}{} — {}", info.name, info.signature, info.help).into()
                } else {
                    Value::Array(vec![info.name.into(), info.signature.into(), info.help.into()])
                })
            })),
            "getModuleHelp" => now(decoded::<()>(args).map(|_| self.module.description().into())),
            "exit" => now(decoded::<()>(args).and_then(|_| match &self.on_exit {
                Some(exit) => {
                    exit();
                    Ok(true.into())
                }
                None => {
                    Err(CallError::new(format!("{} is built into the broker and cannot exit", self.name)))
                }
            })),
            "isRunning" => {
                now(decoded::<(u64,)>(args).map(|(id,)| self.tasks.borrow().is_running(id).into()))
            }
            "stop" => now(decoded::<(u64,)>(args).map(|(id,)| self.tasks.borrow_mut().stop(id).into())),
            "wait" => Some(match decoded::<(u64, i64)>(args) {
                Err(error) => Outcome::Now(Err(error)),
                Ok((id, timeout_ms)) => Outcome::Later(Tasks::wait(&self.tasks, id, timeout_ms)),
            }),
            _ => None,
        }
    }

    fn post(&mut self, method: &str, args: Vec<Value>) -> CallResult {
        if self.find(method).is_none() {
            return Err(CallError::new(format!("no method named {method}")));
        }
        self.tasks.borrow().check_room(&self.name)?;
        let future = match self.run(method, args) {
            Outcome::Now(Err(error)) => return Err(error),
            Outcome::Now(Ok(_)) => None,
            Outcome::Later(future) => Some(future),
        };
        let id = match future {
            Some(future) => Tasks::spawn(&self.tasks, format!("{}.{method}", self.name), future),
            None => self.tasks.borrow_mut().finished_at_once(),
        };
        Ok(id.into())
    }
}

impl<M: Module> Actor for ModuleActor<M> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(4096);
        self.module.started(&self.context);
    }
}

impl<M: Module> Handler<Invoke> for ModuleActor<M> {
    type Result = ResponseFuture<CallResult>;

    fn handle(&mut self, invoke: Invoke, _ctx: &mut Self::Context) -> Self::Result {
        if invoke.lost > 0 {
            let (module, method, lost) = (&self.name, &invoke.method, invoke.lost);
            tracing::warn!(%module, %method, lost, "events lost before this callback");
        }
        self.context.set_current(invoke.caller, invoke.lost);
        let prefix = format!("{}.{}", self.name, invoke.method);
        let name_error = move |error: CallError| CallError::new(format!("{prefix}: {}", error.message));
        if invoke.post {
            let result = self.post(&invoke.method, invoke.args).map_err(name_error);
            return Box::pin(async move { result });
        }
        match self.run(&invoke.method, invoke.args) {
            Outcome::Now(result) => {
                let result = result.map_err(name_error);
                Box::pin(async move { result })
            }
            Outcome::Later(future) => Box::pin(async move { future.await.map_err(name_error) }),
        }
    }
}

/// A base method's arguments, decoded as a module's own method's are.
fn decoded<A: Args>(args: &[Value]) -> Result<A, CallError> {
    Ok(A::decode(args.to_vec())?)
}
