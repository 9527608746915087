//! The CurveZMQ handshake (RFC 26) after a ZMTP greeting that named CURVE:
//! HELLO, WELCOME, INITIATE and READY, byte for byte as libzmq 4.3 lays them out.
//!
//! The client proves it knows the server's public key (HELLO), both ends agree on
//! short-term keys (WELCOME), the client sends its long-term public key only inside a box
//! and vouches for its short-term key with its long-term one (INITIATE), and the server
//! answers with its metadata (READY) or, for a key not on its allow-list, with a ZMTP ERROR.

use super::cipher::{
    full_nonce, CurveMessageCipher, CLIENT_MESSAGE_NONCE_PREFIX, SERVER_MESSAGE_NONCE_PREFIX,
};
use super::{CurveClient, CurvePublicKey, CurveServer, CURVE_KEY_BYTES};
use crate::codec::{parse_metadata, FramedIo, Message, ZmqCommand, ZmqCommandName};
use crate::util::{own_metadata, peer_from_metadata, PeerIdentity};
use crate::{SocketType, ZmqError, ZmqResult};

use bytes::{BufMut, Bytes, BytesMut};
use crypto_box::aead::consts::{U16, U24};
use crypto_box::aead::rand_core::RngCore;
use crypto_box::aead::{AeadCore, AeadInPlace, KeyInit, OsRng};
use crypto_box::{Nonce, PublicKey, SalsaBox, SecretKey, Tag};
use crypto_secretbox::XSalsa20Poly1305;
use futures::{SinkExt, StreamExt};
use thiserror::Error;

const TAG_BYTES: usize = 16;
const SHORT_NONCE_BYTES: usize = 8;
const LONG_NONCE_BYTES: usize = 16;
// HELLO after its name: version, anti-amplification padding, C', short nonce, signature box.
const HELLO_BYTES: usize = 2 + 72 + CURVE_KEY_BYTES + SHORT_NONCE_BYTES + TAG_BYTES + 64;
// The cookie: a long nonce and Box[C' + s'](K).
const COOKIE_BYTES: usize = LONG_NONCE_BYTES + TAG_BYTES + 2 * CURVE_KEY_BYTES;
// WELCOME after its name: a long nonce and Box[S' + cookie](S->C').
const WELCOME_BYTES: usize = LONG_NONCE_BYTES + TAG_BYTES + CURVE_KEY_BYTES + COOKIE_BYTES;
// The vouch: a long nonce and Box[C' + S](C->S').
const VOUCH_BYTES: usize = LONG_NONCE_BYTES + TAG_BYTES + 2 * CURVE_KEY_BYTES;
// INITIATE after its name, without metadata: cookie, short nonce, Box[C + vouch + metadata].
const INITIATE_MIN_BYTES: usize =
    COOKIE_BYTES + SHORT_NONCE_BYTES + TAG_BYTES + CURVE_KEY_BYTES + VOUCH_BYTES;
// The ZAP status code libzmq's CURVE server sends in its ERROR when a ZAP handler refuses a
// client (RFC 27: 400, "authentication failure"); libzmq clients report it as such.
const REFUSED_STATUS: &str = "400";

