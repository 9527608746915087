use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::broker::Broker;
use crate::client::{ClientSession, EventStream};
use crate::error::{CallError, CallResult};
use crate::{args_of, from_value, Value};

/// Where calls go: the broker in this process, or a connection to one.
#[derive(Clone)]
pub enum Session {
    Broker(Broker),
    Client(ClientSession),
}

impl Session {
    pub async fn call(&self, module: &str, method: &str, args: Vec<Value>) -> CallResult {
        match self {
            Session::Broker(broker) => broker.call(module, method, args, false).await,
            Session::Client(client) => client.call(module, method, args, false).await,
        }
    }

    /// Start `module.method(args)` as a task; answers its id.
    pub async fn post(&self, module: &str, method: &str, args: Vec<Value>) -> Result<u64, CallError> {
        let id = match self {
            Session::Broker(broker) => broker.call(module, method, args, true).await?,
            Session::Client(client) => client.call(module, method, args, true).await?,
        };
        id.as_u64().ok_or_else(|| CallError::new(format!("post answered {id}, not a task id")))
    }

    pub async fn subscribe(&self, event: &str) -> Result<EventStream, CallError> {
        match self {
            Session::Broker(broker) => Ok(broker.subscribe_local(event)),
            Session::Client(client) => client.subscribe(event).await,
        }
    }
}

/// Calls one module by name, wherever it runs (NAOqi's `ALProxy`).
///
/// ```no_run
/// # async fn example() -> Result<(), naobroker_framework::CallError> {
/// use naobroker_framework::Proxy;
/// let memory = Proxy::connect("tcp://127.0.0.1:9559", "ALMemory").await?;
/// let value: f64 = memory.call_as("getData", ("Device/SubDeviceList/HeadYaw/Position/Sensor/Value",)).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Proxy {
    session: Session,
    module: String,
}

impl Proxy {
    pub fn new(session: Session, module: &str) -> Self {
        Proxy { session, module: module.to_owned() }
    }

    /// Open a new connection to the broker at `url` and proxy `module` through it.
    pub async fn connect(url: &str, module: &str) -> Result<Proxy, CallError> {
        let client = ClientSession::connect(url, "proxy").await?;
        Ok(Proxy::new(Session::Client(client), module))
    }

    pub fn module(&self) -> &str {
        &self.module
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Call a method; `args` is a tuple, e.g. `("key",)` or `(name, 0.5)`.
    pub async fn call<A: Serialize>(&self, method: &str, args: A) -> CallResult {
        self.session.call(&self.module, method, args_of(args)).await
    }

    /// Call and decode the result into `T`.
    pub async fn call_as<T: DeserializeOwned, A: Serialize>(
        &self,
        method: &str,
        args: A,
    ) -> Result<T, CallError> {
        let value = self.call(method, args).await?;
        from_value(value.clone()).map_err(|_| {
            CallError::new(format!(
                "{}.{method} answered {value}, not a {}",
                self.module,
                std::any::type_name::<T>()
            ))
        })
    }

    /// NAOqi's `proxy.post.method(...)`: start the method as a task and return its id.
    pub async fn post<A: Serialize>(&self, method: &str, args: A) -> Result<u64, CallError> {
        self.session.post(&self.module, method, args_of(args)).await
    }

    /// A stream of the events named `event` (any proxy of the session can subscribe).
    pub async fn subscribe(&self, event: &str) -> Result<EventStream, CallError> {
        self.session.subscribe(event).await
    }
}
