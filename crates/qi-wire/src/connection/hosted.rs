//! Services a qi client hosts (`session.registerService(name, object)`): each becomes a
//! module of the broker, served from this connection, that every client of either wire calls.
//!
//! `registerService` reserves the service id; `serviceReady` (the client has bound its object)
//! fetches the object's MetaObject over the same socket (libqi's `ClientServerSocket`), and
//! registers its methods (uids from 100) with the broker as `Request::Register`, answering
//! `serviceReady` once the broker took it. The broker's calls to the module become qi calls to
//! the method of that name and arity; the client's answers go back as `Request::Answer`.

use std::collections::HashMap;

use bytes::Bytes;
use naobroker_framework::wire::Request;
use naobroker_framework::wire::WirePort;
use naobroker_framework::{CallError, Value};
use naobroker_protocol::MethodInfo;
use naobroker_qi::{
    decode_value, error_message, from_value, Address, Message, MessageType, MetaObject, QiValue, Type,
    OBJECT_MAIN,
};

use crate::connection::{Call, Pending, QiConnection};
use crate::error::{AnswerError, HostedCallError, PayloadError};
use crate::signatures::qi_signature;

/// The uid of a qi object's first method of its own.
const FIRST_USER_METHOD: u32 = 100;

/// The uid of `metaObject`, which every qi object answers.
const META_OBJECT: u32 = 2;

struct HostedMethod {
    uid: u32,
    name: String,
    params: Type,
    returns: Type,
}

struct HostedService {
    service: u32,
    ready: bool,
    methods: Vec<HostedMethod>,
}

/// What an answer of the client to one of the wire's calls is for.
enum Outgoing {
    /// A call of the broker to the hosted module, its request id.
    Forwarded { request: u64, returns: Type },
    /// The MetaObject of service `name`, fetched when the client said it ready (`ready`).
    MetaObject { name: String, ready: Call },
}

/// The services this client hosts and the wire's calls to it under way.
#[derive(Default)]
pub(crate) struct Hosted {
    services: HashMap<String, HostedService>,
    outgoing: HashMap<u32, Outgoing>,
}

impl Hosted {
    fn by_service(&self, service: u32) -> Option<(&String, &HostedService)> {
        self.services.iter().find(|(_, hosted)| hosted.service == service)
    }
}

/// `registerService(info)`: an id for the service, listed once it is ready.
pub(crate) fn register(broker: &WirePort, connection: &QiConnection, message: &Message, args: &[QiValue]) {
    let name = match args.first() {
        Some(QiValue::Tuple(fields)) => fields.first().and_then(QiValue::as_str),
        _ => None,
    };
    let Some(name) = name else {
        return connection.bad(
            broker,
            message,
            "registerService: a ServiceInfo with a UTF-8 name".to_owned(),
        );
    };
    let limits = broker.limits();
    if let Err(error) = limits.check_name("module", name) {
        return connection.refuse(broker, message, error);
    }
    if connection.state.borrow().hosted.services.len() >= limits.max_modules {
        let text = format!("this client already registered max_modules ({}) modules", limits.max_modules);
        return connection.refuse(broker, message, CallError::refused(text));
    }
    let Some(service) = connection.shared.services.borrow_mut().reserve(name) else {
        let text = format!("a module named {name} is already registered");
        return connection.refuse(broker, message, CallError::refused(text));
    };
    let hosted = HostedService { service, ready: false, methods: Vec::new() };
    connection.state.borrow_mut().hosted.services.insert(name.to_owned(), hosted);
    connection.reply(broker, message, service.to_le_bytes().to_vec());
}

