//! Who may act for a module and write under its key prefix (`docs/security.md`).

use super::*;

impl Broker {
    /// Who owns module `name`: the broker for in-process modules, else its client.
    pub(super) fn owner_of(&self, name: &str) -> Option<Caller> {
        self.inner.state.borrow().modules.get(name).map(|entry| match &entry.location {
            Location::Local(_) => Caller::Broker,
            Location::Remote(peer) => Caller::Client(ClientId(peer.clone())),
        })
    }

    /// Whether `caller` may act for module `module`: unregister it, call its `exit`,
    /// subscribe or unsubscribe its callbacks. The broker's own code may act for any.
    pub fn may_act_for(&self, caller: &Caller, module: &str) -> Result<(), CallError> {
        match (caller, self.owner_of(module)) {
            (_, None) => Err(CallError::new(format!("no module named {}", excerpt(module)))),
            (Caller::Broker, Some(_)) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::new(format!(
                "module {module} belongs to another client: only its own client may do this"
            ))),
        }
    }

    /// Refuse a write or raise of `key` by `caller` when the key's first path segment is
    /// another client's (or the broker's) module: `ALMotion/…` is ALMotion's, `Echo/…` Echo's.
    pub fn check_key_owner(&self, caller: &Caller, key: &str) -> Result<(), CallError> {
        let Some((prefix, _)) = key.split_once('/') else { return Ok(()) };
        match (caller, self.owner_of(prefix)) {
            (Caller::Broker, _) | (_, None) => Ok(()),
            (caller, Some(owner)) if owner == *caller => Ok(()),
            (_, Some(_)) => Err(CallError::new(format!(
                "{} belongs to module {prefix}: only the client that registered {prefix} may write or raise it",
                excerpt(key)
            ))),
        }
    }
}
