//! One qi client as the broker writes to it: what it negotiated, the requests it has under
//! way in the broker (and the qi call each answers), its subscriber objects, the broker's
//! messages in qi's encoding, and writing to its socket without waiting.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::net::{Shutdown, SocketAddr};
use std::rc::Rc;

use bytes::Bytes;
use futures::FutureExt;
use naobroker_framework::wire::{Connection, Outbound, ReplyEncoder, Request, WeakPort, WirePort, Write};
use naobroker_framework::{CallError, CallResult, ClientId, Value};
use naobroker_qi::{
    dynamic_of, from_value, Address, Message, MessageType, Options, Type, HEADER_SIZE, OBJECT_UID_BYTES,
    SERVICE_DIRECTORY,
};
use tokio::net::TcpStream;

use crate::error::PayloadError;
use crate::methods::SUBSCRIBER_SIGNAL;
use crate::objects::Objects;
use crate::shared::Shared;

pub(crate) mod hosted;

use hosted::Hosted;

/// The capabilities both sides have (`authenticate`, A.2 of libqi's protocol).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Capabilities {
    /// Endpoints may be `qi:Name`.
    pub(crate) relative_uris: bool,
    /// Object references carry a 20-byte uid; without it the client is older than libqi 2.9.
    pub(crate) object_uid: bool,
}

/// A qi call: what its answer is sent with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub(crate) id: u32,
    pub(crate) address: Address,
}

/// What the broker's answer to one of this client's requests becomes.
pub(crate) enum Pending {
    /// The answer to a qi call: a `Reply` of this type, or an `Error`.
    Answer { call: Call, returns: Type },
    /// Nothing: a post, or the wire's own request.
    Silent,
    /// `serviceReady` of the service `name` this client hosts: answered once the broker
    /// registered the module.
    Ready { call: Call, name: String },
    /// A subscriber's `registerEvent` of the client's `link`: answered with the broker's own
    /// link id `answer` once the broker has subscribed.
    Link { call: Call, object: u32, link: u64, answer: u64 },
}

pub(crate) struct State {
    pub(crate) authenticated: bool,
    pub(crate) capabilities: Capabilities,
    next_message_id: u32,
    next_request: u64,
    pending: HashMap<u64, Pending>,
    /// qi call id → the broker request answering it, for `Cancel`.
    calls: HashMap<u32, u64>,
    pub(crate) objects: Objects,
    /// The services this client hosts.
    pub(crate) hosted: Hosted,
    /// Links to the ServiceDirectory's signals: the client's link id → signal uid.
    pub(crate) directory_links: HashMap<u64, u32>,
    /// The last link id this broker answered a `registerEvent` with.
    pub(crate) next_link: u64,
}

pub(crate) struct QiConnection {
    pub(crate) client: ClientId,
    /// This connection's number among the listener's, in its object uids.
    pub(crate) number: u64,
    stream: Rc<TcpStream>,
    /// The address the client connected to, in the endpoints of every ServiceInfo.
    pub(crate) local: Option<SocketAddr>,
    pub(crate) shared: Rc<Shared>,
    pub(crate) state: RefCell<State>,
    /// The broker closed it (a bound broken): what its reader still holds is not served.
    closed: Cell<bool>,
}

