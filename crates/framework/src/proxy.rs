//! A proxy: calls to one module by name, wherever it runs.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::args::args_of;
use crate::client::ClientSession;
use crate::error::{CallError, CallResult};
use crate::event::EventStream;
use crate::session::Session;
use naobroker_protocol::from_value;

/// Calls one module by name, wherever it runs (NAOqi's `ALProxy`).
///
/// ```no_run
/// # async fn example() -> Result<(), naobroker_framework::CallError> {
/// use naobroker_framework::Proxy;
/// let memory = Proxy::connect("tcp://127.0.0.1:9559", "ALMemory").await?;
/// let key = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";
/// let value: f64 = memory.call_as("getData", (key,)).await?;
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
