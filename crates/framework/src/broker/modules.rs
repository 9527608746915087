//! The module table: in-process actors and modules served by clients, their methods, and
//! what goes when a module does.

use naobroker_protocol::{excerpt, MethodInfo};

use super::router::{Location, ModuleEntry, PendingCall};
use super::Broker;
use crate::error::{CallError, RegistrationError};
use crate::identity::ClientId;
use crate::invoke::ModuleHandle;

impl Broker {
    pub fn module_exists(&self, name: &str) -> bool {
        self.inner.router.borrow().modules.contains_key(name)
    }

    pub fn module_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.inner.router.borrow().modules.keys().cloned().collect();
        names.sort();
        names
    }

    pub fn module_methods(&self, name: &str) -> Option<Vec<MethodInfo>> {
        self.inner.router.borrow().modules.get(name).map(|entry| entry.methods.clone())
    }

    /// Route calls to `name` to an actor of this process.
    pub(crate) fn add_local_module(
        &self,
        name: String,
        module: ModuleHandle,
    ) -> Result<(), RegistrationError> {
        let mut router = self.inner.router.borrow_mut();
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
        let wires = self.inner.router.borrow().wires.clone();
        for wire in wires {
            wire.module_changed(module, present);
        }
    }

    pub(super) fn register_remote(
        &self,
        client: &ClientId,
        module: &str,
        methods: Vec<MethodInfo>,
    ) -> Result<(), CallError> {
        let limits = &self.inner.limits;
        limits.check_name("module", module)?;
        for method in &methods {
            limits.check_name("method", &method.name)?;
        }
        let (mut router, mut clients) = (self.inner.router.borrow_mut(), self.inner.clients.borrow_mut());
        match router.modules.get(module) {
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
        let owner = clients.connected.get_mut(client).ok_or_else(|| CallError::refused("unknown client"))?;
        if !owner.modules.contains(module) && owner.modules.len() >= limits.max_modules {
            tracing::warn!(module, %client, max_modules = limits.max_modules, "registration refused");
            return Err(CallError::refused(format!(
                "this client already registered max_modules ({}) modules",
                limits.max_modules
            )));
        }
        let new = owner.modules.insert(module.to_owned());
        let location = Location::Remote(client.clone());
        router.modules.insert(module.to_owned(), ModuleEntry { location, methods });
        drop((router, clients));
        tracing::info!(module, %client, "remote module registered");
        if new {
            self.announce(module, true);
        }
        Ok(())
    }

    /// Stop serving `module` for `client`, which must have registered it.
    pub(super) fn unregister_remote(&self, client: &ClientId, module: &str) -> Result<(), CallError> {
        let owned = self
            .inner
            .clients
            .borrow_mut()
            .connected
            .get_mut(client)
            .is_some_and(|owner| owner.modules.remove(module));
        if !owned {
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
        let failed: Vec<PendingCall> = {
            let mut router = self.inner.router.borrow_mut();
            let Some(entry) = router.modules.remove(module) else { return };
            router.events.remove_module(module);
            match entry.location {
                Location::Remote(client) => {
                    let ids: Vec<u64> = router
                        .pending
                        .iter()
                        .filter(|(_, call)| call.target == client && call.module == module)
                        .map(|(id, _)| *id)
                        .collect();
                    ids.into_iter().filter_map(|id| router.pending.remove(&id)).collect()
                }
                Location::Local(_) => Vec::new(),
            }
        };
        tracing::info!(module, "module unregistered");
        self.inner.call_counts.forget(module);
        self.announce(module, false);
        for call in failed {
            let message = format!("{module}.{}: module {module} disconnected", call.method);
            self.deliver(call.origin, Err(CallError::new(message)));
        }
    }
}
