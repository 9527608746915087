//! libqi's wire (NAOqi 2.x "qimessaging", `docs/qi.md`) as a second adapter on naobroker's
//! broker core: unmodified `qi` clients (`qi.Session().connect("tcp://127.0.0.1:9560")`)
//! find every module as a service, call its methods and receive ALMemory's events, under the
//! same routing, limits and permissions as clients of naobroker's own wire.
//!
//! Parts, each using only those before it: [`signatures`] (a module's readable signatures
//! in libqi's letters), [`methods`] (each object's methods and MetaObject), [`services`] (one
//! service id per module), [`objects`] (a client's subscriber objects), [`shared`] (what
//! every connection shares: the broker, the service table, identity, bounds, counters),
//! [`connection`] (one client: its requests under way, the broker's answers and events in
//! qi's encoding, writing; with `hosted`, the services a client registers, which become
//! modules of the broker), [`dispatch`] (what a message asks; with `server`, authenticate on
//! service 0, `directory`, the ServiceDirectory, and `generic`, libqi's methods of every
//! object and ALMemory's subscriber objects), [`reader`] (messages cut out of a connection
//! within the limits), [`listener`] (accepting, the open connections, the wire's counters
//! and service announcements) and [`endpoints`] (which addresses may be bound: loopback only).
#![deny(unsafe_code, unreachable_pub)]

mod connection;
mod dispatch;
mod endpoints;
mod error;
mod listener;
mod methods;
mod objects;
mod reader;
mod services;
mod shared;
mod signatures;

use std::net::SocketAddr;

use naobroker_framework::wire::WirePort;
use serde::Deserialize;

pub use error::QiListenError;

/// `[qi]` of broker.toml: where qi clients connect. Off (no endpoint) unless configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QiConfig {
    /// `tcp://HOST:PORT` endpoints on loopback (`tcp://127.0.0.1:9560`).
    pub listen: Vec<String>,
}

/// Listen for qi clients on `config`'s endpoints and serve them on `broker`; answers the
/// addresses bound (a port 0 is the one the system chose). Must run inside an actix system.
pub async fn listen(broker: &WirePort, config: &QiConfig) -> Result<Vec<SocketAddr>, QiListenError> {
    if config.listen.is_empty() {
        return Ok(Vec::new());
    }
    let sockets = endpoints::bind(&config.listen).await?;
    let addresses = sockets.iter().filter_map(|socket| socket.local_addr().ok()).collect();
    let shared = listener::Listener::new(broker);
    broker.attach_wire(shared.clone());
    for socket in sockets {
        actix_rt::spawn(listener::accept(shared.clone(), socket));
    }
    tracing::info!(endpoints = ?config.listen, "listening for qi clients");
    Ok(addresses)
}