impl QiConnection {
    /// Whether the broker closed this connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.get()
    }

    pub(crate) fn new(client: ClientId, number: u64, stream: TcpStream, shared: Rc<Shared>) -> Self {
        let state = State {
            authenticated: false,
            capabilities: Capabilities::default(),
            next_message_id: 1,
            next_request: 1,
            pending: HashMap::new(),
            calls: HashMap::new(),
            objects: Objects::default(),
            hosted: Hosted::default(),
            directory_links: HashMap::new(),
            next_link: 1,
        };
        let local = stream.local_addr().ok();
        QiConnection {
            client,
            number,
            stream: Rc::new(stream),
            local,
            shared,
            state: RefCell::new(state),
            closed: Cell::new(false),
        }
    }

    pub(crate) fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// The codec's options for this client.
    pub(crate) fn options(&self) -> Options {
        Options { limits: self.shared.limits, object_uid: self.state.borrow().capabilities.object_uid }
    }

    /// A broker request id whose answer becomes `pending`; a call's is kept for `Cancel`.
    pub(crate) fn request(&self, pending: Pending) -> u64 {
        let mut state = self.state.borrow_mut();
        let id = state.next_request;
        state.next_request += 1;
        if let Pending::Answer { call, .. } = &pending {
            state.calls.insert(call.id, id);
        }
        state.pending.insert(id, pending);
        id
    }

    /// `Cancel` of qi call `id`: answered `Canceled` at once when it is still under way; the
    /// broker's answer, when it comes, is dropped.
    pub(crate) fn cancel(&self, broker: &WirePort, id: u32) {
        let call = {
            let mut state = self.state.borrow_mut();
            let Some(request) = state.calls.remove(&id) else { return };
            match state.pending.remove(&request) {
                Some(Pending::Answer { call, .. }) => call,
                _ => return,
            }
        };
        self.send_with_id(broker, call.id, MessageType::Canceled, call.address, Vec::new());
    }

    /// Send a message of the wire's own with a fresh id (an event, a capability map).
    pub(crate) fn send(&self, broker: &WirePort, kind: MessageType, address: Address, payload: Vec<u8>) {
        let id = self.next_message_id();
        self.send_with_id(broker, id, kind, address, payload);
    }

    /// Send the reply to call `message` (nothing for a post).
    pub(crate) fn reply(&self, broker: &WirePort, message: &Message, payload: Vec<u8>) {
        if message.kind == MessageType::Call {
            self.send_with_id(broker, message.id, MessageType::Reply, message.address, payload);
        }
    }

    pub(crate) fn send_with_id(
        &self,
        broker: &WirePort,
        id: u32,
        kind: MessageType,
        address: Address,
        payload: Vec<u8>,
    ) {
        match Message::new(id, kind, address, payload).encode() {
            Ok(bytes) => broker.write_to(&self.client, Bytes::from(bytes)),
            Err(error) => tracing::warn!(%error, %address, "qi: message not sent"),
        }
    }

    pub(crate) fn next_message_id(&self) -> u32 {
        let mut state = self.state.borrow_mut();
        let id = state.next_message_id;
        state.next_message_id = id.wrapping_add(1).max(1);
        id
    }

    /// The broker refuses call `message` with `error`, counted among its refusals.
    pub(crate) fn refuse(&self, broker: &WirePort, message: &Message, error: CallError) {
        let id = self.request(self.pending_for(message, Type::Void));
        broker.refuse(&self.client, id, error);
    }

    /// The broker refuses `message`, which could not be read, counted among its bad frames.
    pub(crate) fn bad(&self, broker: &WirePort, message: &Message, text: String) {
        let id = self.request(self.pending_for(message, Type::Void));
        broker.bad_message(&self.client, id, text);
    }

    /// What the answer to `message` becomes: a call's reply of type `returns`, or nothing.
    pub(crate) fn pending_for(&self, message: &Message, returns: Type) -> Pending {
        match message.kind {
            MessageType::Call => {
                Pending::Answer { call: Call { id: message.id, address: message.address }, returns }
            }
            _ => Pending::Silent,
        }
    }

    /// Whether this client has a link to the ServiceDirectory's signal `signal`.
    pub(crate) fn listens_to_directory(&self, signal: u32) -> bool {
        self.state.borrow().directory_links.values().any(|linked| *linked == signal)
    }

    /// The answer to request `id`, in qi's encoding.
    fn answer(&self, id: u64, result: CallResult) -> Option<Bytes> {
        let pending = {
            let mut state = self.state.borrow_mut();
            let pending = state.pending.remove(&id)?;
            if let Pending::Answer { call, .. } = &pending {
                state.calls.remove(&call.id);
            }
            pending
        };
        let (call, kind, payload) = match (pending, result) {
            (Pending::Silent, _) => return None,
            (Pending::Ready { call, name }, result) => {
                hosted::registered(self, &name, result.is_ok());
                match result {
                    Ok(_) => (call, MessageType::Reply, Vec::new()),
                    Err(error) => (call, MessageType::Error, error_payload(&error)),
                }
            }
            (Pending::Answer { call, returns }, Ok(value)) => {
                return reply_of(call, &value, &returns, &self.options());
            }
            (Pending::Link { call, answer, .. }, Ok(_)) => {
                (call, MessageType::Reply, answer.to_le_bytes().to_vec())
            }
            (Pending::Link { call, object, link, .. }, Err(error)) => {
                self.state.borrow_mut().objects.unlink(object, link);
                (call, MessageType::Error, error_payload(&error))
            }
            (Pending::Answer { call, .. }, Err(error)) => (call, MessageType::Error, error_payload(&error)),
        };
        Message::new(call.id, kind, call.address, payload).encode().ok().map(Bytes::from)
    }

    /// An event of the broker: one `Event` message per subscriber object of this client with
    /// a link to its `signal`, the value as a dynamic `m`.
    fn event(&self, name: &str, value: &Value) -> Option<Bytes> {
        let targets = self.state.borrow().objects.linked_to(name);
        if targets.is_empty() {
            return None;
        }
        let options = self.options();
        let encoded = dynamic_of(value, &options.limits)
            .map_err(PayloadError::from)
            .and_then(|qi| Ok(qi.to_bytes(&Type::Dynamic, &options)?));
        let payload = match encoded {
            Ok(payload) => payload,
            Err(error) => {
                tracing::debug!(event = name, %error, "qi: event value not sent");
                return None;
            }
        };
        let mut out = Vec::with_capacity(targets.len() * (HEADER_SIZE + payload.len()));
        for (service, object) in targets {
            let address = Address::new(service, object, SUBSCRIBER_SIGNAL);
            let message = Message::new(self.next_message_id(), MessageType::Event, address, payload.clone());
            message.encode_into(&mut out).ok()?;
        }
        Some(Bytes::from(out))
    }

    /// The 20-byte uid of object `object` of service `service` as this client sees it.
    pub(crate) fn object_uid(&self, service: u32, object: u32) -> [u8; OBJECT_UID_BYTES] {
        let mut uid = [0u8; OBJECT_UID_BYTES];
        uid[..8].copy_from_slice(&self.shared.identity.uid_seed);
        uid[8..12].copy_from_slice(&service.to_le_bytes());
        let owner = if object == naobroker_qi::OBJECT_MAIN { 0 } else { self.number };
        uid[12..16].copy_from_slice(&(owner as u32).to_le_bytes());
        uid[16..].copy_from_slice(&object.to_le_bytes());
        uid
    }

    /// Stop delivering `events` the broker streams to this client (objects gone).
    pub(crate) fn unsubscribe(&self, broker: &WirePort, events: HashSet<String>) {
        for event in events {
            let id = self.request(Pending::Silent);
            broker.request(self.client.clone(), Request::Unsubscribe { id, event });
        }
    }
}