/// `serviceReady(id)`: the client's object is bound; its MetaObject is asked for, and the
/// answer to `serviceReady` waits for the broker to take the module.
pub(crate) fn ready(broker: &WirePort, connection: &QiConnection, message: &Message, service: u32) {
    let name = connection.state.borrow().hosted.by_service(service).map(|(name, _)| name.clone());
    let Some(name) = name else {
        return connection.refuse(
            broker,
            message,
            CallError::not_found(format!("service {service} is not registered by this client")),
        );
    };
    let ready = Call { id: message.id, address: message.address };
    let id = connection.next_message_id();
    connection.state.borrow_mut().hosted.outgoing.insert(id, Outgoing::MetaObject { name, ready });
    let address = Address::new(service, OBJECT_MAIN, META_OBJECT);
    connection.send_with_id(broker, id, MessageType::Call, address, 0u32.to_le_bytes().to_vec());
}

/// `unregisterService(id)`: the module goes, for every client.
pub(crate) fn unregister(broker: &WirePort, connection: &QiConnection, message: &Message, service: u32) {
    let removed = {
        let mut state = connection.state.borrow_mut();
        let name = state.hosted.by_service(service).map(|(name, _)| name.clone());
        name.and_then(|name| state.hosted.services.remove(&name).map(|hosted| (name, hosted)))
    };
    let Some((module, hosted)) = removed else {
        return connection.refuse(
            broker,
            message,
            CallError::not_found(format!("service {service} is not registered by this client")),
        );
    };
    if !hosted.ready {
        connection.shared.services.borrow_mut().unreserve(&module);
        return connection.reply(broker, message, Vec::new());
    }
    let id = connection.request(connection.pending_for(message, Type::Void));
    broker.request(connection.client.clone(), Request::Unregister { id, module });
}

/// The broker took (`registered`) or refused the module `name`.
pub(crate) fn registered(connection: &QiConnection, name: &str, registered: bool) {
    let mut state = connection.state.borrow_mut();
    if registered {
        if let Some(hosted) = state.hosted.services.get_mut(name) {
            hosted.ready = true;
        }
    } else {
        state.hosted.services.remove(name);
        connection.shared.services.borrow_mut().unreserve(name);
    }
}

/// The connection ends: names reserved and never ready are free again (the broker forgets
/// the modules that were).
pub(crate) fn release(connection: &QiConnection) {
    let state = connection.state.borrow();
    let mut services = connection.shared.services.borrow_mut();
    for (name, _) in state.hosted.services.iter().filter(|(_, hosted)| !hosted.ready) {
        services.unreserve(name);
    }
}

/// A `Reply`, `Error` or `Canceled` of the client to one of the wire's calls.
pub(crate) fn answer(broker: &WirePort, connection: &QiConnection, message: &Message) {
    let outgoing = connection.state.borrow_mut().hosted.outgoing.remove(&message.id);
    let result = match message.kind {
        MessageType::Error => {
            Err(error_message(&message.payload).map_or_else(AnswerError::from, AnswerError::Failed))
        }
        MessageType::Canceled => Err(AnswerError::Canceled),
        _ => Ok(()),
    };
    match outgoing {
        Some(Outgoing::Forwarded { request, returns }) => {
            let result =
                result.and_then(|()| Ok(decode_value(&returns, &message.payload, &connection.options())?));
            let answer = Request::Answer { id: request, result: result.map_err(CallError::from) };
            broker.request(connection.client.clone(), answer);
        }
        Some(Outgoing::MetaObject { name, ready }) => {
            let meta = result.and_then(|()| Ok(MetaObject::decode(&message.payload)?));
            match meta {
                Ok(meta) => register_module(broker, connection, name, ready, &meta),
                Err(error) => {
                    registered(connection, &name, false);
                    let text = format!("registerService {name}: its MetaObject: {error}");
                    connection.send_with_id(
                        broker,
                        ready.id,
                        MessageType::Error,
                        ready.address,
                        error_text(&text),
                    );
                }
            }
        }
        None => connection.bad(
            broker,
            message,
            format!("no call {} of the broker waits for an answer", message.id),
        ),
    }
}

fn error_text(text: &str) -> Vec<u8> {
    naobroker_qi::error_payload(text)
}

