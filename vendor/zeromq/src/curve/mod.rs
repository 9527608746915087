//! CURVE security (ZeroMQ RFC 26, CurveZMQ over ZMTP 3.0): keys, their Z85 text form, the
//! socket options that turn it on, and the record of which key each accepted peer proved.
//!
//! A socket is a CURVE server ([`SocketOptions::curve_server`]) or a CURVE client
//! ([`SocketOptions::curve_client`]); without either it speaks the NULL mechanism as upstream
//! does. A server accepts only clients whose long-term public key is on its allow-list, the
//! in-process equivalent of libzmq's ZAP handler (RFC 27) checking keys.

mod cipher;
mod handshake;
mod z85;

pub(crate) use cipher::CurveMessageCipher;
pub use handshake::CurveError;
pub(crate) use handshake::{client_handshake, server_handshake};
pub use z85::{z85_decode, z85_encode, Z85Error};

use crate::util::PeerIdentity;
use crate::{SocketOptions, SocketType};

use crypto_box::aead::OsRng;
use parking_lot::Mutex;
use thiserror::Error;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

/// Length in bytes of a CURVE (X25519) public or secret key.
pub const CURVE_KEY_BYTES: usize = 32;

/// Length of a CURVE key in Z85 text, as libzmq's `zmq_curve_keypair` and pyzmq write it.
pub const CURVE_KEY_Z85_CHARS: usize = 40;

/// Why a CURVE key was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CurveKeyError {
    #[error("a CURVE key is {CURVE_KEY_Z85_CHARS} Z85 characters, got {0}")]
    Length(usize),
    #[error("invalid CURVE key: {0}")]
    Z85(#[from] Z85Error),
}

fn key_from_z85(text: &str) -> Result<[u8; CURVE_KEY_BYTES], CurveKeyError> {
    if text.len() != CURVE_KEY_Z85_CHARS {
        return Err(CurveKeyError::Length(text.len()));
    }
    let bytes = z85_decode(text)?;
    let mut key = [0u8; CURVE_KEY_BYTES];
    key.copy_from_slice(&bytes);
    Ok(key)
}

fn key_to_z85(key: &[u8; CURVE_KEY_BYTES]) -> String {
    z85_encode(key).expect("32 bytes are a whole number of Z85 groups")
}

/// A CURVE long-term public key: what a server publishes, and what a server's allow-list holds.
///
/// Its text form ([`Display`](fmt::Display), [`FromStr`]) is Z85, 40 characters, the same
/// text as libzmq's `zmq_curve_keypair` and pyzmq's `zmq.curve_keypair()` produce.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CurvePublicKey([u8; CURVE_KEY_BYTES]);

impl CurvePublicKey {
    pub const fn from_bytes(bytes: [u8; CURVE_KEY_BYTES]) -> Self {
        Self(bytes)
    }

    pub const fn as_bytes(&self) -> &[u8; CURVE_KEY_BYTES] {
        &self.0
    }

    pub fn from_z85(text: &str) -> Result<Self, CurveKeyError> {
        key_from_z85(text).map(Self)
    }

    pub fn to_z85(&self) -> String {
        key_to_z85(&self.0)
    }

    pub(crate) fn to_crypto(self) -> crypto_box::PublicKey {
        crypto_box::PublicKey::from(self.0)
    }
}

impl fmt::Display for CurvePublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_z85())
    }
}

impl fmt::Debug for CurvePublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CurvePublicKey({})", self.to_z85())
    }
}

impl FromStr for CurvePublicKey {
    type Err = CurveKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::from_z85(text)
    }
}

/// A CURVE long-term secret key. Its bytes are wiped when it is dropped, and `Debug` does
/// not print them.
#[derive(Clone)]
pub struct CurveSecretKey(crypto_box::SecretKey);

impl CurveSecretKey {
    pub fn from_bytes(bytes: [u8; CURVE_KEY_BYTES]) -> Self {
        Self(crypto_box::SecretKey::from(bytes))
    }

    pub fn to_bytes(&self) -> [u8; CURVE_KEY_BYTES] {
        self.0.to_bytes()
    }

    pub fn from_z85(text: &str) -> Result<Self, CurveKeyError> {
        key_from_z85(text).map(Self::from_bytes)
    }

    pub fn to_z85(&self) -> String {
        key_to_z85(&self.0.to_bytes())
    }

    /// The public key that belongs to this secret key (libzmq's `zmq_curve_public`).
    pub fn public_key(&self) -> CurvePublicKey {
        CurvePublicKey(self.0.public_key().to_bytes())
    }

    pub(crate) fn as_crypto(&self) -> &crypto_box::SecretKey {
        &self.0
    }
}