/// The `Reply` to `call` carrying `value` as type `returns` (nothing for `v`, whatever the
/// value), or the `Error` saying why the value does not fit it.
fn reply_of(call: Call, value: &Value, returns: &Type, options: &Options) -> Option<Bytes> {
    let encoded = match returns {
        Type::Void => Ok(Vec::new()),
        _ => from_value(value, returns, &options.limits)
            .map_err(PayloadError::from)
            .and_then(|qi| qi.to_bytes(returns, options).map_err(PayloadError::from)),
    };
    let (kind, payload) = match encoded {
        Ok(payload) => (MessageType::Reply, payload),
        Err(error) => {
            let text = format!("the answer does not fit the method's return type {returns}: {error}");
            (MessageType::Error, naobroker_qi::error_payload(&text))
        }
    };
    Message::new(call.id, kind, call.address, payload).encode().ok().map(Bytes::from)
}

/// Whether `payload` starts with an event of the broker's: an `Event` (but the
/// ServiceDirectory's own `serviceAdded`/`serviceRemoved`) or a NAOqi callback to a service
/// of the client (a `Post`, which the wire sends for nothing else). Writing one acknowledges
/// one event of the window.
fn is_broker_event(payload: &[u8]) -> bool {
    if payload.len() < HEADER_SIZE {
        return false;
    }
    let service = u32::from_le_bytes([payload[16], payload[17], payload[18], payload[19]]);
    match MessageType::from_u8(payload[14]) {
        Some(MessageType::Event) => service != SERVICE_DIRECTORY,
        Some(MessageType::Post) => true,
        _ => false,
    }
}

