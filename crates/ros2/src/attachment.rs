//! The attachment rmw_zenoh sends with every publication (docs/design.md, "Publishers"):
//! the sequence number and the source timestamp (nanoseconds since the Unix epoch), each
//! an `int64` little-endian, then the publisher's GID as a length byte (16) and 16 bytes:
//! 33 bytes, as Zenoh's own serializer writes an `int64, int64, uint8[16]` tuple.
//!
//! This is the format since rmw_zenoh 0.2.4 on Jazzy and 0.6.0 on Rolling ("Change
//! serialization format in attachment_helpers.cpp", ros2/rmw_zenoh #601/#605, announced as
//! a wire-breaking change); Kilted has it from its first release. Older Jazzy builds
//! (0.2.3 and before) do not understand it.

use thiserror::Error;
use xxhash_rust::xxh3::xxh3_128;

/// A publisher's global id: 16 bytes, unique in the ROS graph.
pub type Gid = [u8; 16];

/// The GID rmw_zenoh gives the entity of a liveliness token: XXH3's 128-bit hash of the
/// token, its low 64 bits then its high 64 bits, each little-endian (rmw_zenoh's `Entity`
/// copies the two halves from memory). Every rmw_zenoh node computes it from the token it
/// sees, and `ros2 topic info -v` prints it; attaching the same GID to the publisher's
/// samples keeps the two in agreement.
pub fn gid_of_token(token: &str) -> Gid {
    xxh3_128(token.as_bytes()).to_le_bytes()
}

/// The per-publication metadata rmw_zenoh attaches to each sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// Counts the publisher's samples: 1 for its first, then one more each time (a
    /// subscriber reports a gap as lost messages).
    pub sequence: i64,
    /// When the sample was published, in nanoseconds since the Unix epoch.
    pub timestamp_ns: i64,
    /// The publisher's id ([`gid_of_token`] of its liveliness token).
    pub gid: Gid,
}

/// Why bytes are not an rmw_zenoh attachment.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AttachmentError {
    #[error("an attachment is {expected} bytes, not {len}")]
    Length { expected: usize, len: usize },
    #[error("the GID's length byte says {0}; rmw_zenoh's GIDs are 16 bytes")]
    GidLength(u8),
}

impl Attachment {
    /// Its size on the wire.
    pub const LEN: usize = 8 + 8 + 1 + 16;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut bytes = [0; Self::LEN];
        bytes[..8].copy_from_slice(&self.sequence.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.timestamp_ns.to_le_bytes());
        bytes[16] = self.gid.len() as u8;
        bytes[17..].copy_from_slice(&self.gid);
        bytes
    }

    /// Reads an attachment from untrusted bytes (a `/cmd_vel` sample's, say).
    pub fn decode(bytes: &[u8]) -> Result<Self, AttachmentError> {
        let bytes: &[u8; Self::LEN] = bytes
            .try_into()
            .map_err(|_| AttachmentError::Length { expected: Self::LEN, len: bytes.len() })?;
        let (sequence, rest) = bytes.split_first_chunk::<8>().expect("33 bytes");
        let (timestamp, rest) = rest.split_first_chunk::<8>().expect("25 bytes");
        let (&gid_len, gid) = rest.split_first().expect("17 bytes");
        if usize::from(gid_len) != gid.len() {
            return Err(AttachmentError::GidLength(gid_len));
        }
        Ok(Attachment {
            sequence: i64::from_le_bytes(*sequence),
            timestamp_ns: i64::from_le_bytes(*timestamp),
            gid: gid.try_into().expect("16 bytes"),
        })
    }
}
