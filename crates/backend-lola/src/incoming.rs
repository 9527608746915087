//! The bytes LoLA sent and the cycle thread has not read as maps yet: a fixed buffer filled
//! from the socket without blocking, cut into sensor maps by the streaming decoder (no map
//! size is trusted). A map the decoder refuses is skipped whole when it is a MessagePack
//! map of bounded size; anything else means the stream cannot be resynchronized.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use naobroker_hardware::link::LinkLoss;
use naobroker_lola::{decode_sensor_map, DecodeError, SensorMap, MAX_MESSAGE_BYTES};
use nix::errno::Errno;
use nix::sys::socket::{recv, MsgFlags};

use super::skim::{skim, Skim};

/// What the next bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Frame {
    /// A sensor map, decoded.
    Map,
    /// A map that is no sensor map, skipped: it still gets an answer.
    Malformed,
    /// Nothing whole yet.
    NeedMore,
    /// The stream cannot go on: reset the connection.
    Broken(LinkLoss),
}

/// What one read from the socket gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    Bytes,
    /// Nothing waiting.
    Empty,
    /// The robot closed the connection.
    Closed,
    /// The OS error (errno) reading failed with.
    Failed(i32),
    /// No room left: more than a map may take is waiting unread.
    Full,
}

/// Received bytes not read as maps yet: `buffer[start..end]`.
pub(super) struct Incoming {
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Incoming {
    /// Room for a partial map of the longest size accepted and as much again: a read
    /// always has room.
    pub(super) fn new() -> Incoming {
        Incoming { buffer: vec![0; 2 * MAX_MESSAGE_BYTES].into_boxed_slice(), start: 0, end: 0 }
    }

    /// Forget everything (a new connection).
    pub(super) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Read what the socket holds into the free room, without blocking.
    pub(super) fn read_from(&mut self, socket: &UnixStream) -> Read {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            return Read::Full;
        }
        loop {
            return match recv(socket.as_raw_fd(), &mut self.buffer[self.end..], MsgFlags::MSG_DONTWAIT) {
                Ok(0) => Read::Closed,
                Ok(read) => {
                    self.end += read;
                    Read::Bytes
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => Read::Empty,
                Err(errno) => Read::Failed(errno as i32),
            };
        }
    }

    /// Cut the next map off the bytes received: a sensor map is decoded into `map` (which
    /// may hold part of a refused one afterwards).
    pub(super) fn next_frame(&mut self, map: &mut SensorMap) -> Frame {
        let bytes = &self.buffer[self.start..self.end];
        if bytes.is_empty() {
            return Frame::NeedMore;
        }
        let skipped = match decode_sensor_map(bytes, map) {
            Ok(decoded) => {
                self.start += decoded.consumed;
                return Frame::Map;
            }
            Err(DecodeError::Incomplete) => return Frame::NeedMore,
            Err(DecodeError::TooLong { .. }) => return Frame::Broken(LinkLoss::Oversized),
            // A map with unexpected content: step over it whole if it is one.
            Err(_) if matches!(bytes[0], 0x80..=0x8f | 0xde | 0xdf) => skim(bytes),
            Err(_) => return Frame::Broken(LinkLoss::Malformed),
        };
        match skipped {
            Skim::Complete(length) => {
                self.start += length;
                Frame::Malformed
            }
            Skim::Incomplete if self.end - self.start < MAX_MESSAGE_BYTES => Frame::NeedMore,
            Skim::Incomplete | Skim::TooLong => Frame::Broken(LinkLoss::Oversized),
            Skim::Invalid => Frame::Broken(LinkLoss::Malformed),
        }
    }
}
