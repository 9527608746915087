//! libqi's methods every object has (`registerEvent`, `metaObject`, `terminate`, ...), and
//! `ALMemory.subscriber(event)`, which makes a subscriber object for this client.
//!
//! A link to a subscriber's `signal` makes the broker stream the event to this connection
//! (`Request::Subscribe`, answered with the link once subscribed); the last link gone, or the
//! object released (`terminate`), stops the stream.

use std::collections::HashSet;
use std::rc::Rc;

use naobroker_framework::wire::Request;
use naobroker_framework::wire::WirePort;
use naobroker_framework::CallError;
use naobroker_qi::{Message, ObjectRef, Options, QiValue, SERVICE_DIRECTORY};

use crate::connection::{Pending, QiConnection};
use crate::methods::{Generic, ObjectTable, SERVICE_ADDED, SERVICE_REMOVED, SUBSCRIBER_SIGNAL};

/// The object a generic method was called on.
pub(crate) enum Target {
    /// A service's main object.
    Main(Rc<ObjectTable>),
    /// A subscriber object of this client.
    Subscriber { object: u32 },
}

fn u32_at(args: &[QiValue], index: usize) -> Option<u32> {
    match args.get(index) {
        Some(QiValue::UInt32(value)) => Some(*value),
        _ => None,
    }
}

fn u64_at(args: &[QiValue], index: usize) -> Option<u64> {
    match args.get(index) {
        Some(QiValue::UInt64(value)) => Some(*value),
        _ => None,
    }
}

pub(crate) fn call(
    broker: &WirePort,
    connection: &QiConnection,
    message: &Message,
    generic: Generic,
    target: &Target,
    args: &[QiValue],
) {
    let reply = |payload: Vec<u8>| connection.reply(broker, message, payload);
    match generic {
        Generic::RegisterEvent | Generic::RegisterEventWithSignature => {
            let (Some(signal), Some(link)) = (u32_at(args, 1), u64_at(args, 2)) else {
                return connection.bad(broker, message, "registerEvent: (service, signal, link)".to_owned());
            };
            register_event(broker, connection, message, target, signal, link);
        }
        Generic::UnregisterEvent => {
            let (Some(signal), Some(link)) = (u32_at(args, 1), u64_at(args, 2)) else {
                return connection.bad(
                    broker,
                    message,
                    "unregisterEvent: (service, signal, link)".to_owned(),
                );
            };
            let stopped = {
                let mut state = connection.state.borrow_mut();
                match target {
                    Target::Subscriber { object } if signal == SUBSCRIBER_SIGNAL => {
                        state.objects.unlink(*object, link)
                    }
                    _ => {
                        state.directory_links.remove(&link);
                        None
                    }
                }
            };
            connection.unsubscribe(broker, stopped.into_iter().collect());
            reply(Vec::new());
        }
        Generic::MetaObject => {
            let table = match target {
                Target::Main(table) => Rc::clone(table),
                Target::Subscriber { .. } => Rc::clone(&connection.shared.subscriber),
            };
            match table.meta.to_bytes() {
                Ok(payload) => reply(payload),
                Err(error) => {
                    connection.refuse(broker, message, CallError::new(format!("metaObject: {error}")))
                }
            }
        }
        Generic::Terminate => {
            let service = message.address.service;
            let object = u32_at(args, 0).unwrap_or_default();
            let stopped = connection.state.borrow_mut().objects.remove(service, object);
            connection.unsubscribe(broker, stopped.into_iter().collect::<HashSet<_>>());
            reply(Vec::new());
        }
        Generic::Property | Generic::SetProperty => {
            connection.refuse(broker, message, CallError::not_found("naobroker's objects have no properties"))
        }
        // No property, no statistics, no trace: empty list, false, empty map.
        Generic::Properties | Generic::Stats => reply(0u32.to_le_bytes().to_vec()),
        Generic::IsStatsEnabled | Generic::IsTraceEnabled => reply(vec![0]),
        Generic::EnableStats | Generic::ClearStats | Generic::EnableTrace => reply(Vec::new()),
    }
}

/// `registerEvent(service, signal, link)`: the link is known by the client's id `link` (its
/// `unregisterEvent` names it), and answered with this broker's own id, as libqi does.
fn register_event(
    broker: &WirePort,
    connection: &QiConnection,
    message: &Message,
    target: &Target,
    signal: u32,
    link: u64,
) {
    let limit = broker.limits().max_subscriptions;
    let answer = {
        let mut state = connection.state.borrow_mut();
        if state.objects.links() + state.directory_links.len() >= limit {
            drop(state);
            let text = format!("this client already holds max_subscriptions ({limit}) links to signals");
            return connection.refuse(broker, message, CallError::refused(text));
        }
        state.next_link += 1;
        state.next_link
    };
    let reply_link = || connection.reply(broker, message, answer.to_le_bytes().to_vec());
    match target {
        Target::Subscriber { object } if signal == SUBSCRIBER_SIGNAL => {
            let first = connection.state.borrow_mut().objects.link(*object, link);
            let Some(event) = first else { return reply_link() };
            let pending = match connection.pending_for(message, naobroker_qi::Type::Void) {
                Pending::Answer { call, .. } => Pending::Link { call, object: *object, link, answer },
                silent => silent,
            };
            let id = connection.request(pending);
            broker.request(connection.client.clone(), Request::Subscribe { id, event });
        }
        Target::Main(_)
            if message.address.service == SERVICE_DIRECTORY
                && [SERVICE_ADDED, SERVICE_REMOVED].contains(&signal) =>
        {
            connection.state.borrow_mut().directory_links.insert(link, signal);
            reply_link();
        }
        // traceObject: linked, never emitted.
        Target::Main(table) if table.has_signal(signal) => reply_link(),
        _ => connection.refuse(
            broker,
            message,
            CallError::not_found(format!("{}: no signal {signal} on this object", message.address)),
        ),
    }
}

/// `ALMemory.subscriber(event)`: a new object whose `signal` carries each value of `event`.
pub(crate) fn subscriber(broker: &WirePort, connection: &QiConnection, message: &Message, args: &[QiValue]) {
    let Some(event) = args.first().and_then(QiValue::as_str) else {
        return connection.bad(broker, message, "subscriber(event): the name is not UTF-8".to_owned());
    };
    let limits = broker.limits();
    if let Err(error) = limits.check_name("event", event) {
        return connection.refuse(broker, message, error);
    }
    if connection.state.borrow().objects.len() >= limits.max_subscriptions {
        let text =
            format!("this client already holds max_subscriptions ({}) subscribers", limits.max_subscriptions);
        return connection.refuse(broker, message, CallError::refused(text));
    }
    let service = message.address.service;
    let object = connection.state.borrow_mut().objects.create(service, event);
    let options: Options = connection.options();
    let reference = ObjectRef {
        meta_object: connection.shared.subscriber.meta.clone(),
        service,
        object,
        uid: options.object_uid.then(|| connection.object_uid(service, object)),
    };
    let mut payload = Vec::new();
    match reference.encode(&mut payload, &options) {
        Ok(()) => connection.reply(broker, message, payload),
        Err(error) => connection.refuse(broker, message, CallError::new(format!("subscriber: {error}"))),
    }
}
