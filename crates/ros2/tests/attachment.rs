//! The publication attachment's bytes as rmw_zenoh's docs/design.md lays them out
//! ("Publishers"): sequence number and timestamp as little-endian int64, a GID length byte
//! of 16, the GID.

use naobroker_ros2::{Attachment, AttachmentError};

#[test]
fn the_attachment_is_33_bytes_in_the_design_documents_order() {
    let gid: [u8; 16] = std::array::from_fn(|at| 0xa0 + at as u8);
    let attachment = Attachment { sequence: 0x0102_0304_0506_0708, timestamp_ns: -2, gid };
    let bytes = attachment.encode();
    assert_eq!(bytes[..8], [8, 7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(bytes[8..16], [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(bytes[16], 16);
    assert_eq!(bytes[17..], gid);
    assert_eq!(Attachment::decode(&bytes), Ok(attachment));
}

#[test]
fn a_malformed_attachment_is_refused_with_the_reason() {
    let bytes = Attachment { sequence: 1, timestamp_ns: 2, gid: [3; 16] }.encode();
    for len in [0, 17, 32] {
        assert_eq!(Attachment::decode(&bytes[..len]), Err(AttachmentError::Length { expected: 33, len }));
    }
    let mut longer = bytes.to_vec();
    longer.push(0);
    assert_eq!(Attachment::decode(&longer), Err(AttachmentError::Length { expected: 33, len: 34 }));
    let mut wrong_gid = bytes;
    wrong_gid[16] = 12;
    assert_eq!(Attachment::decode(&wrong_gid), Err(AttachmentError::GidLength(12)));
}
