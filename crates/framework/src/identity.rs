//! Who is calling: the broker's own code, or one connected client.

use std::fmt;

use bytes::Bytes;

/// One connection to the broker, named by its wire (the ZeroMQ wire: its socket's index, then
/// the peer's routing identity). Every module, subscription and key prefix a client registers
/// belongs to this identity.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ClientId(Bytes);

impl ClientId {
    /// A wire's name for one of its connections: unique among the connections of every
    /// wire of the broker (each wire starts its names with bytes no other wire uses).
    pub fn new(name: Bytes) -> ClientId {
        ClientId(name)
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
        for byte in self.0.iter().take(8) {
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
