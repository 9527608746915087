//! The service table: one qi service id per module (the ServiceDirectory is 1, modules count
//! from 2 in the order the listener met them, an id never reused), and each service's object
//! table, made from the module's methods when a client first needs it.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use naobroker_framework::wire::WirePort;
use naobroker_framework::MEMORY_MODULE;
use naobroker_qi::SERVICE_DIRECTORY;

use crate::methods::ObjectTable;

/// The ServiceDirectory's name, as a service and as naobroker's module of the same name.
pub(crate) const DIRECTORY_NAME: &str = "ServiceDirectory";

/// The first id a module's service gets.
const FIRST_MODULE_SERVICE: u32 = 2;

pub(crate) struct Services {
    names: BTreeMap<u32, String>,
    ids: HashMap<String, u32>,
    /// Services a qi client registered and has not yet said ready: name → id.
    reserved: HashMap<String, u32>,
    tables: HashMap<u32, Rc<ObjectTable>>,
    /// The ServiceDirectory's object, for clients with and without `ObjectPtrUID` (the
    /// latter get the 6-field ServiceInfo of libqi before 2.9).
    directory: [Option<Rc<ObjectTable>>; 2],
    next_id: u32,
}

impl Default for Services {
    fn default() -> Self {
        Services {
            names: BTreeMap::new(),
            ids: HashMap::new(),
            reserved: HashMap::new(),
            tables: HashMap::new(),
            directory: [None, None],
            next_id: FIRST_MODULE_SERVICE,
        }
    }
}

impl Services {
    /// A module's service; `None` when it has one already, or is the ServiceDirectory (which
    /// is service 1 whatever happens).
    pub(crate) fn add(&mut self, module: &str) -> Option<u32> {
        if module == DIRECTORY_NAME || self.ids.contains_key(module) {
            return None;
        }
        let id = self.reserved.remove(module).unwrap_or_else(|| self.take_id());
        self.names.insert(id, module.to_owned());
        self.ids.insert(module.to_owned(), id);
        Some(id)
    }

    fn take_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// An id for the service a qi client registers as `module`, before it is ready (and a
    /// module); `None` when the name is taken.
    pub(crate) fn reserve(&mut self, module: &str) -> Option<u32> {
        if module == DIRECTORY_NAME || self.ids.contains_key(module) || self.reserved.contains_key(module) {
            return None;
        }
        let id = self.take_id();
        self.reserved.insert(module.to_owned(), id);
        Some(id)
    }

    /// Give up a reserved name whose service never became ready.
    pub(crate) fn unreserve(&mut self, module: &str) {
        self.reserved.remove(module);
    }

    /// Forget a module's service; answers its id.
    pub(crate) fn remove(&mut self, module: &str) -> Option<u32> {
        let id = self.ids.remove(module)?;
        self.names.remove(&id);
        self.tables.remove(&id);
        Some(id)
    }

    pub(crate) fn id(&self, module: &str) -> Option<u32> {
        if module == DIRECTORY_NAME {
            return Some(SERVICE_DIRECTORY);
        }
        self.ids.get(module).copied()
    }

    /// The module a service id stands for (the ServiceDirectory's for 1).
    pub(crate) fn name(&self, id: u32) -> Option<&str> {
        if id == SERVICE_DIRECTORY {
            return Some(DIRECTORY_NAME);
        }
        self.names.get(&id).map(String::as_str)
    }

    /// Every service, the ServiceDirectory first, then by id.
    pub(crate) fn all(&self) -> Vec<(u32, String)> {
        let modules = self.names.iter().map(|(id, name)| (*id, name.clone()));
        std::iter::once((SERVICE_DIRECTORY, DIRECTORY_NAME.to_owned())).chain(modules).collect()
    }

    /// The main object of service `id`, `legacy` for a client without `ObjectPtrUID`.
    pub(crate) fn table(&mut self, id: u32, legacy: bool, broker: &WirePort) -> Option<Rc<ObjectTable>> {
        if id == SERVICE_DIRECTORY {
            let slot = &mut self.directory[usize::from(legacy)];
            let methods = || broker.module_methods(DIRECTORY_NAME).unwrap_or_default();
            return Some(Rc::clone(
                slot.get_or_insert_with(|| Rc::new(ObjectTable::directory(&methods(), legacy))),
            ));
        }
        if let Some(table) = self.tables.get(&id) {
            return Some(Rc::clone(table));
        }
        let name = self.names.get(&id)?;
        let methods = broker.module_methods(name)?;
        let table = Rc::new(ObjectTable::module(&methods, name == MEMORY_MODULE));
        self.tables.insert(id, Rc::clone(&table));
        Some(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_from_two_and_are_never_reused() {
        let mut services = Services::default();
        assert_eq!(services.add("ALMemory"), Some(2));
        assert_eq!(services.add("ServiceDirectory"), None);
        assert_eq!(services.add("DCM"), Some(3));
        assert_eq!(services.add("DCM"), None);
        assert_eq!(services.remove("ALMemory"), Some(2));
        assert_eq!(services.add("ALMemory"), Some(4));
        assert_eq!(services.id("ServiceDirectory"), Some(1));
        assert_eq!(services.name(4), Some("ALMemory"));
        let all: Vec<u32> = services.all().into_iter().map(|(id, _)| id).collect();
        assert_eq!(all, [1, 3, 4]);
    }

    #[test]
    fn a_reserved_id_is_the_module_s_once_it_comes() {
        let mut services = Services::default();
        assert_eq!(services.reserve("QiAdder"), Some(2));
        assert_eq!(services.reserve("QiAdder"), None);
        assert_eq!(services.id("QiAdder"), None, "not listed before it is ready");
        assert_eq!(services.add("Other"), Some(3));
        assert_eq!(services.add("QiAdder"), Some(2));
        assert_eq!(services.reserve("QiAdder"), None);
        assert_eq!(services.reserve("Gone"), Some(4));
        services.unreserve("Gone");
        assert_eq!(services.add("Gone"), Some(5));
    }
}
