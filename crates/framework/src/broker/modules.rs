//! Modules coming and going: in-process actors and modules served by clients, the client
//! side's count of each client's modules, and what goes when a module or a client does.

use naobroker_protocol::{excerpt, MethodInfo};

use super::clients::ClientState;
use super::router::{Location, ModuleEntry};
use super::Broker;
use crate::error::{CallError, RegistrationError};
use crate::identity::ClientId;
use crate::invoke::ModuleHandle;

impl Broker {
    pub fn module_exists(&self, name: &str) -> bool {
        self.router().borrow().modules.contains_key(name)
    }

    pub fn module_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.router().borrow().modules.keys().cloned().collect();
        names.sort();
        names
    }

    pub fn module_methods(&self, name: &str) -> Option<Vec<MethodInfo>> {
        self.router().borrow().modules.get(name).map(|entry| entry.methods.clone())
    }

    /// Route calls to `name` to an actor of this process.
    pub(crate) fn add_local_module(
        &self,
        name: String,
        module: ModuleHandle,
    ) -> Result<(), RegistrationError> {
        let mut router = self.router().borrow_mut();
        if router.modules.contains_key(&name) {
            return Err(RegistrationError::ModuleNameTaken(name));
        }
        let methods = module.method_infos().to_vec();
        router.modules.insert(name.clone(), ModuleEntry { location: Location::Local(module), methods });
        drop(router);
        tracing::debug!(module = %name, "in-process module registered");
        self.announce(&name, true);
        Ok(())
    }

    /// Tell every wire that `module` came (`present`) or went.
    fn announce(&self, module: &str, present: bool) {
        let wires = self.router().borrow().wires.clone();
        for wire in wires {
            wire.module_changed(module, present);
        }
    }

    /// `client` serves `module`: the router checks the name is free (or already its), the
    /// client side counts it against `max_modules`, then the router routes to it.
    pub(super) fn register_remote(
        &self,
        client: &ClientId,
        module: &str,
        methods: Vec<MethodInfo>,
    ) -> Result<(), CallError> {
        let limits = self.limits();
        limits.check_name("module", module)?;
        for method in &methods {
            limits.check_name("method", &method.name)?;
        }
        match self.router().borrow().modules.get(module) {
            Some(ModuleEntry { location: Location::Remote(owner), .. }) if owner == client => {}
            Some(_) => {
                tracing::info!(module, %client, "registration refused: the name is taken");
                return Err(CallError::refused(format!("a module named {module} is already registered")));
            }
            None => {}
        }
        if module.is_empty() || module.contains(['.', '/']) {
            return Err(CallError::bad_argument(format!(
                "invalid module name {module:?}: non-empty, without '.' or '/'"
            )));
        }
        let new = self.clients().add_module(client, module)?;
        let location = Location::Remote(client.clone());
        self.router().borrow_mut().modules.insert(module.to_owned(), ModuleEntry { location, methods });
        tracing::info!(module, %client, "remote module registered");
        if new {
            self.announce(module, true);
        }
        Ok(())
    }

    /// Stop serving `module` for `client`, which must have registered it.
    pub(super) fn unregister_remote(&self, client: &ClientId, module: &str) -> Result<(), CallError> {
        if !self.clients().remove_module(client, module) {
            tracing::debug!(module = %excerpt(module), %client, "unregistration refused: not its module");
            let message = format!("module {} is not registered by this client", excerpt(module));
            return Err(CallError::refused(message));
        }
        tracing::debug!(module, %client, "client unregisters its module");
        self.remove_module(module);
        Ok(())
    }

    /// Forget `module` with its callbacks; calls under way to it fail.
    pub(super) fn remove_module(&self, module: &str) {
        let Some(failed) = self.router().borrow_mut().remove_module(module) else { return };
        tracing::info!(module, "module unregistered");
        self.announce(module, false);
        for call in failed {
            let message = format!("{module}.{}: module {module} disconnected", call.method);
            self.deliver(call.origin, Err(CallError::new(message)));
        }
    }

    /// The client side forgot `client` (`gone`, its last state): the router forgets its
    /// event streams, the calls it waited for, then its modules.
    pub(super) fn client_left(&self, client: &ClientId, gone: &ClientState) {
        self.router().borrow_mut().client_left(client, &gone.events);
        for module in &gone.modules {
            self.remove_module(module);
        }
    }
}
