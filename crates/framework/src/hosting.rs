//! A broker as a process runs it: the core with naobroker's ZeroMQ wire and the
//! `ServiceDirectory` module, and modules hosted in it as actors.

use std::time::Duration;

use naobroker_protocol::HEARTBEAT_TIMEOUT_MS;

use crate::actor::ModuleActor;
use crate::broker::{Broker, Limits};
use crate::directory::ServiceDirectory;
use crate::error::{ListenError, RegistrationError, StartError};
use crate::module::{Module, ModuleContext};
use crate::session::Session;
use crate::wire::zmq::{self, CurveListeners};

/// Broker settings (the `[broker]` table of `broker.toml`).
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// ZeroMQ endpoints to bind: `tcp://127.0.0.1:9559`, `ipc:///tmp/naobroker.sock`,
    /// `ipc://@name` (Linux's abstract socket).
    pub listen: Vec<String>,
    /// Silence after which a client is dropped with its modules and subscriptions.
    pub client_timeout: Duration,
    pub limits: Limits,
    /// Listeners that admit only CURVE-authenticated clients (any address).
    pub curve: Option<CurveListeners>,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            listen: vec!["tcp://127.0.0.1:9559".into()],
            client_timeout: Duration::from_millis(HEARTBEAT_TIMEOUT_MS),
            limits: Limits::default(),
            curve: None,
        }
    }
}

impl Broker {
    /// Bind the endpoints and start serving. Must run inside an actix system.
    pub async fn start(config: BrokerConfig) -> Result<Broker, ListenError> {
        let broker = Broker::new(config.limits, config.client_timeout);
        zmq::listen(&broker.port(), &config.listen, config.curve.as_ref()).await?;
        Ok(broker)
    }

    /// Start a broker with its `ServiceDirectory` module.
    pub async fn start_with_directory(config: BrokerConfig) -> Result<Broker, StartError> {
        let broker = Broker::start(config).await?;
        broker.add_module(ServiceDirectory { broker: broker.clone() })?;
        Ok(broker)
    }

    /// Host a module in the broker process, as an actor on this arbiter. A module that is
    /// a blackboard ([`Module::blackboard`]) becomes the one in-process writes go to.
    pub fn add_module<M: Module>(&self, module: M) -> Result<(), RegistrationError> {
        let name = module.name();
        if self.module_exists(&name) {
            return Err(RegistrationError::ModuleNameTaken(name));
        }
        let blackboard = module.blackboard();
        let context = ModuleContext::new(Session::Broker(self.clone()), &name);
        self.add_local_module(name, ModuleActor::start(module, context, None))?;
        match blackboard {
            Some(blackboard) => self.set_blackboard(blackboard),
            None => Ok(()),
        }
    }
}
