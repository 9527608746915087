//! The Zenoh peers at the broker: their calls come in as one client's, under an identity of
//! their own, so that the broker's limits, module ownership and reserved keys hold for them as
//! for any client (never as the broker's own code, which may do anything).

use std::sync::{mpsc, Arc};

use bytes::{BufMut, Bytes, BytesMut};
use naobroker_framework::wire::{Connection, Outbound, ReplyEncoder, Write};
use naobroker_framework::{ClientId, Value};
use zenoh::query::Query;

use crate::module::Counters;

/// The first byte of the peers' client name: no other wire starts its names with it.
const CLIENT_ID_PREFIX: u8 = b'Z';
/// The reply's tag after its id: a value, as JSON.
const VALUE: u8 = 0;
/// The reply's tag after its id: an error's message.
const ERROR: u8 = 1;

/// What the answer thread takes: a call's query to hold until its answer, then the answer
/// the broker wrote ([`PeersConnection`]). A query is handed over before its call is made,
/// so it is always there when its answer comes.
pub(crate) enum Answering {
    Asked { id: u64, query: Query },
    Answered(Bytes),
}

/// The broker's name for every Zenoh peer's calls.
pub(crate) fn peers() -> ClientId {
    ClientId::new(Bytes::from_static(&[CLIENT_ID_PREFIX]))
}

/// How the broker writes the peers' answers: to the answer thread, which replies to the
/// query waiting under the call's id.
pub(crate) struct PeersConnection {
    pub(crate) answers: mpsc::SyncSender<Answering>,
    pub(crate) counters: Arc<Counters>,
}

impl Connection for PeersConnection {
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes> {
        match message {
            Outbound::Reply { id, value } => Some(encode_value(id, &value)),
            Outbound::Error { id, message, .. } => Some(encode(id, ERROR, message.as_bytes())),
            _ => None,
        }
    }

    fn reply_encoder(&self, id: u64) -> Option<ReplyEncoder> {
        Some(Box::new(move |value| Some(encode_value(id, &value))))
    }

    fn shared_encoding(&self) -> Option<&'static str> {
        None
    }

    /// Never waits: the answer thread's queue has a place for each call under way; an answer
    /// that finds it full (its query timed out meanwhile) is dropped and counted.
    fn write(&self, payload: Bytes) -> Write {
        if self.answers.try_send(Answering::Answered(payload)).is_err() {
            Counters::bump(&self.counters.answers_dropped);
        }
        Write::Done
    }

    /// Nothing to close: the next call opens the peers' client again.
    fn close(&self) {}

    /// The peers send no heartbeats; their client lasts as long as the adapter.
    fn dropped_when_silent(&self) -> bool {
        false
    }
}

fn encode_value(id: u64, value: &Value) -> Bytes {
    encode(id, VALUE, &serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec()))
}

fn encode(id: u64, tag: u8, body: &[u8]) -> Bytes {
    let mut bytes = BytesMut::with_capacity(9 + body.len());
    bytes.put_u64_le(id);
    bytes.put_u8(tag);
    bytes.extend_from_slice(body);
    bytes.freeze()
}

/// A call's id and its answer: the value's JSON, or the error's message.
pub(crate) type Written<'a> = (u64, Result<&'a [u8], &'a [u8]>);

/// A written answer: the call's id and its value (JSON) or error message; none when it is
/// not one this connection wrote.
pub(crate) fn decode(payload: &[u8]) -> Option<Written<'_>> {
    let id = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
    let tag = *payload.get(8)?;
    let body = &payload[9..];
    match tag {
        VALUE => Some((id, Ok(body))),
        ERROR => Some((id, Err(body))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_carry_their_call_id() {
        let (answers, _taken) = mpsc::sync_channel(1);
        let connection = PeersConnection { answers, counters: Arc::default() };
        let reply = connection.encode(Outbound::Reply { id: 7, value: Value::from(2) }).unwrap();
        assert_eq!(decode(&reply), Some((7, Ok(b"2".as_slice()))));
        let error = Outbound::Error {
            id: 9,
            kind: naobroker_framework::ErrorKind::Refused,
            message: "not yours".into(),
        };
        assert_eq!(decode(&connection.encode(error).unwrap()), Some((9, Err(b"not yours".as_slice()))));
        assert_eq!(connection.encode(Outbound::Heartbeat), None);
        assert_eq!(decode(b"short"), None);
    }
}