/// The module `name` with the methods of `meta`, given to the broker.
fn register_module(
    broker: &WirePort,
    connection: &QiConnection,
    name: String,
    ready: Call,
    meta: &MetaObject,
) {
    let mut methods = Vec::new();
    let mut infos = Vec::new();
    for method in meta.methods.values().filter(|method| method.uid >= FIRST_USER_METHOD) {
        let (Ok(params), Ok(returns)) =
            (Type::parse(&method.parameters_signature), Type::parse(&method.return_signature))
        else {
            continue;
        };
        let signature = qi_signature(&method.parameters_signature, &method.return_signature);
        // Its own libqi signatures, in the text: a qi service has no Rust types.
        let help = method.description.clone();
        infos.push(MethodInfo { name: method.name.clone(), signature, help, types: None });
        methods.push(HostedMethod { uid: method.uid, name: method.name.clone(), params, returns });
    }
    if let Some(hosted) = connection.state.borrow_mut().hosted.services.get_mut(&name) {
        hosted.methods = methods;
    }
    let id = connection.request(Pending::Ready { call: ready, name: name.clone() });
    broker.request(connection.client.clone(), Request::Register { id, module: name, methods: infos });
}

/// The broker's call `request` of `module.method(args)`, as a qi call to the hosted object;
/// `None`, the broker answered at once, when it cannot be made.
pub(crate) fn forward(
    connection: &QiConnection,
    request: u64,
    module: &str,
    method: &str,
    args: Vec<Value>,
    post: bool,
) -> Option<Bytes> {
    let encoded = encode_call(connection, module, method, args, post);
    let (address, payload, returns) = match encoded {
        Ok(encoded) => encoded,
        Err(error) => {
            answer_later(connection, request, CallError::from(error).in_method(module, method));
            return None;
        }
    };
    let id = connection.next_message_id();
    connection.state.borrow_mut().hosted.outgoing.insert(id, Outgoing::Forwarded { request, returns });
    Message::new(id, MessageType::Call, address, payload).encode().ok().map(Bytes::from)
}

/// A NAOqi callback `module.method(event, value, message)` as a qi post (no answer).
pub(crate) fn callback(
    connection: &QiConnection,
    module: &str,
    method: &str,
    args: Vec<Value>,
) -> Option<Bytes> {
    let (address, payload, _) = encode_call(connection, module, method, args, false).ok()?;
    let id = connection.next_message_id();
    Message::new(id, MessageType::Post, address, payload).encode().ok().map(Bytes::from)
}

/// The address, payload and return type of a call to the hosted `module.method(args)`: the
/// overload of that name taking as many arguments, or else the first of that name.
fn encode_call(
    connection: &QiConnection,
    module: &str,
    method: &str,
    args: Vec<Value>,
    post: bool,
) -> Result<(Address, Vec<u8>, Type), HostedCallError> {
    if post {
        return Err(HostedCallError::Post);
    }
    let state = connection.state.borrow();
    let hosted = state.hosted.services.get(module).ok_or(HostedCallError::NotServed)?;
    let arity = |m: &&HostedMethod| matches!(&m.params, Type::Tuple(t) if t.members.len() == args.len());
    let named = || hosted.methods.iter().filter(|m| m.name == method);
    let chosen = named().find(arity).or_else(|| named().next()).ok_or(HostedCallError::NoSuchMethod)?;
    let options = connection.options();
    let arguments =
        from_value(&Value::Array(args), &chosen.params, &options.limits).map_err(PayloadError::from)?;
    let payload = arguments.to_bytes(&chosen.params, &options).map_err(PayloadError::from)?;
    Ok((Address::new(hosted.service, OBJECT_MAIN, chosen.uid), payload, chosen.returns.clone()))
}

/// Answer the broker's call `request` with `error`, once the current write is over.
fn answer_later(connection: &QiConnection, request: u64, error: CallError) {
    let (broker, client) = (connection.shared.broker.clone(), connection.client.clone());
    actix_rt::spawn(async move {
        if let Some(broker) = broker.upgrade() {
            broker.request(client, Request::Answer { id: request, result: Err(error) });
        }
    });
}
