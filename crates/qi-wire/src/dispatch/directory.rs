//! The ServiceDirectory's own methods (service 1): `service`, `services` and `machineId`
//! answered from the service table; registering a service goes to `hosted.rs`.

use naobroker_framework::wire::WirePort;
use naobroker_framework::CallError;
use naobroker_qi::{Message, QiValue, ServiceInfo, SERVICE_DIRECTORY};

use crate::connection::hosted;
use crate::connection::QiConnection;
use crate::methods::Directory;
use crate::services::DIRECTORY_NAME;

/// What libqi's ServiceDirectory answers for a service it does not know.
fn not_found(name: &str) -> CallError {
    CallError::not_found(format!("Cannot find service '{name}' in index"))
}

pub(crate) fn call(
    broker: &WirePort,
    connection: &QiConnection,
    message: &Message,
    method: Directory,
    args: &[QiValue],
) {
    match method {
        Directory::Service => {
            let Some(name) = args.first().and_then(QiValue::as_str) else {
                return connection.bad(broker, message, "service(name): the name is not UTF-8".to_owned());
            };
            let Some(id) = connection.shared.services.borrow().id(name) else {
                return connection.refuse(broker, message, not_found(name));
            };
            let mut payload = Vec::new();
            encode(connection, &info(connection, id, name), &mut payload);
            connection.reply(broker, message, payload);
        }
        Directory::Services => {
            let all = connection.shared.services.borrow().all();
            let mut payload = (all.len() as u32).to_le_bytes().to_vec();
            for (id, name) in all {
                encode(connection, &info(connection, id, &name), &mut payload);
            }
            connection.reply(broker, message, payload);
        }
        Directory::MachineId => {
            let id = &connection.shared.identity.machine_id;
            let mut payload = (id.len() as u32).to_le_bytes().to_vec();
            payload.extend_from_slice(id.as_bytes());
            connection.reply(broker, message, payload);
        }
        Directory::RegisterService => hosted::register(broker, connection, message, args),
        Directory::ServiceReady | Directory::UnregisterService => {
            let Some(&QiValue::UInt32(service)) = args.first() else {
                return connection.bad(broker, message, "a service id".to_owned());
            };
            match method {
                Directory::ServiceReady => hosted::ready(broker, connection, message, service),
                _ => hosted::unregister(broker, connection, message, service),
            }
        }
        // The broker keeps its own endpoints for every service.
        Directory::UpdateServiceInfo => connection.reply(broker, message, Vec::new()),
        Directory::SocketOfService => {
            let text = "_socketOfService is libqi's own, within one process";
            connection.refuse(broker, message, CallError::not_found(text))
        }
    }
}

/// Service `id` (`name`) as this client sees it: this broker's machine and process, the
/// address the client connected to, and the relative endpoints when it reads them (then it
/// reuses its socket to the directory).
fn info(connection: &QiConnection, id: u32, name: &str) -> ServiceInfo {
    let identity = &connection.shared.identity;
    let shared = connection.state.borrow().capabilities;
    let mut endpoints = Vec::new();
    if shared.relative_uris {
        endpoints.push(format!("qi:{DIRECTORY_NAME}"));
        if id != SERVICE_DIRECTORY {
            endpoints.push(format!("qi:{name}"));
        }
    }
    if let Some(local) = connection.local {
        endpoints.push(format!("tcp://{local}"));
    }
    let directory = id == SERVICE_DIRECTORY;
    ServiceInfo {
        name: name.to_owned(),
        service_id: id,
        machine_id: identity.machine_id.clone(),
        process_id: identity.process_id,
        endpoints,
        session_id: if directory { "0".to_owned() } else { identity.session_id.clone() },
        object_uid: if directory {
            Vec::new()
        } else {
            connection.object_uid(id, naobroker_qi::OBJECT_MAIN).to_vec()
        },
    }
}

/// The 7-field form, or the 6-field one for a client older than libqi 2.9.
fn encode(connection: &QiConnection, info: &ServiceInfo, out: &mut Vec<u8>) {
    let encoded = match connection.state.borrow().capabilities.object_uid {
        true => info.encode(out),
        false => info.encode_legacy(out),
    };
    if let Err(error) = encoded {
        tracing::warn!(%error, service = %info.name, "qi: ServiceInfo not encoded");
    }
}
