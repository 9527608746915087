//! What each message of a qi client asks: routed by type, then by its address to the object
//! and method it names, its arguments read with that method's parameter signature (or as
//! one dynamic value when the client says so), and a module's method called through the
//! broker as [`Request::Call`].

use std::rc::Rc;

use naobroker_framework::wire::Request;
use naobroker_framework::wire::WirePort;
use naobroker_framework::{CallError, Value};
use naobroker_qi::{
    from_value, to_value, Flags, Message, MessageType, QiValue, Reader, Type, OBJECT_MAIN, SERVICE_DIRECTORY,
};

use crate::connection::hosted;
use crate::connection::QiConnection;
use crate::error::PayloadError;
use crate::methods::{Action, Method, ObjectTable};
use crate::services::DIRECTORY_NAME;

mod directory;
mod generic;
mod server;

use generic::Target;

pub(crate) fn on_message(broker: &WirePort, connection: &QiConnection, message: Message) {
    if server::admit(broker, connection, &message) {
        return;
    }
    match message.kind {
        MessageType::Call | MessageType::Post => call(broker, connection, &message),
        MessageType::Capability => server::capability_message(broker, connection, &message),
        MessageType::Cancel => match <[u8; 4]>::try_from(message.payload.as_slice()) {
            Ok(id) => connection.cancel(broker, u32::from_le_bytes(id)),
            Err(_) => connection.bad(broker, &message, "Cancel carries the call's id (4 bytes)".to_owned()),
        },
        MessageType::Reply | MessageType::Error | MessageType::Canceled => {
            hosted::answer(broker, connection, &message)
        }
        kind => connection.bad(broker, &message, format!("a client sends no {kind:?} message")),
    }
}

/// The object `message` is addressed to: a service's main object or a subscriber.
fn target_of(
    broker: &WirePort,
    connection: &QiConnection,
    message: &Message,
) -> Option<(Rc<ObjectTable>, Target)> {
    let address = message.address;
    if address.object == OBJECT_MAIN {
        let legacy = !connection.state.borrow().capabilities.object_uid;
        let table = connection.shared.services.borrow_mut().table(address.service, legacy, broker)?;
        return Some((Rc::clone(&table), Target::Main(table)));
    }
    connection.state.borrow().objects.get(address.service, address.object)?;
    Some((Rc::clone(&connection.shared.subscriber), Target::Subscriber { object: address.object }))
}

fn call(broker: &WirePort, connection: &QiConnection, message: &Message) {
    let address = message.address;
    let Some((table, target)) = target_of(broker, connection, message) else {
        let text = format!("{address}: no object {}.{} here", address.service, address.object);
        return connection.refuse(broker, message, CallError::not_found(text));
    };
    let Some(method) = table.method(address.action) else {
        return connection.refuse(
            broker,
            message,
            CallError::not_found(format!("{address}: no method {} on this object", address.action)),
        );
    };
    if let Action::Module(name) = &method.action {
        return module_call(broker, connection, message, method, name);
    }
    let args = match arguments(connection, message, &method.params) {
        Ok(args) => args,
        Err(text) => return connection.bad(broker, message, format!("{}: {text}", method.name)),
    };
    match &method.action {
        Action::Generic(generic) => generic::call(broker, connection, message, *generic, &target, &args),
        Action::Directory(directory) => directory::call(broker, connection, message, *directory, &args),
        Action::Subscriber => generic::subscriber(broker, connection, message, &args),
        Action::Module(_) => unreachable!("module methods were called above"),
    }
}

/// The payload as `ty`, past a return signature when the client appended one.
fn decode(connection: &QiConnection, message: &Message, ty: &Type) -> Result<QiValue, PayloadError> {
    let options = connection.options();
    let mut reader = Reader::new(&message.payload);
    let value = QiValue::decode_from(ty, &mut reader, &options)?;
    if message.flags.contains(Flags::RETURN_TYPE) {
        reader.read_string("return signature")?;
    }
    reader.finish()?;
    Ok(value)
}

/// The arguments of a method of libqi's own, as its parameter signature types them.
fn arguments(
    connection: &QiConnection,
    message: &Message,
    params: &Type,
) -> Result<Vec<QiValue>, PayloadError> {
    let value = if message.flags.contains(Flags::DYNAMIC_PAYLOAD) {
        let dynamic = decode(connection, message, &Type::Dynamic)?;
        let value = to_value(&dynamic)?;
        from_value(&value, params, &connection.options().limits)?
    } else {
        decode(connection, message, params)?
    };
    Ok(match value {
        QiValue::Tuple(items) => items,
        other => vec![other],
    })
}

/// The arguments of a module's method, as naobroker values.
fn values(connection: &QiConnection, message: &Message, params: &Type) -> Result<Vec<Value>, PayloadError> {
    let dynamic = message.flags.contains(Flags::DYNAMIC_PAYLOAD);
    let value = decode(connection, message, if dynamic { &Type::Dynamic } else { params })?;
    match to_value(&value)? {
        Value::Array(items) => Ok(items),
        other if dynamic => Ok(vec![other]),
        other => Err(PayloadError::NotATuple(other)),
    }
}

/// A module's method through the broker: its limits, permissions and routing, the answer
/// encoded with the method's return type.
fn module_call(broker: &WirePort, connection: &QiConnection, message: &Message, method: &Method, name: &str) {
    let args = match values(connection, message, &method.params) {
        Ok(args) => args,
        Err(text) => return connection.bad(broker, message, format!("{name}: {text}")),
    };
    let module = match message.address.service {
        SERVICE_DIRECTORY => Some(DIRECTORY_NAME.to_owned()),
        service => connection.shared.services.borrow().name(service).map(str::to_owned),
    };
    let Some(module) = module else {
        let text = format!("{}: the service is gone", message.address);
        return connection.refuse(broker, message, CallError::not_found(text));
    };
    let id = connection.request(connection.pending_for(message, method.returns.clone()));
    let request = Request::Call { id, module: &module, method: name, args, post: false };
    broker.request(connection.client.clone(), request);
}
