//! Writing to clients, on the client side: replies and refusals, each client's bounded queue
//! and its one writer task.

use std::rc::Rc;

use bytes::Bytes;
use naobroker_protocol::{cut, excerpt, ErrorKind, Value};

use super::adapter::{Connection, Outbound, ReplyEncoder, Write};
use super::bump;
use super::clients::{ClientSide, ClientState};
use crate::error::{CallError, CallResult};
use crate::identity::ClientId;

/// Longest error message sent to a caller, in bytes: a module (in the broker or remote) may
/// quote its whole input in an error, and a reply must not echo a megabyte back.
const MAX_ERROR_BYTES: usize = 256;

/// A reply with more values than this, or more bytes of text and binaries, is encoded on a
/// blocking thread: encoding (and freeing) a 100 000-key listing took the broker's thread
/// for over 100 ms, and every other client waited.
const ASIDE_VALUES: usize = 4096;
const ASIDE_BYTES: usize = 64 * 1024;

/// Replies of one client encoded aside at a time. Until its bytes are queued, such a reply
/// counts toward no bound of the client's queue: past this many, a large reply is encoded on
/// the broker's thread as any other, and a client that does not read meets its queue's bound.
pub(crate) const ASIDE_PER_CLIENT: usize = 2;

/// Whether encoding `value` is worth a thread of its own. The walk stops as soon as either
/// bound is passed: deciding costs at most [`ASIDE_VALUES`] steps, whatever the value.
fn worth_encoding_aside(value: &Value) -> bool {
    fn passes(value: &Value, values: &mut usize, bytes: &mut usize) -> bool {
        *values += 1;
        match value {
            Value::String(text) => *bytes += text.as_bytes().len(),
            Value::Binary(data) | Value::Ext(_, data) => *bytes += data.len(),
            Value::Array(items) if items.iter().any(|item| passes(item, values, bytes)) => return true,
            Value::Map(pairs)
                if pairs
                    .iter()
                    .any(|(key, item)| passes(key, values, bytes) || passes(item, values, bytes)) =>
            {
                return true
            }
            _ => {}
        }
        *values > ASIDE_VALUES || *bytes > ASIDE_BYTES
    }
    passes(value, &mut 0, &mut 0)
}

/// A known client's connection, and whether messages wait in its queue.
struct Writable {
    connection: Rc<dyn Connection>,
    queued: bool,
}

impl Writable {
    fn of(known: &ClientState) -> Writable {
        Writable { connection: Rc::clone(&known.connection), queued: known.outbox.writing }
    }
}

impl ClientSide {
    /// Encode `message` for `client`'s wire and send it; nothing when the broker does not
    /// know the client.
    pub(super) fn send(self: &Rc<Self>, client: &ClientId, message: Outbound<'_>) {
        let known = self.state.borrow().connected.get(client).map(Writable::of);
        if let Some(writable) = known {
            self.send_to(client, writable, message);
        }
    }

    /// Encode `message` and send it to `client`, whose connection was looked up once: written
    /// at once when nothing is queued before it, else queued.
    fn send_to(self: &Rc<Self>, client: &ClientId, writable: Writable, message: Outbound<'_>) {
        let Some(payload) = writable.connection.encode(message) else { return };
        match writable.queued {
            false => self.write_now(client, &writable.connection, payload),
            true => self.send_bytes(client, payload),
        }
    }

    /// Send without ever waiting on a slow client: handed to its connection at once when it
    /// has room and nothing is queued before it, else queued behind the client's one writer
    /// task. A client whose queue passes its bound is disconnected.
    pub(super) fn send_bytes(self: &Rc<Self>, client: &ClientId, payload: Bytes) {
        let limits = &self.limits;
        let over_bound = {
            let mut clients = self.state.borrow_mut();
            let Some(known) = clients.connected.get_mut(client) else { return };
            if !known.outbox.writing {
                let connection = Rc::clone(&known.connection);
                drop(clients);
                return self.write_now(client, &connection, payload);
            }
            let outbox = &mut known.outbox;
            outbox.bytes += payload.len();
            outbox.queue.push_back(payload);
            outbox.queue.len() > limits.max_queued_messages || outbox.bytes > limits.max_queued_bytes
        };
        if over_bound {
            self.disconnect(client, "its outgoing queue passed max_queued_messages or max_queued_bytes");
        }
    }

    fn write_now(self: &Rc<Self>, client: &ClientId, connection: &Rc<dyn Connection>, payload: Bytes) {
        let Write::Waiting(sending) = connection.write(payload) else { return };
        bump(&self.counters.sends_deferred);
        if let Some(known) = self.state.borrow_mut().connected.get_mut(client) {
            known.outbox.writing = true;
        }
        let (weak, client) = (Rc::downgrade(self), client.clone());
        actix_rt::spawn(async move {
            sending.await;
            loop {
                let Some(side) = weak.upgrade() else { return };
                let (connection, next) = {
                    let mut clients = side.state.borrow_mut();
                    let Some(known) = clients.connected.get_mut(&client) else { return };
                    match known.outbox.queue.pop_front() {
                        Some(payload) => {
                            known.outbox.bytes -= payload.len();
                            (Rc::clone(&known.connection), payload)
                        }
                        None => {
                            known.outbox.writing = false;
                            known.outbox.queue.shrink_to_fit();
                            return;
                        }
                    }
                };
                drop(side);
                if let Write::Waiting(sending) = connection.write(next) {
                    sending.await;
                }
            }
        });
    }