impl fmt::Debug for CurveSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CurveSecretKey(..)")
    }
}

impl FromStr for CurveSecretKey {
    type Err = CurveKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::from_z85(text)
    }
}

/// A CURVE long-term key pair.
#[derive(Clone, Debug)]
pub struct CurveKeyPair {
    pub public: CurvePublicKey,
    pub secret: CurveSecretKey,
}

impl CurveKeyPair {
    /// A new random key pair from the operating system's random source
    /// (libzmq's `zmq_curve_keypair`).
    pub fn generate() -> Self {
        Self::from_secret(CurveSecretKey(crypto_box::SecretKey::generate(&mut OsRng)))
    }

    pub fn from_secret(secret: CurveSecretKey) -> Self {
        Self {
            public: secret.public_key(),
            secret,
        }
    }
}

/// The security mechanism a socket's connections use, when it is CURVE.
pub(crate) enum CurveRole {
    Server(CurveServer),
    Client(CurveClient),
}

pub(crate) struct CurveServer {
    pub(crate) keys: CurveKeyPair,
    allowed_clients: HashSet<CurvePublicKey>,
    // The key each connected ROUTER peer proved, for `RouterSocket::peer_public_key`.
    // Filled when its handshake succeeds, emptied when the backend forgets the peer.
    authenticated_peers: Mutex<HashMap<PeerIdentity, CurvePublicKey>>,
}

impl CurveServer {
    pub(crate) fn allows(&self, client: &CurvePublicKey) -> bool {
        self.allowed_clients.contains(client)
    }
}

pub(crate) struct CurveClient {
    pub(crate) server_key: CurvePublicKey,
    pub(crate) keys: CurveKeyPair,
}

impl SocketOptions {
    /// Makes every connection of this socket, accepted or connected, a CURVE server
    /// (libzmq's `ZMQ_CURVE_SERVER` with `ZMQ_CURVE_SECRETKEY`): traffic is encrypted and a
    /// peer is admitted only if it proves it holds the secret key of one of
    /// `allowed_clients` (the allow-list a libzmq ZAP handler would check).
    ///
    /// Clients publish [`CurveSecretKey::public_key`] of `secret_key` as their server key.
    /// There is no way to admit every client: an empty allow-list admits nobody. A refused
    /// client gets a ZMTP ERROR with ZAP status `400` and is disconnected; the accept
    /// fails with [`ZmqError::Curve`](crate::ZmqError::Curve) on the socket's monitor.
    /// A ROUTER reports the key each peer proved through
    /// [`RouterSocket::peer_public_key`](crate::RouterSocket::peer_public_key).
    pub fn curve_server(
        &mut self,
        secret_key: CurveSecretKey,
        allowed_clients: impl IntoIterator<Item = CurvePublicKey>,
    ) -> &mut Self {
        self.curve = Some(CurveRole::Server(CurveServer {
            keys: CurveKeyPair::from_secret(secret_key),
            allowed_clients: allowed_clients.into_iter().collect(),
            authenticated_peers: Mutex::new(HashMap::new()),
        }));
        self
    }

    /// Makes every connection of this socket a CURVE client (libzmq's `ZMQ_CURVE_SERVERKEY`,
    /// `ZMQ_CURVE_PUBLICKEY` and `ZMQ_CURVE_SECRETKEY`): it talks only to a server that holds
    /// the secret key of `server_key`, and proves to it that it holds `client_keys`.
    pub fn curve_client(
        &mut self,
        server_key: CurvePublicKey,
        client_keys: CurveKeyPair,
    ) -> &mut Self {
        self.curve = Some(CurveRole::Client(CurveClient {
            server_key,
            keys: client_keys,
        }));
        self
    }

    /// Records the key a peer proved, when this socket is a CURVE server whose peers can be
    /// looked up by identity (a ROUTER).
    pub(crate) fn remember_curve_peer(
        &self,
        socket_type: SocketType,
        peer: &PeerIdentity,
        key: CurvePublicKey,
    ) {
        if let (Some(CurveRole::Server(server)), SocketType::ROUTER) = (&self.curve, socket_type) {
            server.authenticated_peers.lock().insert(peer.clone(), key);
        }
    }

    pub(crate) fn forget_curve_peer(&self, peer: &PeerIdentity) {
        if let Some(CurveRole::Server(server)) = &self.curve {
            server.authenticated_peers.lock().remove(peer);
        }
    }

    pub(crate) fn curve_peer_key(&self, peer: &PeerIdentity) -> Option<CurvePublicKey> {
        match &self.curve {
            Some(CurveRole::Server(server)) => server.authenticated_peers.lock().get(peer).copied(),
            _ => None,
        }
    }
}
