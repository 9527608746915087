//! Frames on the wire: `A5 5A | kind | seq | length u16 LE | payload | crc16 LE`.
//! The CRC (CRC-16/CCITT-FALSE) covers kind, seq, length and payload.

use thiserror::Error;

pub const SYNC: [u8; 2] = [0xA5, 0x5A];
/// Host → board: `time i32 | count u16 | count × i32 | ceil(count/8) trigger bytes`.
pub const ACTUATORS: u8 = 0x01;
/// Board → host: `acked seq u8 | status u8 | count u16 | count × f32`.
pub const SENSORS: u8 = 0x81;
pub const STATUS_ACK: u8 = 0;
pub const STATUS_NACK: u8 = 1;
const HEADER: usize = 6;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("bad CRC: frame says {expected:#06x}, bytes give {actual:#06x}")]
    Crc { expected: u16, actual: u16 },
    #[error("payload too short for its counts")]
    Short,
}

/// One parsed frame, borrowing its payload.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: u8,
    pub sequence: u8,
    pub payload: &'a [u8],
}

pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

pub fn encode(out: &mut Vec<u8>, kind: u8, sequence: u8, payload: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&SYNC);
    out.extend_from_slice(&[kind, sequence, 0, 0]);
    let body = out.len();
    payload(out);
    let length = (out.len() - body) as u16;
    out[start + 4..start + 6].copy_from_slice(&length.to_le_bytes());
    let crc = crc16(&out[start + 2..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

pub fn encode_actuators(out: &mut Vec<u8>, sequence: u8, time: i32, raw: &[u64], fired: &[bool]) {
    encode(out, ACTUATORS, sequence, |out| {
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&(raw.len() as u16).to_le_bytes());
        for &value in raw {
            out.extend_from_slice(&(value as i64 as i32).to_le_bytes());
        }
        for chunk in fired.chunks(8) {
            out.push(chunk.iter().enumerate().fold(0u8, |bits, (i, &f)| bits | (u8::from(f) << i)));
        }
    });
}

pub fn encode_sensors(out: &mut Vec<u8>, sequence: u8, acked: u8, status: u8, values: &[f32]) {
    encode(out, SENSORS, sequence, |out| {
        out.extend_from_slice(&[acked, status]);
        out.extend_from_slice(&(values.len() as u16).to_le_bytes());
        for value in values {
            out.extend_from_slice(&value.to_le_bytes());
        }
    });
}

/// `(acked sequence, status, values)` of a SENSORS payload.
pub fn decode_sensors(payload: &[u8]) -> Result<(u8, u8, impl Iterator<Item = f32> + '_), FrameError> {
    if payload.len() < 4 {
        return Err(FrameError::Short);
    }
    let count = usize::from(u16::from_le_bytes([payload[2], payload[3]]));
    let values = payload.get(4..4 + 4 * count).ok_or(FrameError::Short)?;
    Ok((payload[0], payload[1], values.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
}

/// `(time, raw values, trigger flags)` of an ACTUATORS payload.
pub fn decode_actuators(payload: &[u8]) -> Result<(i32, Vec<i32>, Vec<bool>), FrameError> {
    if payload.len() < 6 {
        return Err(FrameError::Short);
    }
    let time = i32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
    let count = usize::from(u16::from_le_bytes([payload[4], payload[5]]));
    let values = payload.get(6..6 + 4 * count).ok_or(FrameError::Short)?;
    let flags = payload.get(6 + 4 * count..6 + 4 * count + count.div_ceil(8)).ok_or(FrameError::Short)?;
    let raw = values.chunks_exact(4).map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let fired = (0..count).map(|i| flags[i / 8] & (1 << (i % 8)) != 0).collect();
    Ok((time, raw, fired))
}

impl<'a> Frame<'a> {
    /// The first whole frame in `bytes` and how many bytes it used (garbage before the
    /// sync bytes included); `None` until a whole frame has arrived.
    pub fn parse(bytes: &'a [u8]) -> Result<Option<(Frame<'a>, usize)>, FrameError> {
        let Some(start) = bytes.windows(2).position(|w| w == SYNC) else { return Ok(None) };
        let rest = &bytes[start..];
        if rest.len() < HEADER {
            return Ok(None);
        }
        let length = usize::from(u16::from_le_bytes([rest[4], rest[5]]));
        let total = HEADER + length + 2;
        if rest.len() < total {
            return Ok(None);
        }
        let expected = u16::from_le_bytes([rest[total - 2], rest[total - 1]]);
        let actual = crc16(&rest[2..total - 2]);
        if expected != actual {
            return Err(FrameError::Crc { expected, actual });
        }
        Ok(Some((
            Frame { kind: rest[2], sequence: rest[3], payload: &rest[HEADER..HEADER + length] },
            start + total,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_is_ccitt_false() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    #[test]
    fn frames_round_trip_and_corruption_is_caught() {
        let mut out = vec![0x00, 0x13];
        encode_actuators(&mut out, 7, -5, &[1, (-2i64) as u64, 300], &[false, true, false]);
        let (frame, used) = Frame::parse(&out).unwrap().unwrap();
        assert_eq!((frame.kind, frame.sequence, used), (ACTUATORS, 7, out.len()));
        assert_eq!(
            decode_actuators(frame.payload).unwrap(),
            (-5, vec![1, -2, 300], vec![false, true, false])
        );
        assert_eq!(Frame::parse(&out[..out.len() - 1]), Ok(None));
        let mut corrupt = out.clone();
        corrupt[10] ^= 0xFF;
        assert!(matches!(Frame::parse(&corrupt), Err(FrameError::Crc { .. })));
    }
}
