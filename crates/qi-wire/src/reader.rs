//! Reading one qi connection: messages cut out of the byte stream as they complete, the
//! header checked before its payload is awaited (a bad magic, version or type, or a payload
//! over `max_frame_bytes`, closes the connection, counted), each message handed on.

use std::io::ErrorKind;
use std::rc::Rc;

use bytes::{Buf, BytesMut};
use naobroker_framework::wire::Connection;
use naobroker_qi::{decode_message, Decoded, FrameError};

use crate::connection::QiConnection;
use crate::dispatch;
use crate::shared::bump;

/// Bytes asked of the socket at most per read: a claimed payload is read as it arrives,
/// never allocated at once from what the header says.
const READ_CHUNK: usize = 64 * 1024;

/// Messages handled in a row before the other tasks of the broker's thread get a turn.
const HANDLED_BETWEEN_YIELDS: u32 = 32;

/// Read `connection` until it ends; then the broker forgets the client.
pub(crate) async fn read(connection: Rc<QiConnection>) {
    let shared = Rc::clone(&connection.shared);
    let max_payload = shared.max_frame_bytes;
    let mut buffer = BytesMut::with_capacity(READ_CHUNK);
    let mut handled = 0u32;
    loop {
        match decode_message(&buffer, max_payload) {
            Ok(Decoded::Message { message, consumed }) => {
                buffer.advance(consumed);
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
                if !read_some(&connection, &mut buffer).await {
                    break;
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

/// Read what the socket has into `buffer`'s spare room; false when the connection ended.
async fn read_some(connection: &QiConnection, buffer: &mut BytesMut) -> bool {
    loop {
        if connection.stream().readable().await.is_err() {
            return false;
        }
        match connection.stream().try_read_buf(buffer) {
            Ok(0) => return false,
            Ok(_) => return true,
            Err(error) if error.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
    }
}