/// A call's error as libqi carries it: one string, which its clients raise as is. libqi has no
/// field for the kind, so the text is the message alone, whose words already say the kind
/// ("no module named", "belongs to another client"), and is the same text the naobroker wire
/// carries beside its kind.
fn error_payload(error: &CallError) -> Vec<u8> {
    naobroker_qi::error_payload(&error.message)
}

/// Tell the broker one event was written: room in the client's event window again.
fn acknowledge(broker: &WeakPort, client: &ClientId) {
    if let Some(broker) = broker.upgrade() {
        broker.request(client.clone(), Request::Ack { count: 1 });
    }
}

impl Connection for QiConnection {
    fn encode(&self, message: Outbound<'_>) -> Option<Bytes> {
        match message {
            Outbound::Reply { id, value } => self.answer(id, Ok(value)),
            Outbound::Error { id, kind, message } => self.answer(id, Err(CallError::of(kind, message))),
            Outbound::Event { name, value, .. } => self.event(name, value),
            Outbound::Call { id, module, method, args, post } => {
                hosted::forward(self, id, module, method, args, post)
            }
            Outbound::Callback { module, method, event, value, message, .. } => {
                let args = vec![event.into(), value.clone(), message.clone()];
                hosted::callback(self, module, method, args)
            }
            // qi has no welcome nor heartbeat.
            Outbound::Welcome { .. } | Outbound::Heartbeat => None,
        }
    }

    /// A call's answer, encoded with the options and the return type of the call.
    fn reply_encoder(&self, id: u64) -> Option<ReplyEncoder> {
        let (call, returns) = {
            let mut state = self.state.borrow_mut();
            if !matches!(state.pending.get(&id), Some(Pending::Answer { .. })) {
                return None;
            }
            let Some(Pending::Answer { call, returns }) = state.pending.remove(&id) else { return None };
            state.calls.remove(&call.id);
            (call, returns)
        };
        let options = self.options();
        Some(Box::new(move |value| reply_of(call, &value, &returns, &options)))
    }

    fn shared_encoding(&self) -> Option<&'static str> {
        None
    }

    fn write(&self, payload: Bytes) -> Write {
        let event = is_broker_event(&payload);
        let mut written = 0;
        while written < payload.len() {
            match self.stream.try_write(&payload[written..]) {
                Ok(0) => return Write::Done,
                Ok(count) => written += count,
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                // The reader sees the connection end and closes it.
                Err(_) => return Write::Done,
            }
        }
        let broker = self.shared.broker.clone();
        if written == payload.len() {
            if event {
                acknowledge(&broker, &self.client);
            }
            return Write::Done;
        }
        let (stream, client) = (Rc::clone(&self.stream), self.client.clone());
        let rest = payload.slice(written..);
        Write::Waiting(
            async move {
                if write_all(&stream, &rest).await && event {
                    acknowledge(&broker, &client);
                }
            }
            .boxed_local(),
        )
    }

    fn close(&self) {
        self.closed.set(true);
        let _ = socket2::SockRef::from(&*self.stream).shutdown(Shutdown::Both);
    }

    /// libqi has no heartbeat: the TCP connection (with keepalive) tells when a client is gone.
    fn dropped_when_silent(&self) -> bool {
        false
    }
}

/// Write all of `bytes` as the socket takes them; false when the connection failed.
async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        if stream.writable().await.is_err() {
            return false;
        }
        match stream.try_write(bytes) {
            Ok(0) => return false,
            Ok(count) => bytes = &bytes[count..],
            Err(error) if error.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
    }
    true
}
