//! The publication attachment's bytes as rmw_zenoh's docs/design.md lays them out
//! ("Publishers"): sequence number and timestamp as little-endian int64, a GID length byte
//! of 16, the GID.

use naobroker_ros2::{gid_of_token, Attachment, AttachmentError};

#[test]
fn a_gid_is_xxh3_128_of_the_token_low_half_first() {
    // XXH3-128 of no bytes is 0x99aa06d3014798d8_6001c324468d497f (xxHash's own sanity check,
    // low half 0x6001c324468d497f); rmw_zenoh copies the low half first, little-endian.
    let mut expected = 0x6001_c324_468d_497f_u64.to_le_bytes().to_vec();
    expected.extend_from_slice(&0x99aa_06d3_0147_98d8_u64.to_le_bytes());
    assert_eq!(gid_of_token("").to_vec(), expected);
    assert_ne!(gid_of_token("@ros2_lv/0/ab/0/1/MP"), gid_of_token("@ros2_lv/0/ab/0/2/MP"));
}

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
