//! Service 0, the server: `authenticate` and the capability maps, as libqi's server does
//! when it enforces no authentication. The first message of a connection admits it: when it
//! is `authenticate` it is answered with the broker's capabilities and `Done`, otherwise the
//! capabilities go first as a `Capability` message (what older clients expect).

use naobroker_framework::wire::WirePort;
use naobroker_framework::CallError;
use naobroker_qi::{
    Address, AuthState, CapabilityMap, Message, MessageType, ACTION_AUTHENTICATE, OBJECT_NONE, SERVICE_SERVER,
};

use crate::connection::{Capabilities, QiConnection};

/// The broker's capabilities. It calls the services its clients host over their own
/// connection (`ClientServerSocket`), never caches MetaObjects, and reads calls whose
/// arguments come as one dynamic value.
fn capabilities() -> CapabilityMap {
    let mut map = CapabilityMap::default();
    map.set_bool(CapabilityMap::CLIENT_SERVER_SOCKET, true);
    map.set_bool(CapabilityMap::MESSAGE_FLAGS, true);
    map.set_bool(CapabilityMap::META_OBJECT_CACHE, false);
    map.set_bool(CapabilityMap::OBJECT_PTR_UID, true);
    map.set_bool(CapabilityMap::RELATIVE_ENDPOINT_URI, true);
    map.set_bool(CapabilityMap::REMOTE_CANCELABLE_CALLS, true);
    map
}

/// Admit the connection on its first message; answers whether `message` was for the server
/// (and so handled here).
pub(crate) fn admit(broker: &WirePort, connection: &QiConnection, message: &Message) -> bool {
    let first = !std::mem::replace(&mut connection.state.borrow_mut().authenticated, true);
    let for_server = message.address.service == SERVICE_SERVER
        && matches!(message.kind, MessageType::Call | MessageType::Post);
    if for_server {
        authenticate(broker, connection, message);
    } else if first {
        let payload = match capabilities().to_bytes(&connection.options()) {
            Ok(payload) => payload,
            Err(error) => return refuse_encoding(error),
        };
        let address = Address::new(SERVICE_SERVER, OBJECT_NONE, 0);
        connection.send(broker, MessageType::Capability, address, payload);
    }
    for_server
}

fn refuse_encoding(error: impl std::fmt::Display) -> bool {
    tracing::warn!(%error, "qi: capabilities not encoded");
    false
}

/// `authenticate(capabilities)`: answered `Done` with the broker's capabilities, whatever
/// credentials came (a qi listener is loopback only: `docs/qi.md`).
fn authenticate(broker: &WirePort, connection: &QiConnection, message: &Message) {
    if message.address.action != ACTION_AUTHENTICATE {
        let text =
            format!("service 0 answers only authenticate (action 8), not action {}", message.address.action);
        return connection.refuse(broker, message, CallError::not_found(text));
    }
    let remote = match CapabilityMap::decode(&message.payload, &connection.options()) {
        Ok(remote) => remote,
        Err(error) => return connection.bad(broker, message, format!("authenticate: {error}")),
    };
    share(connection, &remote);
    let mut answer = capabilities();
    answer.set_auth_state(AuthState::Done);
    match answer.to_bytes(&connection.options()) {
        Ok(payload) => connection.reply(broker, message, payload),
        Err(error) => tracing::warn!(%error, "qi: authenticate answer not encoded"),
    }
}

/// A `Capability` message: the client's capabilities, sent without being asked.
pub(crate) fn capability_message(broker: &WirePort, connection: &QiConnection, message: &Message) {
    match CapabilityMap::decode(&message.payload, &connection.options()) {
        Ok(remote) => share(connection, &remote),
        Err(error) => connection.bad(broker, message, format!("capabilities: {error}")),
    }
}

fn share(connection: &QiConnection, remote: &CapabilityMap) {
    let ours = capabilities();
    connection.state.borrow_mut().capabilities = Capabilities {
        relative_uris: ours.shared(remote, CapabilityMap::RELATIVE_ENDPOINT_URI),
        object_uid: ours.shared(remote, CapabilityMap::OBJECT_PTR_UID),
    };
}
