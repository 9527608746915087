//! The 28-byte message header: magic, id, payload size, version, type, flags and the
//! service.object.action address, all little-endian (libqi memcpys a C struct).

use crate::FrameError;

/// Bytes in every header.
pub const HEADER_SIZE: usize = 28;

/// The first 4 bytes of every message (libqi's `0x42adde42` written little-endian).
pub const MAGIC: [u8; 4] = [0x42, 0xde, 0xad, 0x42];

/// What a message is (`Message::Type` in libqi).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    None = 0,
    /// A method call that expects a `Reply`, `Error` or `Canceled` with the same id.
    Call = 1,
    Reply = 2,
    /// A call's failure; the payload is a dynamic string ([`crate::error_payload`]).
    Error = 3,
    /// A call without answer.
    Post = 4,
    /// A signal emission to a subscriber, with the sender's own message id.
    Event = 5,
    /// A capability map pushed without being asked.
    Capability = 6,
    /// Cancel the call whose id (`I`) is the payload.
    Cancel = 7,
    /// The answer to a cancelled call, with an empty payload.
    Canceled = 8,
}

impl MessageType {
    pub fn from_u8(byte: u8) -> Option<MessageType> {
        Some(match byte {
            0 => MessageType::None,
            1 => MessageType::Call,
            2 => MessageType::Reply,
            3 => MessageType::Error,
            4 => MessageType::Post,
            5 => MessageType::Event,
            6 => MessageType::Capability,
            7 => MessageType::Cancel,
            8 => MessageType::Canceled,
            _ => return None,
        })
    }
}

/// The header's flag byte. Bits this codec does not know are kept as they came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// The payload is a dynamic value (`m`) instead of the declared signature.
    pub const DYNAMIC_PAYLOAD: Flags = Flags(1);
    /// A return-type signature follows the payload.
    pub const RETURN_TYPE: Flags = Flags(2);

    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Where a message goes: a service, one of its objects, and a method or signal of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Address {
    pub service: u32,
    pub object: u32,
    pub action: u32,
}

impl Address {
    pub fn new(service: u32, object: u32, action: u32) -> Address {
        Address { service, object, action }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.service, self.object, self.action)
    }
}

/// A decoded header. The version is always 0 and is not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub id: u32,
    /// Bytes of payload that follow the header.
    pub size: u32,
    pub kind: MessageType,
    pub flags: Flags,
    pub address: Address,
}

impl Header {
    /// Read a header, refusing a bad magic, a version other than 0, an unknown type and a
    /// payload larger than `max_payload`: all from these 28 bytes, before the payload is
    /// read or allocated.
    pub fn decode(bytes: &[u8; HEADER_SIZE], max_payload: u32) -> Result<Header, FrameError> {
        let u32_at = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
        if magic != MAGIC {
            return Err(FrameError::BadMagic(magic));
        }
        let version = u16::from_le_bytes([bytes[12], bytes[13]]);
        if version != 0 {
            return Err(FrameError::UnsupportedVersion(version));
        }
        let kind = MessageType::from_u8(bytes[14]).ok_or(FrameError::UnknownType(bytes[14]))?;
        let size = u32_at(8);
        if size > max_payload {
            return Err(FrameError::TooLarge { size, limit: max_payload });
        }
        Ok(Header {
            id: u32_at(4),
            size,
            kind,
            flags: Flags(bytes[15]),
            address: Address { service: u32_at(16), object: u32_at(20), action: u32_at(24) },
        })
    }

    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut bytes = [0u8; HEADER_SIZE];
        bytes[0..4].copy_from_slice(&MAGIC);
        bytes[4..8].copy_from_slice(&self.id.to_le_bytes());
        bytes[8..12].copy_from_slice(&self.size.to_le_bytes());
        // bytes 12..14: version 0
        bytes[14] = self.kind as u8;
        bytes[15] = self.flags.0;
        bytes[16..20].copy_from_slice(&self.address.service.to_le_bytes());
        bytes[20..24].copy_from_slice(&self.address.object.to_le_bytes());
        bytes[24..28].copy_from_slice(&self.address.action.to_le_bytes());
        bytes
    }
}