    /// Answer call `id` of `client`. A client the broker forgot while the call ran (its
    /// silence) still gets the answer on the connection it called from, when there is one.
    pub(super) fn reply(
        self: &Rc<Self>,
        client: &ClientId,
        called_from: Option<Rc<dyn Connection>>,
        id: u64,
        result: CallResult,
    ) {
        let known = self.state.borrow_mut().connected.get_mut(client).map(|caller| {
            caller.calls_in_flight = caller.calls_in_flight.saturating_sub(1);
            Writable::of(caller)
        });
        let connection = known.as_ref().map(|writable| &writable.connection).or(called_from.as_ref());
        let result = match (result, connection) {
            (Ok(value), Some(connection)) if worth_encoding_aside(&value) && self.take_aside_turn(client) => {
                match connection.reply_encoder(id) {
                    Some(encoder) => {
                        let connection = Rc::clone(connection);
                        return self.reply_aside(client, connection, id, encoder, value);
                    }
                    None => {
                        self.give_back_aside_turn(client);
                        Ok(value)
                    }
                }
            }
            (result, _) => result,
        };
        let message = match result {
            Ok(value) => Outbound::Reply { id, value },
            Err(error) => {
                Outbound::Error { id, kind: error.kind, message: cut(&error.message, MAX_ERROR_BYTES) }
            }
        };
        match (known, called_from) {
            (Some(writable), _) => self.send_to(client, writable, message),
            (None, Some(connection)) => {
                // No queue for a client the broker no longer knows: the write finishes alone.
                let written = connection.encode(message).map(|payload| connection.write(payload));
                if let Some(Write::Waiting(sending)) = written {
                    bump(&self.counters.sends_deferred);
                    actix_rt::spawn(sending);
                }
            }
            (None, None) => {}
        }
    }

    /// Take one of `client`'s turns to have a reply encoded aside: whether there was one. A
    /// client the broker forgot has no queue, and no turns to count: it makes no new calls.
    fn take_aside_turn(&self, client: &ClientId) -> bool {
        let mut clients = self.state.borrow_mut();
        let Some(known) = clients.connected.get_mut(client) else { return true };
        let outbox = &mut known.outbox;
        let free = outbox.encoding_aside < ASIDE_PER_CLIENT;
        outbox.encoding_aside += usize::from(free);
        free
    }

    fn give_back_aside_turn(&self, client: &ClientId) {
        if let Some(known) = self.state.borrow_mut().connected.get_mut(client) {
            known.outbox.encoding_aside = known.outbox.encoding_aside.saturating_sub(1);
        }
    }

    /// Encode a large reply, and free its value, on a blocking thread; the bytes are then
    /// queued as any reply's (a reply can so overtake this one: replies carry their call's id).
    /// A client forgotten meanwhile still gets it on its connection; if the encoding fails,
    /// the caller gets an error in its place, on a wire whose errors need no call state.
    fn reply_aside(
        self: &Rc<Self>,
        client: &ClientId,
        connection: Rc<dyn Connection>,
        id: u64,
        encoder: ReplyEncoder,
        value: Value,
    ) {
        bump(&self.counters.replies_encoded_aside);
        let (weak, client) = (Rc::downgrade(self), client.clone());
        actix_rt::spawn(async move {
            let encoded = tokio::task::spawn_blocking(move || encoder(value)).await.ok().flatten();
            let payload = match encoded {
                Some(payload) => payload,
                None => {
                    tracing::warn!(%client, id, "a reply could not be encoded");
                    let message = "the reply could not be encoded".into();
                    let failed = Outbound::Error { id, kind: ErrorKind::Failed, message };
                    let Some(payload) = connection.encode(failed) else { return };
                    payload
                }
            };
            let side = weak.upgrade();
            if let Some(side) = &side {
                side.give_back_aside_turn(&client);
            }
            match side {
                Some(side) if side.knows(&client) => side.send_bytes(&client, payload),
                _ => {
                    if let Write::Waiting(sending) = connection.write(payload) {
                        sending.await;
                    }
                }
            }
        });
    }

    /// Tell `client` it is admitted: a wire whose clients must learn that the broker forgot
    /// them says so when one it does not know speaks.
    pub(super) fn welcome(self: &Rc<Self>, client: &ClientId) {
        self.send(client, Outbound::Welcome { version: None });
    }

    /// Refuse a message of `client` that its wire could not read (`id` when it could read
    /// one), counted among the bad frames.
    pub(super) fn bad_message(self: &Rc<Self>, client: &ClientId, id: u64, message: String) {
        bump(&self.counters.bad_frames);
        tracing::debug!(%client, error = %excerpt(&message), "bad frame");
        self.send(client, Outbound::Error { id, kind: ErrorKind::BadArgument, message });
    }

    /// Answer a request that was refused before it was counted as in flight.
    pub(super) fn refuse(self: &Rc<Self>, client: &ClientId, id: u64, error: CallError) {
        bump(&self.counters.refused);
        tracing::debug!(%client, %error, "request refused");
        self.send(client, Outbound::Error { id, kind: error.kind, message: error.message });
    }
}
