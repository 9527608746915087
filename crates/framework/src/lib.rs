//! The naobroker module SDK.
//!
//! A [`Module`] declares typed methods; the same module runs inside the broker
//! ([`Broker::add_module`]) or as its own process ([`remote::serve`]). Any code calls
//! any module by name through a [`Proxy`], wherever that module lives.
#![deny(unsafe_code, unreachable_pub)]

mod actor;
mod args;
pub mod blocking;
mod broker;
mod client;
mod error;
mod identity;
mod module;
mod proxy;
pub mod remote;

pub use actor::{Invoke, ModuleActor};
pub use args::Args;
pub use broker::{Broker, BrokerConfig, CurveListeners, Limits};
pub use client::ClientKeys;
pub use client::{ClientSession, EventStream};
pub use error::{CallError, CallResult};
pub use identity::{Caller, ClientId};
pub use module::{Methods, Module, ModuleContext};
pub use naobroker_protocol::{excerpt, from_value, to_value, Value};
pub use proxy::{Proxy, Session};
pub use zeromq::{CurveKeyPair, CurvePublicKey, CurveSecretKey};

/// An event as delivered to a subscriber: its name and value, and how many events of this
/// subscription were dropped before it because the subscriber fell behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: String,
    pub value: Value,
    pub lost: u64,
}

/// Turn a tuple of serde values into a call's argument array.
pub fn args_of<A: serde::Serialize>(args: A) -> Vec<Value> {
    match to_value(&args) {
        Value::Array(items) => items,
        Value::Nil => Vec::new(),
        single => vec![single],
    }
}
