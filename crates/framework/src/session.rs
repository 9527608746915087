//! Where calls go: the broker in this process, or a connection to one.

use naobroker_protocol::{CallbackSubscription, Value};

use crate::broker::{Broker, MEMORY_MODULE};
use crate::callback;
use crate::client::ClientSession;
use crate::error::{CallError, CallResult};
use crate::event::EventStream;

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

    /// NAOqi's `ALMemory.subscribeToEvent` (`subscribeToMicroEvent` with a message) for a
    /// module of this session: a message of its own over a connection, which the client
    /// subscribes again after a reconnect.
    pub async fn subscribe_callback(&self, subscription: CallbackSubscription) -> Result<(), CallError> {
        match self {
            Session::Broker(broker) => {
                let (method, args) = callback::subscribe_call(subscription);
                broker.call(MEMORY_MODULE, method, args, false).await.map(drop)
            }
            Session::Client(client) => client.subscribe_callback(subscription).await,
        }
    }

    /// NAOqi's `ALMemory.unsubscribeToEvent(event, module)`.
    pub async fn unsubscribe_callback(&self, event: &str, module: &str) -> Result<(), CallError> {
        match self {
            Session::Broker(broker) => {
                let (method, args) = callback::unsubscribe_call(event.to_owned(), module.to_owned());
                broker.call(MEMORY_MODULE, method, args, false).await.map(drop)
            }
            Session::Client(client) => client.unsubscribe_callback(event, module).await,
        }
    }

    /// Raise an ALMemory event: typed through the broker's blackboard in this process, a call
    /// to `ALMemory.raiseEvent` over a connection.
    pub async fn raise_event(&self, name: &str, value: Value) -> Result<(), CallError> {
        match self {
            Session::Broker(broker) => broker.raise_event(name, value),
            Session::Client(client) => {
                let args = vec![name.into(), value];
                client.call(MEMORY_MODULE, "raiseEvent", args, false).await.map(drop)
            }
        }
    }
}
