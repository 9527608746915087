//! A proxy for code without an async runtime (scripts, tests, the CLI).

use std::sync::mpsc as std_mpsc;
use std::thread;

use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::args::args_of;
use crate::client::ClientSession;
use crate::error::{CallError, CallResult};
use crate::event::Event;
use naobroker_protocol::{from_value, Value};

type Job = Box<dyn FnOnce(ClientSession) -> LocalBoxFuture<'static, ()> + Send>;

/// A session driven by its own thread; every method blocks the caller until done.
#[derive(Clone)]
pub struct Session {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Session {
    pub fn connect(url: &str) -> Result<Session, CallError> {
        let (jobs, mut incoming) = mpsc::unbounded_channel::<Job>();
        let (ready, connected) = std_mpsc::channel();
        let url = url.to_owned();
        thread::Builder::new()
            .name("naobroker-client".into())
            .spawn(move || {
                let system = actix_rt::System::new();
                system.block_on(async move {
                    let session = match ClientSession::connect(&url, "blocking").await {
                        Ok(session) => session,
                        Err(error) => {
                            let _ = ready.send(Err(error));
                            return;
                        }
                    };
                    let _ = ready.send(Ok(()));
                    while let Some(job) = incoming.recv().await {
                        actix_rt::spawn(job(session.clone()));
                    }
                });
            })
            .map_err(|error| CallError::new(error.to_string()))?;
        connected.recv().map_err(|_| CallError::new("client thread died"))??;
        Ok(Session { jobs })
    }

    fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(ClientSession) -> LocalBoxFuture<'static, T> + Send + 'static,
    ) -> Result<T, CallError> {
        let (done, result) = std_mpsc::channel();
        let job: Job = Box::new(move |session| {
            let future = job(session);
            Box::pin(async move {
                let _ = done.send(future.await);
            })
        });
        self.jobs.send(job).map_err(|_| CallError::new("client thread stopped"))?;
        result.recv().map_err(|_| CallError::new("client thread stopped"))
    }

    pub fn call(&self, module: &str, method: &str, args: Vec<Value>) -> CallResult {
        let (module, method) = (module.to_owned(), method.to_owned());
        self.run(move |session| Box::pin(async move { session.call(&module, &method, args, false).await }))?
    }

    pub fn post(&self, module: &str, method: &str, args: Vec<Value>) -> Result<u64, CallError> {
        let (module, method) = (module.to_owned(), method.to_owned());
        let id = self.run(move |session| {
            Box::pin(async move { session.call(&module, &method, args, true).await })
        })??;
        id.as_u64().ok_or_else(|| CallError::new(format!("post answered {id}, not a task id")))
    }

    /// Events named `event`, read with `recv()` on the returned channel.
    pub fn subscribe(&self, event: &str) -> Result<std_mpsc::Receiver<Event>, CallError> {
        let event = event.to_owned();
        let (forward, events) = std_mpsc::channel();
        self.run(move |session| {
            Box::pin(async move {
                let mut stream = session.subscribe(&event).await?;
                actix_rt::spawn(async move {
                    while let Some(event) = stream.next().await {
                        if forward.send(event).is_err() {
                            break;
                        }
                    }
                });
                Ok::<(), CallError>(())
            })
        })??;
        Ok(events)
    }
}

/// Blocking flavour of [`crate::Proxy`].
///
/// ```no_run
/// let memory = naobroker_framework::blocking::Proxy::connect("tcp://127.0.0.1:9559", "ALMemory")?;
/// let value = memory.call("getData", ("DCM/Time",))?;
/// # Ok::<(), naobroker_framework::CallError>(())
/// ```
#[derive(Clone)]
pub struct Proxy {
    session: Session,
    module: String,
}

impl Proxy {
    pub fn connect(url: &str, module: &str) -> Result<Proxy, CallError> {
        Ok(Proxy { session: Session::connect(url)?, module: module.to_owned() })
    }

    pub fn new(session: Session, module: &str) -> Proxy {
        Proxy { session, module: module.to_owned() }
    }

    pub fn call<A: Serialize>(&self, method: &str, args: A) -> CallResult {
        self.session.call(&self.module, method, args_of(args))
    }

    pub fn call_as<T: DeserializeOwned, A: Serialize>(&self, method: &str, args: A) -> Result<T, CallError> {
        let value = self.call(method, args)?;
        from_value(value.clone()).map_err(|_| {
            CallError::new(format!(
                "{}.{method} answered {value}, not a {}",
                self.module,
                std::any::type_name::<T>()
            ))
        })
    }

    pub fn post<A: Serialize>(&self, method: &str, args: A) -> Result<u64, CallError> {
        self.session.post(&self.module, method, args_of(args))
    }
}
