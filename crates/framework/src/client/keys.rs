//! A client's CURVE credentials: the broker's public key and the client's own key pair.

use std::time::Duration;

use zeromq::{CurveKeyPair, CurvePublicKey, CurveSecretKey, SocketOptions};

use crate::error::CallError;

/// What a client needs to reach a `[broker.curve]` listener.
#[derive(Clone)]
pub struct ClientKeys {
    pub server: CurvePublicKey,
    pub client: CurveKeyPair,
}

impl ClientKeys {
    /// Keys from `NAOBROKER_SERVER_KEY` (the broker's public key) and `NAOBROKER_SECRET_KEY`
    /// (this client's secret key), both Z85 text of 40 characters; `None` when neither is
    /// set. The Python client reads the same variables.
    pub fn from_env() -> Result<Option<ClientKeys>, CallError> {
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        match (read("NAOBROKER_SERVER_KEY"), read("NAOBROKER_SECRET_KEY")) {
            (None, None) => Ok(None),
            (Some(server), Some(secret)) => {
                let server = CurvePublicKey::from_z85(&server)
                    .map_err(|error| CallError::new(format!("NAOBROKER_SERVER_KEY: {error}")))?;
                let secret = CurveSecretKey::from_z85(&secret)
                    .map_err(|error| CallError::new(format!("NAOBROKER_SECRET_KEY: {error}")))?;
                Ok(Some(ClientKeys { server, client: CurveKeyPair::from_secret(secret) }))
            }
            _ => Err(CallError::new("set both NAOBROKER_SERVER_KEY and NAOBROKER_SECRET_KEY, or neither")),
        }
    }
}

/// Options of every socket a session opens: connect timeout, and CURVE when it has keys.
pub(crate) fn socket_options(keys: Option<&ClientKeys>) -> SocketOptions {
    let mut options = SocketOptions::default();
    options.connect_timeout(Duration::from_secs(2));
    if let Some(keys) = keys {
        options.curve_client(keys.server, keys.client.clone());
    }
    options
}
