//! Who is calling: the broker's own code, or one connected client.

use std::fmt;

use bytes::{Buf, Bytes};

/// One connection to the broker, named by its wire (the ZeroMQ wire: its socket's index, then
/// the peer's routing identity). Every module, subscription and key prefix a client registers
/// belongs to this identity.
///
/// Held as the name's first byte and the rest, so that a wire whose first byte is its own
/// (the ZeroMQ wire's socket index) names a connection by the peer's id as it came, without
/// copying it into a new buffer per message.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ClientId {
    first: Option<u8>,
    rest: Bytes,
}

impl ClientId {
    /// A wire's name for one of its connections: unique among the connections of every
    /// wire of the broker (each wire starts its names with bytes no other wire uses).
    pub fn new(mut name: Bytes) -> ClientId {
        let first = name.first().copied();
        if first.is_some() {
            name.advance(1);
        }
        ClientId { first, rest: name }
    }

    /// The name `first` then `rest`: the same id as [`Self::new`] of those bytes.
    pub fn prefixed(first: u8, rest: Bytes) -> ClientId {
        ClientId { first: Some(first), rest }
    }
}

impl fmt::Debug for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("client-")?;
        for byte in self.first.iter().chain(self.rest.iter()).take(8) {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// The origin of a call, as a module method sees it through
/// [`ModuleContext::caller`](crate::ModuleContext::caller).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caller {
    /// Code inside the broker process: built-in and in-process modules, trusted.
    #[default]
    Broker,
    /// A remote client.
    Client(ClientId),
}

impl Caller {
    /// The client calling; `None` for the broker's own code.
    pub fn client(&self) -> Option<&ClientId> {
        match self {
            Caller::Broker => None,
            Caller::Client(client) => Some(client),
        }
    }
}
