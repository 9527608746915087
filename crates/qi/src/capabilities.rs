//! The capability map (`{sm}`) peers exchange in `authenticate` and `Capability` messages:
//! transport capabilities, the authentication state and user credentials, each a dynamic
//! value under its name.

use std::collections::BTreeMap;

use crate::reader::{put_bytes, put_len, Reader};
use crate::value::Decoder;
use crate::{DecodeError, EncodeError, Options, QiValue, Type};

/// Where an authentication stands (`__qi_auth_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthState {
    Error = 1,
    Continue = 2,
    Done = 3,
}

/// A capability map, ordered by name as libqi's `std::map` is on the wire. Each value is a
/// [`QiValue::Dynamic`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapabilityMap {
    pub entries: BTreeMap<String, QiValue>,
}

impl CapabilityMap {
    pub const CLIENT_SERVER_SOCKET: &'static str = "ClientServerSocket";
    pub const MESSAGE_FLAGS: &'static str = "MessageFlags";
    pub const META_OBJECT_CACHE: &'static str = "MetaObjectCache";
    pub const OBJECT_PTR_UID: &'static str = "ObjectPtrUID";
    pub const RELATIVE_ENDPOINT_URI: &'static str = "RelativeEndpointURI";
    pub const REMOTE_CANCELABLE_CALLS: &'static str = "RemoteCancelableCalls";
    /// The authentication state, a dynamic `I` ([`AuthState`]).
    pub const AUTH_STATE: &'static str = "__qi_auth_state";
    /// Why authentication failed, a dynamic `s`.
    pub const AUTH_ERROR_REASON: &'static str = "__qi_auth_err_reason";
    /// A client's user name, a dynamic `s`.
    pub const AUTH_USER: &'static str = "auth_user";
    /// A client's token, a dynamic `s`.
    pub const AUTH_TOKEN: &'static str = "auth_token";

    pub fn set_bool(&mut self, name: &str, value: bool) {
        self.entries.insert(name.to_owned(), QiValue::dynamic(Type::Bool, QiValue::Bool(value)));
    }

    pub fn set_string(&mut self, name: &str, value: &str) {
        self.entries.insert(name.to_owned(), QiValue::dynamic(Type::String, QiValue::string(value)));
    }

    pub fn set_auth_state(&mut self, state: AuthState) {
        self.entries.insert(
            Self::AUTH_STATE.to_owned(),
            QiValue::dynamic(Type::UInt32, QiValue::UInt32(state as u32)),
        );
    }

    /// A boolean capability; `None` when absent or not a bool.
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.entries.get(name)?.as_typed()?.value {
            QiValue::Bool(value) => Some(value),
            _ => None,
        }
    }

    /// A string entry (a user name, a token, an error reason).
    pub fn string(&self, name: &str) -> Option<&str> {
        self.entries.get(name)?.as_typed()?.value.as_str()
    }

    /// `__qi_auth_state`, when present and one of the three states.
    pub fn auth_state(&self) -> Option<AuthState> {
        match self.entries.get(Self::AUTH_STATE)?.as_typed()?.value {
            QiValue::UInt32(1) => Some(AuthState::Error),
            QiValue::UInt32(2) => Some(AuthState::Continue),
            QiValue::UInt32(3) => Some(AuthState::Done),
            _ => None,
        }
    }

    /// Whether a capability is on for both sides: libqi takes the smaller of the two values,
    /// an absent one counting as false.
    pub fn shared(&self, remote: &CapabilityMap, name: &str) -> bool {
        self.bool(name).unwrap_or(false) && remote.bool(name).unwrap_or(false)
    }

    pub fn encode(&self, out: &mut Vec<u8>, options: &Options) -> Result<(), EncodeError> {
        put_len(out, "capability map", self.entries.len())?;
        for (name, value) in &self.entries {
            put_bytes(out, name.as_bytes())?;
            value.encode(&Type::Dynamic, out, options)?;
        }
        Ok(())
    }

    pub fn to_bytes(&self, options: &Options) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode(&mut out, options)?;
        Ok(out)
    }

    /// Decode a whole payload (an `authenticate` call or reply, a `Capability` message).
    pub fn decode(bytes: &[u8], options: &Options) -> Result<CapabilityMap, DecodeError> {
        let mut reader = Reader::new(bytes);
        let map = Self::decode_from(&mut reader, options)?;
        reader.finish()?;
        Ok(map)
    }

    /// Read a map from `reader`, leaving what follows it. A name that comes twice keeps its
    /// last value.
    pub fn decode_from(reader: &mut Reader<'_>, options: &Options) -> Result<CapabilityMap, DecodeError> {
        let mut decoder = Decoder::new(reader, options);
        // A name's length and a signature's length.
        let count = decoder.reader().read_count(8)?;
        let mut entries = BTreeMap::new();
        for _ in 0..count {
            let name = decoder.reader().read_string("capability name")?;
            entries.insert(name, decoder.value(&Type::Dynamic, 1)?);
        }
        Ok(CapabilityMap { entries })
    }
}