/// Why a CURVE handshake failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CurveError {
    #[error("CURVE: malformed {0} command")]
    Malformed(&'static str),
    #[error("CURVE: expected {expected}, the peer sent {got}")]
    Unexpected { expected: &'static str, got: String },
    #[error("CURVE: the peer closed the connection before its {0}")]
    Closed(&'static str),
    #[error("CURVE: the peer's {0} box does not open with our keys")]
    BoxDoesNotOpen(&'static str),
    #[error("CURVE: the client does not know our public key (its HELLO does not open)")]
    WrongServerKey,
    #[error("CURVE: the client's vouch does not match its short-term key and our public key")]
    BadVouch,
    #[error("CURVE: client key {0} is not on the allow-list")]
    NotAllowed(CurvePublicKey),
    #[error("CURVE: the server refused us: {0}")]
    Refused(String),
}

fn random_long_nonce() -> [u8; LONG_NONCE_BYTES] {
    let mut nonce = [0u8; LONG_NONCE_BYTES];
    OsRng.fill_bytes(&mut nonce);
    nonce
}

fn long_nonce(prefix: &[u8; 8], random: &[u8]) -> Nonce {
    let mut nonce = Nonce::default();
    nonce[..8].copy_from_slice(prefix);
    nonce[8..].copy_from_slice(random);
    nonce
}

/// NaCl's boxes: `crypto_box` (a [`SalsaBox`]) and `crypto_secretbox` (the cookie's).
trait NaclBox: AeadInPlace + AeadCore<NonceSize = U24, TagSize = U16> {}
impl<C: AeadInPlace + AeadCore<NonceSize = U24, TagSize = U16>> NaclBox for C {}

/// Appends `Box[plaintext](nonce)` in the wire form of NaCl's `crypto_box`: tag, then ciphertext.
fn put_box<C: NaclBox>(cipher: &C, nonce: &Nonce, plaintext: &[u8], dst: &mut BytesMut) {
    let tag_at = dst.len();
    dst.put_bytes(0, TAG_BYTES);
    let plaintext_at = dst.len();
    dst.put_slice(plaintext);
    let tag = cipher
        .encrypt_in_place_detached(nonce, b"", &mut dst[plaintext_at..])
        .expect("handshake boxes are far below the cipher's length limit");
    dst[tag_at..plaintext_at].copy_from_slice(&tag);
}

/// Opens a box in NaCl's wire form (tag, then ciphertext) and returns its plaintext.
fn open_box<C: NaclBox>(
    cipher: &C,
    nonce: &Nonce,
    sealed: &[u8],
    what: &'static str,
) -> Result<Vec<u8>, CurveError> {
    if sealed.len() < TAG_BYTES {
        return Err(CurveError::Malformed(what));
    }
    let (tag, ciphertext) = sealed.split_at(TAG_BYTES);
    let mut plaintext = ciphertext.to_vec();
    cipher
        .decrypt_in_place_detached(nonce, b"", &mut plaintext, Tag::from_slice(tag))
        .map_err(|_| CurveError::BoxDoesNotOpen(what))?;
    Ok(plaintext)
}

fn key_at(bytes: &[u8], at: usize) -> [u8; CURVE_KEY_BYTES] {
    bytes[at..at + CURVE_KEY_BYTES]
        .try_into()
        .expect("lengths are checked before keys are read")
}

fn short_nonce_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(
        bytes[at..at + SHORT_NONCE_BYTES]
            .try_into()
            .expect("lengths are checked before nonces are read"),
    )
}

async fn send_command(
    raw_socket: &mut FramedIo,
    name: ZmqCommandName,
    data: BytesMut,
) -> ZmqResult<()> {
    raw_socket
        .write_half
        .send(Message::Command(ZmqCommand::new(name, data)))
        .await?;
    Ok(())
}

/// Reads the next command, which must be `expected`; a ZMTP ERROR becomes [`CurveError::Refused`].
async fn receive_command(raw_socket: &mut FramedIo, expected: ZmqCommandName) -> ZmqResult<Bytes> {
    let unexpected = |got: String| CurveError::Unexpected {
        expected: expected.as_str(),
        got,
    };
    match raw_socket.read_half.next().await {
        Some(Ok(Message::Command(command))) if command.name == expected => Ok(command.data),
        Some(Ok(Message::Command(command))) if command.name == ZmqCommandName::ERROR => {
            Err(CurveError::Refused(command.error_reason()).into())
        }
        Some(Ok(Message::Command(command))) => Err(unexpected(command.name.to_string()).into()),
        Some(Ok(_)) => Err(unexpected("a message frame".into()).into()),
        Some(Err(error)) => Err(error.into()),
        None => Err(CurveError::Closed(expected.as_str()).into()),
    }
}

/// Runs the client side of the handshake; on success every later frame of `raw_socket`
/// travels in MESSAGE boxes. Returns the identity the server announced, if any.
pub(crate) async fn client_handshake(
    raw_socket: &mut FramedIo,
    client: &CurveClient,
    socket_type: SocketType,
    identity: Option<&PeerIdentity>,
) -> ZmqResult<PeerIdentity> {
    let short_secret = SecretKey::generate(&mut OsRng);
    let short_public = short_secret.public_key();
    // The server's long-term key and our short-term key: HELLO's and WELCOME's boxes.
    let hello_box = SalsaBox::new(&client.server_key.to_crypto(), &short_secret);
    let mut next_short_nonce: u64 = 1;

    let mut hello = BytesMut::with_capacity(HELLO_BYTES);
    hello.put_slice(&[1, 0]);
    hello.put_bytes(0, 72);
    hello.put_slice(short_public.as_bytes());
    hello.put_u64(next_short_nonce);
    put_box(
        &hello_box,
        &full_nonce(b"CurveZMQHELLO---", next_short_nonce),
        &[0u8; 64],
        &mut hello,
    );
    next_short_nonce += 1;
    send_command(raw_socket, ZmqCommandName::HELLO, hello).await?;

    let welcome = receive_command(raw_socket, ZmqCommandName::WELCOME)
        .await
        .map_err(|error| match error {
            // A server that cannot open our HELLO closes the connection without a word.
            ZmqError::Curve(CurveError::Closed(_)) => CurveError::Refused(
                "the server closed the connection after our HELLO (is its public key the one we hold?)"
                    .into(),
            )
            .into(),
            other => other,
        })?;
    if welcome.len() != WELCOME_BYTES {
        return Err(CurveError::Malformed("WELCOME").into());
    }
    let welcome_plaintext = open_box(
        &hello_box,
        &long_nonce(b"WELCOME-", &welcome[..LONG_NONCE_BYTES]),
        &welcome[LONG_NONCE_BYTES..],
        "WELCOME",
    )?;
    let server_short = PublicKey::from(key_at(&welcome_plaintext, 0));
    let cookie = &welcome_plaintext[CURVE_KEY_BYTES..];
    let session = || SalsaBox::new(&server_short, &short_secret);

    let vouch_nonce = random_long_nonce();
    let mut vouch_plaintext = [0u8; 2 * CURVE_KEY_BYTES];
    vouch_plaintext[..CURVE_KEY_BYTES].copy_from_slice(short_public.as_bytes());
    vouch_plaintext[CURVE_KEY_BYTES..].copy_from_slice(client.server_key.as_bytes());
    let metadata = own_metadata(socket_type, identity);
    let mut initiate_plaintext =
        BytesMut::with_capacity(CURVE_KEY_BYTES + VOUCH_BYTES + metadata.len());
    initiate_plaintext.put_slice(client.keys.public.as_bytes());
    initiate_plaintext.put_slice(&vouch_nonce);
    put_box(
        &SalsaBox::new(&server_short, client.keys.secret.as_crypto()),
        &long_nonce(b"VOUCH---", &vouch_nonce),
        &vouch_plaintext,
        &mut initiate_plaintext,
    );
    initiate_plaintext.put_slice(&metadata);

    let mut initiate = BytesMut::with_capacity(INITIATE_MIN_BYTES + metadata.len());
    initiate.put_slice(cookie);
    initiate.put_u64(next_short_nonce);
    put_box(
        &session(),
        &full_nonce(b"CurveZMQINITIATE", next_short_nonce),
        &initiate_plaintext,
        &mut initiate,
    );
    next_short_nonce += 1;
    send_command(raw_socket, ZmqCommandName::INITIATE, initiate).await?;

    let ready = receive_command(raw_socket, ZmqCommandName::READY).await?;
    if ready.len() < SHORT_NONCE_BYTES + TAG_BYTES {
        return Err(CurveError::Malformed("READY").into());
    }
    let server_nonce = short_nonce_at(&ready, 0);
    let ready_plaintext = open_box(
        &session(),
        &full_nonce(b"CurveZMQREADY---", server_nonce),
        &ready[SHORT_NONCE_BYTES..],
        "READY",
    )?;
    let peer_id = peer_from_metadata(socket_type, &parse_metadata(ready_plaintext.into())?)?;

    raw_socket.start_curve_messages(
        CurveMessageCipher::sealing(session(), CLIENT_MESSAGE_NONCE_PREFIX, next_short_nonce),
        CurveMessageCipher::opening(session(), SERVER_MESSAGE_NONCE_PREFIX, server_nonce),
    );
    Ok(peer_id)
}

/// Runs the server side of the handshake; on success every later frame of `raw_socket`
/// travels in MESSAGE boxes. Returns the client's identity and the long-term key it proved.
pub(crate) async fn server_handshake(
    raw_socket: &mut FramedIo,
    server: &CurveServer,
    socket_type: SocketType,
    identity: Option<&PeerIdentity>,
) -> ZmqResult<(PeerIdentity, CurvePublicKey)> {
    let hello = receive_command(raw_socket, ZmqCommandName::HELLO).await?;
    if hello.len() != HELLO_BYTES || hello[..2] != [1, 0] {
        return Err(CurveError::Malformed("HELLO").into());
    }
    let client_short = PublicKey::from(key_at(&hello, 74));
    let hello_nonce = short_nonce_at(&hello, 74 + CURVE_KEY_BYTES);
    // Our long-term secret key and the client's short-term key: HELLO's and WELCOME's boxes.
    let hello_box = SalsaBox::new(&client_short, server.keys.secret.as_crypto());
    open_box(
        &hello_box,
        &full_nonce(b"CurveZMQHELLO---", hello_nonce),
        &hello[74 + CURVE_KEY_BYTES + SHORT_NONCE_BYTES..],
        "HELLO",
    )
    .map_err(|_| CurveError::WrongServerKey)?;

    let short_secret = SecretKey::generate(&mut OsRng);
    // The cookie lets a server keep no state between WELCOME and INITIATE; this one keeps
    // the connection's state anyway, and checks the cookie as RFC 26 asks.
    let cookie_cipher = XSalsa20Poly1305::new(&XSalsa20Poly1305::generate_key(&mut OsRng));
    let cookie_nonce = random_long_nonce();
    let mut cookie_plaintext = [0u8; 2 * CURVE_KEY_BYTES];
    cookie_plaintext[..CURVE_KEY_BYTES].copy_from_slice(client_short.as_bytes());
    cookie_plaintext[CURVE_KEY_BYTES..].copy_from_slice(&short_secret.to_bytes());
    let mut welcome_plaintext = BytesMut::with_capacity(CURVE_KEY_BYTES + COOKIE_BYTES);
    welcome_plaintext.put_slice(short_secret.public_key().as_bytes());
    welcome_plaintext.put_slice(&cookie_nonce);
    put_box(
        &cookie_cipher,
        &long_nonce(b"COOKIE--", &cookie_nonce),
        &cookie_plaintext,
        &mut welcome_plaintext,
    );
    let welcome_nonce = random_long_nonce();
    let mut welcome = BytesMut::with_capacity(WELCOME_BYTES);
    welcome.put_slice(&welcome_nonce);
    put_box(
        &hello_box,
        &long_nonce(b"WELCOME-", &welcome_nonce),
        &welcome_plaintext,
        &mut welcome,
    );
    send_command(raw_socket, ZmqCommandName::WELCOME, welcome).await?;

    let initiate = receive_command(raw_socket, ZmqCommandName::INITIATE).await?;
    if initiate.len() < INITIATE_MIN_BYTES {
        return Err(CurveError::Malformed("INITIATE").into());
    }
    let cookie = open_box(
        &cookie_cipher,
        &long_nonce(b"COOKIE--", &initiate[..LONG_NONCE_BYTES]),
        &initiate[LONG_NONCE_BYTES..COOKIE_BYTES],
        "INITIATE cookie",
    )?;
    if cookie != cookie_plaintext {
        return Err(CurveError::BoxDoesNotOpen("INITIATE cookie").into());
    }
    let session = || SalsaBox::new(&client_short, &short_secret);
    let client_nonce = short_nonce_at(&initiate, COOKIE_BYTES);
    let initiate_plaintext = open_box(
        &session(),
        &full_nonce(b"CurveZMQINITIATE", client_nonce),
        &initiate[COOKIE_BYTES + SHORT_NONCE_BYTES..],
        "INITIATE",
    )?;
    let client_key = CurvePublicKey::from_bytes(key_at(&initiate_plaintext, 0));
    let vouch = &initiate_plaintext[CURVE_KEY_BYTES..CURVE_KEY_BYTES + VOUCH_BYTES];
    let vouch_plaintext = open_box(
        &SalsaBox::new(&client_key.to_crypto(), &short_secret),
        &long_nonce(b"VOUCH---", &vouch[..LONG_NONCE_BYTES]),
        &vouch[LONG_NONCE_BYTES..],
        "vouch",
    )?;
    if vouch_plaintext[..CURVE_KEY_BYTES] != client_short.as_bytes()[..]
        || vouch_plaintext[CURVE_KEY_BYTES..] != server.keys.public.as_bytes()[..]
    {
        return Err(CurveError::BadVouch.into());
    }
    if !server.allows(&client_key) {
        // Tell the client why, as libzmq does after a ZAP refusal, then hang up.
        raw_socket
            .write_half
            .send(Message::Command(ZmqCommand::error(REFUSED_STATUS)))
            .await?;
        return Err(CurveError::NotAllowed(client_key).into());
    }
    let metadata = Bytes::copy_from_slice(&initiate_plaintext[CURVE_KEY_BYTES + VOUCH_BYTES..]);
    let peer_id = peer_from_metadata(socket_type, &parse_metadata(metadata)?)?;

    let mut next_short_nonce: u64 = 1;
    let mut ready = BytesMut::new();
    ready.put_u64(next_short_nonce);
    put_box(
        &session(),
        &full_nonce(b"CurveZMQREADY---", next_short_nonce),
        &own_metadata(socket_type, identity),
        &mut ready,
    );
    next_short_nonce += 1;
    send_command(raw_socket, ZmqCommandName::READY, ready).await?;

    raw_socket.start_curve_messages(
        CurveMessageCipher::sealing(session(), SERVER_MESSAGE_NONCE_PREFIX, next_short_nonce),
        CurveMessageCipher::opening(session(), CLIENT_MESSAGE_NONCE_PREFIX, client_nonce),
    );
    Ok((peer_id, client_key))
}
