//! A whole message (header fields and payload bytes), the streaming decoder that cuts
//! messages out of a byte buffer, the encoder, and the payload of an `Error` message.

use crate::header::{Address, Flags, Header, MessageType, HEADER_SIZE};
use crate::reader::{put_bytes, put_u32, Reader};
use crate::{DecodeError, EncodeError, FrameError};

/// One message: its header's fields and its payload, still encoded (the payload's type
/// depends on the method or signal the address names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: u32,
    pub kind: MessageType,
    pub flags: Flags,
    pub address: Address,
    pub payload: Vec<u8>,
}

/// What [`decode_message`] found at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A whole message, which took the first `consumed` bytes of the buffer.
    Message { message: Message, consumed: usize },
    /// The buffer holds the start of a message; at least `needed` bytes in all are required
    /// (28 until the header is complete, then the header plus its payload).
    Incomplete { needed: usize },
}

/// Cut the first message out of `buffer`. A bad header is refused as soon as its 28 bytes
/// are there, and a payload over `max_payload` before any of it is awaited or allocated.
pub fn decode_message(buffer: &[u8], max_payload: u32) -> Result<Decoded, FrameError> {
    let Some(header_bytes) = buffer.first_chunk::<HEADER_SIZE>() else {
        return Ok(Decoded::Incomplete { needed: HEADER_SIZE });
    };
    let header = Header::decode(header_bytes, max_payload)?;
    let total = HEADER_SIZE + header.size as usize;
    if buffer.len() < total {
        return Ok(Decoded::Incomplete { needed: total });
    }
    let message = Message::from_parts(header, buffer[HEADER_SIZE..total].to_vec());
    Ok(Decoded::Message { message, consumed: total })
}

impl Message {
    pub fn new(id: u32, kind: MessageType, address: Address, payload: Vec<u8>) -> Message {
        Message { id, kind, flags: Flags::NONE, address, payload }
    }

    /// A message from a header read apart (with [`Header::decode`]) and its payload.
    pub fn from_parts(header: Header, payload: Vec<u8>) -> Message {
        Message { id: header.id, kind: header.kind, flags: header.flags, address: header.address, payload }
    }

    /// The header this message is sent with. Fails only for a payload of 4 GiB or more.
    pub fn header(&self) -> Result<Header, EncodeError> {
        let size = u32::try_from(self.payload.len())
            .map_err(|_| EncodeError::TooLong { what: "payload", len: self.payload.len() })?;
        Ok(Header { id: self.id, size, kind: self.kind, flags: self.flags, address: self.address })
    }

    /// Append the header and the payload to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        out.extend_from_slice(&self.header()?.encode());
        out.extend_from_slice(&self.payload);
        Ok(())
    }

    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(HEADER_SIZE + self.payload.len());
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// The `Reply` to this call: same id and address, flags cleared.
    pub fn reply(&self, payload: Vec<u8>) -> Message {
        Message::new(self.id, MessageType::Reply, self.address, payload)
    }

    /// The `Error` answer to this call, carrying `text` as libqi does.
    pub fn error(&self, text: &str) -> Message {
        Message::new(self.id, MessageType::Error, self.address, error_payload(text))
    }

    /// The `Canceled` answer to this call (empty payload).
    pub fn canceled(&self) -> Message {
        Message::new(self.id, MessageType::Canceled, self.address, Vec::new())
    }
}

/// The payload of an `Error` message: a dynamic string, `01000000 73` then the text.
/// A text of 4 GiB or more is cut (a message could not carry it anyway).
pub fn error_payload(text: &str) -> Vec<u8> {
    let bytes = &text.as_bytes()[..text.len().min(u32::MAX as usize - 16)];
    let mut out = Vec::with_capacity(9 + bytes.len());
    put_u32(&mut out, 1);
    out.push(b's');
    put_bytes(&mut out, bytes).expect("length was cut to fit in 32 bits");
    out
}

/// The text of an `Error` message's payload (a dynamic string). Bytes that are not UTF-8 are
/// replaced, so that an error always has a text to show.
pub fn error_message(payload: &[u8]) -> Result<String, DecodeError> {
    let mut reader = Reader::new(payload);
    let signature = reader.read_len_bytes()?;
    if signature != b"s" {
        let found = String::from_utf8_lossy(signature).into_owned();
        return Err(DecodeError::Unexpected { expected: "a dynamic string", found });
    }
    let text = String::from_utf8_lossy(reader.read_len_bytes()?).into_owned();
    reader.finish()?;
    Ok(text)
}
