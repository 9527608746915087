//! Who may act for a module and write under its key prefix (`docs/security.md`): the
//! router's answers, and the broker's public face of them.

use naobroker_protocol::excerpt;

use super::router::{Location, Router};
use super::Broker;
use crate::error::CallError;
use crate::identity::Caller;

impl Router {
    /// Who owns module `name`: the broker for in-process modules, else its client.
    pub(super) fn owner_of(&self, name: &str) -> Option<Caller> {
        self.modules.get(name).map(|entry| match &entry.location {
            Location::Local(_) => Caller::Broker,
            Location::Remote(client) => Caller::Client(client.clone()),
        })
    }

    /// Whether `caller` may act for module `module` (see [`Broker::may_act_for`]).
    pub(super) fn may_act_for(&self, caller: &Caller, module: &str) -> Result<(), CallError> {
        match (caller, self.owner_of(module)) {
            (_, None) => Err(CallError::not_found(format!("no module named {}", excerpt(module)))),
            (Caller::Broker, Some(_)) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::refused(format!(
                "module {module} belongs to another client: only its own client may do this"
            ))),
        }
    }

    /// Whether `caller` may write or raise `key` (see [`Broker::check_key_owner`]).
    pub(super) fn check_key_owner(&self, caller: &Caller, key: &str) -> Result<(), CallError> {
        let reserved_by = self.reserved_keys.get(key).cloned();
        let Some(module) = reserved_by.or_else(|| key.split_once('/').map(|(prefix, _)| prefix.to_owned()))
        else {
            return Ok(());
        };
        match (caller, self.owner_of(&module)) {
            (Caller::Broker, _) | (_, None) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::refused(format!(
                "{} belongs to module {module}: only the client that registered {module} may write or \
                 raise it",
                excerpt(key)
            ))),
        }
    }
}

impl Broker {
    /// Whether `caller` may act for module `module`: unregister it, call its `exit`,
    /// subscribe or unsubscribe its callbacks. The broker's own code may act for any.
    pub fn may_act_for(&self, caller: &Caller, module: &str) -> Result<(), CallError> {
        self.router().borrow().may_act_for(caller, module)
    }

    /// Reserve keys or events that have no module prefix for `module`: NAOqi's standard
    /// names (`robotHasFallen`, `FrontTactilTouched`) that only that module may write or
    /// raise, so that no client can fake them.
    pub fn reserve_keys<K: Into<String>>(&self, module: &str, keys: impl IntoIterator<Item = K>) {
        let mut router = self.router().borrow_mut();
        for key in keys {
            router.reserved_keys.insert(key.into(), module.to_owned());
        }
    }

    /// Refuse a write or raise of `key` by `caller` when the key belongs to another
    /// client's (or the broker's) module: by its first path segment (`ALMotion/…` is
    /// ALMotion's, `Echo/…` Echo's) or because that module reserved it ([`Self::reserve_keys`]).
    pub fn check_key_owner(&self, caller: &Caller, key: &str) -> Result<(), CallError> {
        self.router().borrow().check_key_owner(caller, key)
    }
}
