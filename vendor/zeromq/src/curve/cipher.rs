//! CURVE MESSAGE commands: after the handshake every ZMTP frame travels as one
//! `MESSAGE` box (RFC 26), sealed and opened here in place, without a second buffer.

use crate::codec::{CodecError, CodecResult};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use crypto_box::aead::AeadInPlace;
use crypto_box::{Nonce, SalsaBox, Tag};

pub(crate) const CLIENT_MESSAGE_NONCE_PREFIX: &[u8; 16] = b"CurveZMQMESSAGEC";
pub(crate) const SERVER_MESSAGE_NONCE_PREFIX: &[u8; 16] = b"CurveZMQMESSAGES";

const MESSAGE_COMMAND: &[u8; 8] = b"\x07MESSAGE";
const SHORT_NONCE_BYTES: usize = 8;
const TAG_BYTES: usize = 16;
// The frame flags libzmq puts first in every box: bit 0 MORE, bit 1 COMMAND.
const FLAGS_BYTES: usize = 1;
const FLAG_MORE: u8 = 0b01;
const FLAG_COMMAND: u8 = 0b10;
const BOX_START: usize = MESSAGE_COMMAND.len() + SHORT_NONCE_BYTES;
const PLAINTEXT_START: usize = BOX_START + TAG_BYTES;
const PAYLOAD_START: usize = PLAINTEXT_START + FLAGS_BYTES;

/// A frame taken out of a MESSAGE box.
pub(crate) struct OpenedFrame {
    pub(crate) payload: Bytes,
    pub(crate) more: bool,
    pub(crate) command: bool,
}

/// One direction of a CURVE connection's message traffic: the session box both ends
/// derived from their short-term keys, the nonce prefix of the direction, and its counter
/// (the next short nonce to send, or the last one received: each must be larger than the
/// one before, so a recorded box cannot be replayed).
pub(crate) struct CurveMessageCipher {
    session: SalsaBox,
    nonce_prefix: &'static [u8; 16],
    counter: u64,
}

impl std::fmt::Debug for CurveMessageCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurveMessageCipher")
            .field("nonce_prefix", &String::from_utf8_lossy(self.nonce_prefix))
            .field("counter", &self.counter)
            .finish_non_exhaustive()
    }
}

pub(crate) fn full_nonce(prefix: &[u8; 16], short_nonce: u64) -> Nonce {
    let mut nonce = Nonce::default();
    nonce[..16].copy_from_slice(prefix);
    nonce[16..].copy_from_slice(&short_nonce.to_be_bytes());
    nonce
}

impl CurveMessageCipher {
    /// Seals frames with short nonces from `next_nonce` on.
    pub(crate) fn sealing(
        session: SalsaBox,
        nonce_prefix: &'static [u8; 16],
        next_nonce: u64,
    ) -> Self {
        Self {
            session,
            nonce_prefix,
            counter: next_nonce,
        }
    }

    /// Opens boxes whose short nonces come after `last_nonce`, the peer's last handshake nonce.
    pub(crate) fn opening(
        session: SalsaBox,
        nonce_prefix: &'static [u8; 16],
        last_nonce: u64,
    ) -> Self {
        Self {
            session,
            nonce_prefix,
            counter: last_nonce,
        }
    }

    /// Appends `payload` to `dst` as one ZMTP frame holding a MESSAGE box. The frame is sent
    /// without the COMMAND flag, as libzmq does; MORE travels inside the box.
    pub(crate) fn seal_frame(
        &mut self,
        payload: &[u8],
        more: bool,
        dst: &mut BytesMut,
    ) -> CodecResult<()> {
        let short_nonce = self.counter;
        self.counter = short_nonce
            .checked_add(1)
            .ok_or(CodecError::Other("CURVE message nonces exhausted"))?;

        let body_len = PAYLOAD_START + payload.len();
        if body_len > 255 {
            dst.reserve(9 + body_len);
            dst.put_u8(0b0000_0010);
            dst.put_u64(body_len as u64);
        } else {
            dst.reserve(2 + body_len);
            dst.put_u8(0);
            dst.put_u8(body_len as u8);
        }
        dst.put_slice(MESSAGE_COMMAND);
        dst.put_u64(short_nonce);
        let tag_at = dst.len();
        dst.put_bytes(0, TAG_BYTES);
        let plaintext_at = dst.len();
        dst.put_u8(if more { FLAG_MORE } else { 0 });
        dst.put_slice(payload);

        let tag = self
            .session
            .encrypt_in_place_detached(
                &full_nonce(self.nonce_prefix, short_nonce),
                b"",
                &mut dst[plaintext_at..],
            )
            .map_err(|_| CodecError::Other("CURVE message does not fit a box"))?;
        dst[tag_at..plaintext_at].copy_from_slice(&tag);
        Ok(())
    }

    /// Opens the MESSAGE box that makes up the body of one received frame.
    pub(crate) fn open_frame(&mut self, mut body: BytesMut) -> CodecResult<OpenedFrame> {
        if !body.starts_with(MESSAGE_COMMAND) {
            return Err(CodecError::Decode(
                "CURVE peer sent a frame that is not a MESSAGE",
            ));
        }
        if body.len() < PAYLOAD_START {
            return Err(CodecError::Decode("CURVE MESSAGE too short"));
        }
        let short_nonce = u64::from_be_bytes(
            body[MESSAGE_COMMAND.len()..BOX_START]
                .try_into()
                .expect("8 bytes checked above"),
        );
        if short_nonce <= self.counter {
            return Err(CodecError::Decode("CURVE MESSAGE nonce not increasing"));
        }
        let tag = Tag::clone_from_slice(&body[BOX_START..PLAINTEXT_START]);
        self.session
            .decrypt_in_place_detached(
                &full_nonce(self.nonce_prefix, short_nonce),
                b"",
                &mut body[PLAINTEXT_START..],
                &tag,
            )
            .map_err(|_| CodecError::Decode("CURVE MESSAGE box does not open"))?;
        self.counter = short_nonce;

        let flags = body[PLAINTEXT_START];
        body.advance(PAYLOAD_START);
        Ok(OpenedFrame {
            payload: body.freeze(),
            more: flags & FLAG_MORE != 0,
            command: flags & FLAG_COMMAND != 0,
        })
    }
}
