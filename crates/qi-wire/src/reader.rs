//! Reading one qi connection: messages cut out of the byte stream as they complete, the
//! header checked before its payload is awaited (a bad magic, version or type, or a payload
//! over `max_frame_bytes`, closes the connection, counted), each message handed on. What an
//! unfinished message holds counts toward the broker's `max_unfinished_bytes`, and a
//! connection whose message stops arriving (`stall_timeout_ms`), or stays unfinished for
//! `STALL_MAX_PERIODS` of them however much arrives, is closed.

use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use naobroker_framework::wire::Connection;
use naobroker_framework::{STALL_MAX_PERIODS, STALL_MIN_PROGRESS};
use naobroker_qi::{decode_message, Decoded, FrameError};
use tokio::time::Instant;

use crate::connection::QiConnection;
use crate::dispatch;
use crate::shared::bump;

/// Bytes asked of the socket at most per read: a claimed payload is read as it arrives,
/// never allocated at once from what the header says. Every connection may hold this much
/// outside the budget of unfinished messages.
const READ_CHUNK: usize = 64 * 1024;

/// Messages handled in a row before the other tasks of the broker's thread get a turn.
const HANDLED_BETWEEN_YIELDS: u32 = 32;

/// One `stall_timeout` while the connection waits in the middle of a message, and what
/// arrived in it.
struct Stall {
    ends: Instant,
    received: usize,
    finished_a_message: bool,
    /// Periods before this one spent in the middle of the same message.
    unfinished_periods: u32,
}

impl Stall {
    fn new(timeout: Duration, unfinished_periods: u32) -> Stall {
        Stall { ends: Instant::now() + timeout, received: 0, finished_a_message: false, unfinished_periods }
    }
}

/// Read `connection` until it ends; then the broker forgets the client.
pub(crate) async fn read(connection: Rc<QiConnection>) {
    let shared = Rc::clone(&connection.shared);
    let max_payload = shared.max_frame_bytes;
    let mut buffer = BytesMut::with_capacity(READ_CHUNK);
    let mut unfinished = shared.unfinished.share();
    let mut stall: Option<Stall> = None;
    let mut handled = 0u32;
    loop {
        match decode_message(&buffer, max_payload) {
            // Messages read before the broker closed the connection (it broke a bound) are
            // dropped: serving them would open the client again.
            Ok(Decoded::Message { .. }) if connection.is_closed() => break,
            Ok(Decoded::Message { message, consumed }) => {
                buffer.advance(consumed);
                if let Some(stall) = &mut stall {
                    stall.finished_a_message = true;
                }
                let Some(broker) = shared.broker.upgrade() else { break };
                let (kind, address, id) = (message.kind, message.address, message.id);
                tracing::trace!(client = %connection.client, ?kind, %address, id, "qi message");
                broker.arrived(&connection.client, || connection.clone());
                dispatch::on_message(&broker, &connection, message);
                drop(broker);
                handled = handled.wrapping_add(1);
                // A client that always has a message ready never makes a read wait: without a
                // yield it would starve every other task of the thread.
                if handled.is_multiple_of(HANDLED_BETWEEN_YIELDS) {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Decoded::Incomplete { needed }) => {
                buffer.reserve(needed.saturating_sub(buffer.len()).clamp(1, READ_CHUNK));
                let wanted = buffer.capacity().saturating_sub(READ_CHUNK);
                if !unfinished.hold(wanted) {
                    let limit = unfinished.limit();
                    tracing::warn!(
                        client = %connection.client, wanted, limit,
                        "qi client disconnected: its unfinished message would pass max_unfinished_bytes"
                    );
                    connection.close();
                    break;
                }
                if buffer.is_empty() {
                    stall = None;
                    if read_some(&connection, &mut buffer).await == 0 {
                        break;
                    }
                    continue;
                }
                let period = stall.get_or_insert_with(|| Stall::new(shared.stall_timeout, 0));
                let periods = if period.finished_a_message { 0 } else { period.unfinished_periods + 1 };
                match tokio::time::timeout_at(period.ends, read_some(&connection, &mut buffer)).await {
                    Ok(0) => break,
                    Ok(read) => period.received = period.received.saturating_add(read),
                    Err(_elapsed)
                        if (period.finished_a_message || period.received >= STALL_MIN_PROGRESS)
                            && periods < STALL_MAX_PERIODS =>
                    {
                        *period = Stall::new(shared.stall_timeout, periods);
                    }
                    Err(_elapsed) => {
                        bump(&shared.counters.stalled_frames);
                        tracing::warn!(
                            client = %connection.client, received = period.received,
                            max_periods = STALL_MAX_PERIODS,
                            "qi client disconnected: its message stopped arriving, or stayed unfinished for \
                             max_periods stall_timeout_ms"
                        );
                        connection.close();
                        break;
                    }
                }
            }
            Err(error) => {
                let counter = match error {
                    FrameError::TooLarge { .. } => &shared.counters.oversized_frames,
                    _ => &shared.counters.bad_headers,
                };
                bump(counter);
                tracing::warn!(client = %connection.client, %error, "qi client disconnected");
                connection.close();
                break;
            }
        }
    }
    crate::connection::hosted::release(&connection);
    if let Some(broker) = shared.broker.upgrade() {
        broker.closed(&connection.client);
    }
}

/// Read what the socket has into `buffer`'s spare room: how many bytes, 0 when the
/// connection ended.
async fn read_some(connection: &QiConnection, buffer: &mut BytesMut) -> usize {
    loop {
        if connection.stream().readable().await.is_err() {
            return 0;
        }
        match connection.stream().try_read_buf(buffer) {
            Ok(read) => return read,
            Err(error) if error.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return 0,
        }
    }
}
