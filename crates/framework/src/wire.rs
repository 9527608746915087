//! The wires clients speak, each an adapter on the broker core's client side, which it
//! reaches through a [`WirePort`]: it reads its protocol into typed [`Request`]s and writes
//! the broker's [`Outbound`] messages in its own encoding through a [`Connection`].
//! naobroker's own wire (MessagePack over ZeroMQ) is `zmq`.

pub(crate) mod zmq;

pub use crate::broker::{
    Connection, ConnectionRole, Outbound, ReplyEncoder, Request, WeakPort, Wire, WirePort, Write,
};
