//! The wires clients speak, each an adapter on the broker core ([`crate::broker`]): it reads
//! its protocol into typed requests and writes the broker's answers in its own encoding.

pub(crate) mod zmq;
