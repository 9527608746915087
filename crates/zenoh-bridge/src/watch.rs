//! The broker's modules as the adapter's thread sees them: kept by the broker's thread as
//! modules come and go, read when the set changed (each module has a liveliness token).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use naobroker_framework::wire::Wire;

use crate::module::Counters;

/// The module names, and whether they changed since the adapter's thread last looked.
#[derive(Debug, Default)]
pub(crate) struct ModuleSet {
    names: Mutex<BTreeSet<String>>,
    changed: AtomicBool,
}

impl ModuleSet {
    fn names(&self) -> MutexGuard<'_, BTreeSet<String>> {
        self.names.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn set(&self, module: &str, present: bool) {
        let mut names = self.names();
        if present {
            names.insert(module.to_owned());
        } else {
            names.remove(module);
        }
        self.changed.store(true, Ordering::Release);
    }

    /// The names, when they changed since the last call.
    pub(crate) fn take_change(&self) -> Option<BTreeSet<String>> {
        self.changed.swap(false, Ordering::Acquire).then(|| self.names().clone())
    }
}

/// Told by the broker as modules come and go; shows the adapter's counters in
/// `ServiceDirectory.stats`. Its calls come from the broker's thread: each takes a lock the
/// adapter's thread holds only to copy the names.
pub(crate) struct ModuleWatch {
    pub(crate) modules: Arc<ModuleSet>,
    pub(crate) counters: Arc<Counters>,
}

impl Wire for ModuleWatch {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters.named()
    }

    fn module_changed(&self, module: &str, present: bool) {
        self.modules.set(module, present);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_seen_once() {
        let set = ModuleSet::default();
        assert_eq!(set.take_change(), None);
        set.set("ALMotion", true);
        set.set("Echo", true);
        set.set("Echo", false);
        assert_eq!(set.take_change(), Some(BTreeSet::from(["ALMotion".to_owned()])));
        assert_eq!(set.take_change(), None);
    }
}
