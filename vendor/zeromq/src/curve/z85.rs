//! Z85 (ZeroMQ RFC 32): the printable text form libzmq and pyzmq use for CURVE keys.

use thiserror::Error;

const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Why a Z85 encoding or decoding was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Z85Error {
    /// Z85 encodes whole 4-byte groups into whole 5-character groups.
    #[error("Z85 {what} of length {length} is not a multiple of {group}")]
    Length {
        what: &'static str,
        length: usize,
        group: usize,
    },
    #[error("{0:?} is not a Z85 character")]
    Character(char),
    #[error("Z85 group {0:?} is larger than 32 bits")]
    Overflow(String),
}

/// Encodes `bytes` (a multiple of 4 long) as Z85 text, 5 characters per 4 bytes.
pub fn z85_encode(bytes: &[u8]) -> Result<String, Z85Error> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Z85Error::Length {
            what: "input",
            length: bytes.len(),
            group: 4,
        });
    }
    let mut text = String::with_capacity(bytes.len() / 4 * 5);
    for group in bytes.chunks_exact(4) {
        let mut value = u32::from_be_bytes([group[0], group[1], group[2], group[3]]);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        text.extend(digits.iter().map(|&digit| char::from(digit)));
    }
    Ok(text)
}

/// Decodes Z85 `text` (a multiple of 5 characters long) into 4 bytes per 5 characters.
pub fn z85_decode(text: &str) -> Result<Vec<u8>, Z85Error> {
    if !text.len().is_multiple_of(5) {
        return Err(Z85Error::Length {
            what: "text",
            length: text.len(),
            group: 5,
        });
    }
    let mut bytes = Vec::with_capacity(text.len() / 5 * 4);
    for group in text.as_bytes().chunks_exact(5) {
        let mut value: u64 = 0;
        for &character in group {
            let digit = ALPHABET
                .iter()
                .position(|&candidate| candidate == character)
                .ok_or(Z85Error::Character(char::from(character)))?;
            value = value * 85 + digit as u64;
        }
        let value = u32::try_from(value)
            .map_err(|_| Z85Error::Overflow(String::from_utf8_lossy(group).into_owned()))?;
        bytes.extend_from_slice(&value.to_be_bytes());
    }
    Ok(bytes)
}
