//! `decode_twist` on hostile input: every truncation, a wrong encapsulation, non-finite
//! numbers and trailing bytes are refused with an error naming what was wrong, and no input
//! panics. (tests/rosbags.rs checks it reads what another implementation writes.)

use naobroker_ros2::{decode_twist, CdrError, CdrMessage, Twist, Vector3};

fn twist() -> Twist {
    Twist { linear: Vector3 { x: 0.5, y: -0.25, z: 0.0 }, angular: Vector3 { x: 0.0, y: 0.0, z: 1.5 } }
}

#[test]
fn a_twist_reads_back() {
    assert_eq!(decode_twist(&twist().to_cdr()), Ok(twist()));
    // Big-endian plain CDR is CDR too.
    let mut big_endian = vec![0x00, 0x00, 0x00, 0x00];
    for value in [0.5f64, -0.25, 0.0, 0.0, 0.0, 1.5] {
        big_endian.extend_from_slice(&value.to_be_bytes());
    }
    assert_eq!(decode_twist(&big_endian), Ok(twist()));
    // Up to 3 bytes of padding may follow.
    let mut padded = twist().to_cdr();
    padded.extend_from_slice(&[0, 0, 0]);
    assert_eq!(decode_twist(&padded), Ok(twist()));
}

#[test]
fn every_truncation_is_refused_naming_the_field() {
    let bytes = twist().to_cdr();
    assert_eq!(bytes.len(), 52);
    for len in 0..4 {
        assert_eq!(decode_twist(&bytes[..len]), Err(CdrError::NoHeader { len }));
    }
    let fields = ["linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z"];
    for len in 4..bytes.len() {
        let field = fields[(len - 4) / 8];
        let needed = 4 + ((len - 4) / 8 + 1) * 8;
        assert_eq!(
            decode_twist(&bytes[..len]),
            Err(CdrError::Truncated { field, needed, len }),
            "{len} bytes"
        );
    }
}

#[test]
fn malformed_twists_are_refused_with_the_reason() {
    let mut xcdr2 = twist().to_cdr();
    xcdr2[1] = 0x07; // PLAIN_CDR2_LE: not what ROS 2 sends.
    assert_eq!(decode_twist(&xcdr2), Err(CdrError::Representation([0x00, 0x07])));

    for (at, value) in [(1, f64::NAN), (5, f64::INFINITY), (0, f64::NEG_INFINITY)] {
        let mut bytes = twist().to_cdr();
        bytes[4 + at * 8..4 + at * 8 + 8].copy_from_slice(&value.to_le_bytes());
        let field = ["linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z"][at];
        match decode_twist(&bytes) {
            Err(CdrError::NotFinite { field: named, .. }) => assert_eq!(named, field),
            other => panic!("{value} in {field}: {other:?}"),
        }
    }

    let mut longer = twist().to_cdr();
    longer.extend_from_slice(&[0; 4]);
    assert_eq!(decode_twist(&longer), Err(CdrError::TrailingBytes { extra: 4 }));
}

/// A deterministic stream of bytes (a 64-bit LCG, Knuth's MMIX constants).
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u8 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut draws = Draws(29);
    let mut accepted = 0;
    for round in 0..20_000 {
        let len = round % 64;
        let mut bytes: Vec<u8> = (0..len).map(|_| draws.next()).collect();
        if round % 2 == 0 && len >= 2 {
            bytes[..2].copy_from_slice(&[0x00, 0x01]); // Past the header check half the time.
        }
        if decode_twist(&bytes).is_ok() {
            accepted += 1;
        }
    }
    // Some random 52..55-byte little-endian bodies are six finite doubles.
    assert!(accepted > 0);
}
