//! The naobroker module SDK.
//!
//! A [`Module`] declares typed methods; the same module runs inside the broker
//! ([`Broker::add_module`]) or as its own process ([`remote::serve`]). Any code calls
//! any module by name through a [`Proxy`], wherever that module lives.
//!
//! Layers, each using only those above it: the leaves ([`CallError`], [`ClientId`] and
//! [`Caller`], [`Args`], [`Event`], the ALMemory call a callback subscription stands for,
//! the call a module's actor runs and the handle the router holds on it); the broker core
//! (`broker`, no wire in it: its router, its client side and the port wires reach it by) and
//! the client connection (`client`); the ZeroMQ wire, an adapter on the core's port (`wire`);
//! [`Session`] and [`Proxy`] (where calls go); [`Module`] and its context; the actor that
//! hosts a module; and at the bottom what puts them together: hosting modules in a broker
//! started on its wire, `ServiceDirectory`, [`remote`] and [`blocking`].
#![deny(unsafe_code, unreachable_pub)]

mod actor;
mod args;
pub mod blocking;
mod broker;
mod callback;
mod client;
mod directory;
mod error;
mod event;
mod frame;
mod hashing;
mod hosting;
mod identity;
mod invoke;
mod logs;
mod module;
mod proxy;
pub mod remote;
mod session;
pub mod wire;

pub use args::{args_of, Args, Signature};
pub use broker::{encoded_size, Blackboard, Broker, Limits, MEMORY_MODULE};
pub use client::ClientKeys;
pub use client::ClientSession;
pub use error::{ArgsError, CallError, CallResult, ListenError, RegistrationError, StartError};
pub use event::{Event, EventStream};
pub use hashing::{KeyedHasher, KeyedMap};
pub use hosting::BrokerConfig;
pub use identity::{Caller, ClientId};
pub use logs::LogForwarding;
pub use module::{Methods, Module, ModuleContext};
pub use naobroker_protocol::{excerpt, from_value, to_value, CallbackSubscription, ErrorKind, Value};
pub use proxy::Proxy;
pub use session::Session;
pub use wire::zmq::CurveListeners;
pub use zeromq::{
    CurveKeyError, CurveKeyPair, CurvePublicKey, CurveSecretKey, UnfinishedBudget, UnfinishedShare,
    STALL_MAX_PERIODS, STALL_MIN_PROGRESS,
};
