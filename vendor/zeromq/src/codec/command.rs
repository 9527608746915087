//! ZMTP commands (READY, ERROR and CURVE's) and the metadata some of them carry.

use super::error::{CodecError, CodecResult};

use bytes::{Buf, BufMut, Bytes, BytesMut};

use std::collections::HashMap;
use std::convert::TryFrom;
use std::fmt::Display;

#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum ZmqCommandName {
    READY,
    ERROR,
    // CURVE (RFC 26) handshake and traffic.
    HELLO,
    WELCOME,
    INITIATE,
    MESSAGE,
}

impl ZmqCommandName {
    pub const fn as_str(&self) -> &'static str {
        match self {
            ZmqCommandName::READY => "READY",
            ZmqCommandName::ERROR => "ERROR",
            ZmqCommandName::HELLO => "HELLO",
            ZmqCommandName::WELCOME => "WELCOME",
            ZmqCommandName::INITIATE => "INITIATE",
            ZmqCommandName::MESSAGE => "MESSAGE",
        }
    }
}

impl Display for ZmqCommandName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A ZMTP command: its name and the bytes after it. What the bytes mean depends on the
/// mechanism (NULL's READY holds metadata in clear, CURVE's READY holds it in a box), so the
/// handshake code interprets them, with [`parse_metadata`] where they are metadata.
#[derive(Debug, Clone)]
pub struct ZmqCommand {
    pub name: ZmqCommandName,
    pub data: Bytes,
}

impl ZmqCommand {
    pub fn new(name: ZmqCommandName, data: impl Into<Bytes>) -> Self {
        Self {
            name,
            data: data.into(),
        }
    }

    /// A ZMTP ERROR command; the reason is cut to the 255 bytes the command can hold.
    pub fn error(reason: &str) -> Self {
        let reason = &reason.as_bytes()[..reason.len().min(255)];
        let mut data = BytesMut::with_capacity(1 + reason.len());
        data.put_u8(reason.len() as u8);
        data.extend_from_slice(reason);
        Self::new(ZmqCommandName::ERROR, data)
    }

    /// The reason an ERROR command gives, as far as it is readable.
    pub fn error_reason(&self) -> String {
        let reason = match self.data.split_first() {
            Some((&len, rest)) => &rest[..rest.len().min(usize::from(len))],
            None => &[],
        };
        String::from_utf8_lossy(reason).into_owned()
    }
}

/// Encodes ZMTP metadata (RFC 23 and 26): each property as a 1-byte name length, the name,
/// a 4-byte value length and the value.
pub fn encode_metadata<'a>(properties: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> BytesMut {
    let mut bytes = BytesMut::new();
    for (name, value) in properties {
        bytes.put_u8(name.len() as u8);
        bytes.extend_from_slice(name.as_bytes());
        bytes.put_u32(value.len() as u32);
        bytes.extend_from_slice(value);
    }
    bytes
}

/// Decodes ZMTP metadata written as [`encode_metadata`] writes it.
pub fn parse_metadata(mut buf: Bytes) -> CodecResult<HashMap<String, Bytes>> {
    let mut properties = HashMap::new();
    while !buf.is_empty() {
        let prop_len = buf.get_u8() as usize;
        if buf.len() < prop_len {
            return Err(CodecError::Decode("Property name exceeds frame length"));
        }

        let property = match String::from_utf8(buf.split_to(prop_len).to_vec()) {
            Ok(p) => p,
            Err(_) => return Err(CodecError::Decode("Invalid property identifier")),
        };

        if buf.len() < 4 {
            return Err(CodecError::Decode("Missing property value length"));
        }

        let prop_val_len = buf.get_u32() as usize;
        if buf.len() < prop_val_len {
            return Err(CodecError::Decode("Property value exceeds frame length"));
        }

        let prop_value = buf.split_to(prop_val_len);
        properties.insert(property, prop_value);
    }
    Ok(properties)
}

impl TryFrom<Bytes> for ZmqCommand {
    type Error = CodecError;

    fn try_from(mut buf: Bytes) -> Result<Self, Self::Error> {
        if buf.is_empty() {
            return Err(CodecError::Decode("Missing command length"));
        }

        let command_len = buf.get_u8() as usize;
        if buf.len() < command_len {
            return Err(CodecError::Decode("Command name exceeds frame length"));
        }

        // command-name-char = ALPHA according to https://rfc.zeromq.org/spec:23/ZMTP/
        let name = match &buf[..command_len] {
            b"READY" => ZmqCommandName::READY,
            b"ERROR" => ZmqCommandName::ERROR,
            b"HELLO" => ZmqCommandName::HELLO,
            b"WELCOME" => ZmqCommandName::WELCOME,
            b"INITIATE" => ZmqCommandName::INITIATE,
            b"MESSAGE" => ZmqCommandName::MESSAGE,
            _ => return Err(CodecError::Command("Unknown command received")),
        };
        buf.advance(command_len);
        Ok(Self { name, data: buf })
    }
}

impl From<ZmqCommand> for BytesMut {
    fn from(command: ZmqCommand) -> Self {
        let command_name = command.name.as_str();
        let message_len = 1 + command_name.len() + command.data.len();

        let mut bytes = BytesMut::new();
        if message_len > 255 {
            bytes.reserve(message_len + 9);
            bytes.put_u8(0x06);
            bytes.put_u64(message_len as u64);
        } else {
            bytes.reserve(message_len + 2);
            bytes.put_u8(0x04);
            bytes.put_u8(message_len as u8);
        };
        bytes.put_u8(command_name.len() as u8);
        bytes.extend_from_slice(command_name.as_ref());
        bytes.extend_from_slice(&command.data);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_metadata, ZmqCommand};
    use bytes::Bytes;
    use std::convert::TryFrom;

    #[test]
    fn rejects_truncated_command_name() {
        assert!(ZmqCommand::try_from(Bytes::from_static(&[5, b'R'])).is_err());
    }

    fn assert_metadata_error(data: &'static [u8]) {
        assert!(parse_metadata(Bytes::from_static(data)).is_err());
    }

    #[test]
    fn rejects_truncated_property_name() {
        assert_metadata_error(&[11, b'S']);
    }

    #[test]
    fn rejects_truncated_property_value_length() {
        assert_metadata_error(&[
            11, b'S', b'o', b'c', b'k', b'e', b't', b'-', b'T', b'y', b'p', b'e', 0, 0,
        ]);
    }

    #[test]
    fn rejects_truncated_property_value() {
        assert_metadata_error(&[
            11, b'S', b'o', b'c', b'k', b'e', b't', b'-', b'T', b'y', b'p', b'e', 0, 0, 0, 3, b'R',
        ]);
    }
}
