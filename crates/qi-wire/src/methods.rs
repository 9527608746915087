//! Object tables: what each object a qi client sees offers, by uid, and its MetaObject.
//!
//! Every object has libqi's own methods (uids 0–8 and 80–85, the `traceObject` signal 86,
//! as libqi 4 lists them); a module's main object adds the module's methods from uid 100, in
//! its order, one uid per overload (`signatures.rs`), and ALMemory's adds `subscriber`; the
//! ServiceDirectory has libqi's fixed uids 100–109 and naobroker's own directory methods
//! from 120; a subscriber object has the signal `signal`.

use std::collections::HashMap;

use naobroker_protocol::MethodInfo;
use naobroker_qi::{MetaMethod, MetaObject, MetaSignal, ServiceInfo, Type};

use crate::signatures::overloads;

/// libqi's methods of every object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generic {
    RegisterEvent,
    UnregisterEvent,
    MetaObject,
    Terminate,
    Property,
    SetProperty,
    Properties,
    RegisterEventWithSignature,
    IsStatsEnabled,
    EnableStats,
    Stats,
    ClearStats,
    IsTraceEnabled,
    EnableTrace,
}

/// The ServiceDirectory's own methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Directory {
    Service,
    Services,
    RegisterService,
    UnregisterService,
    ServiceReady,
    UpdateServiceInfo,
    MachineId,
    SocketOfService,
}

/// What calling a method does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    Generic(Generic),
    Directory(Directory),
    /// The module's method of this name, through the broker.
    Module(String),
    /// `ALMemory.subscriber(event)`: a new subscriber object.
    Subscriber,
}

pub(crate) struct Method {
    pub(crate) name: String,
    pub(crate) params: Type,
    pub(crate) returns: Type,
    pub(crate) action: Action,
}

/// `stats()`'s return: per method uid, call counts and times.
const STATS_SIGNATURE: &str =
    "{I(I(fff)<MinMaxSum,minValue,maxValue,cumulatedValue>(fff)<MinMaxSum,minValue,\
     maxValue,cumulatedValue>(fff)<MinMaxSum,minValue,maxValue,cumulatedValue>)<MethodStatistics,count,\
     wall,user,system>}";

const TRACE_SIGNAL: (u32, &str, &str) = (
    86,
    "traceObject",
    "((IiIm(ll)<timeval,tv_sec,tv_usec>llII)<EventTrace,id,kind,slotId,arguments,timestamp,userUsTime,\
     systemUsTime,callerContext,calleeContext>)",
);

/// `serviceAdded(I serviceId, s name)` and `serviceRemoved`: the ServiceDirectory's signals.
pub(crate) const SERVICE_ADDED: u32 = 106;
pub(crate) const SERVICE_REMOVED: u32 = 107;

/// The uid of a subscriber object's `signal`.
pub(crate) const SUBSCRIBER_SIGNAL: u32 = 100;

/// The uid of naobroker's first own method on the ServiceDirectory.
const FIRST_DIRECTORY_EXTRA: u32 = 120;

/// The uid of a module's first method.
const FIRST_MODULE_METHOD: u32 = 100;

fn generic_methods() -> [(u32, &'static str, &'static str, &'static str, Generic); 14] {
    use Generic::*;
    [
        (0, "registerEvent", "(IIL)", "L", RegisterEvent),
        (1, "unregisterEvent", "(IIL)", "v", UnregisterEvent),
        (2, "metaObject", "(I)", naobroker_qi::MetaObject::SIGNATURE, MetaObject),
        (3, "terminate", "(I)", "v", Terminate),
        (5, "property", "(m)", "m", Property),
        (6, "setProperty", "(mm)", "v", SetProperty),
        (7, "properties", "()", "[s]", Properties),
        (8, "registerEventWithSignature", "(IILs)", "L", RegisterEventWithSignature),
        (80, "isStatsEnabled", "()", "b", IsStatsEnabled),
        (81, "enableStats", "(b)", "v", EnableStats),
        (82, "stats", "()", STATS_SIGNATURE, Stats),
        (83, "clearStats", "()", "v", ClearStats),
        (84, "isTraceEnabled", "()", "b", IsTraceEnabled),
        (85, "enableTrace", "(b)", "v", EnableTrace),
    ]
}

/// libqi's own methods a module may not take the name of: clients need them to work.
const RESERVED: [&str; 5] =
    ["registerEvent", "unregisterEvent", "metaObject", "terminate", "registerEventWithSignature"];

/// One object's methods and signals.
pub(crate) struct ObjectTable {
    methods: HashMap<u32, Method>,
    pub(crate) meta: MetaObject,
}

impl ObjectTable {
    fn empty() -> ObjectTable {
        let mut table = ObjectTable { methods: HashMap::new(), meta: MetaObject::default() };
        let (uid, name, signature) = TRACE_SIGNAL;
        table.meta.signals.insert(uid, MetaSignal::new(uid, name, signature));
        table
    }

    /// libqi's methods of every object, less those whose names `taken` uses (but the ones
    /// clients need).
    fn with_generics(taken: &[&str]) -> ObjectTable {
        let mut table = ObjectTable::empty();
        for (uid, name, params, returns, generic) in generic_methods() {
            if RESERVED.contains(&name) || !taken.contains(&name) {
                table.add(uid, name, params, returns, "", Action::Generic(generic));
            }
        }
        table
    }

    fn add(&mut self, uid: u32, name: &str, params: &str, returns: &str, help: &str, action: Action) {
        let (Ok(params_type), Ok(returns_type)) = (Type::parse(params), Type::parse(returns)) else {
            tracing::warn!(name, params, returns, "qi: a signature that does not parse, method left out");
            return;
        };
        let mut meta = MetaMethod::new(uid, name, params, returns);
        meta.description = help.to_owned();
        self.meta.methods.insert(uid, meta);
        let method = Method { name: name.to_owned(), params: params_type, returns: returns_type, action };
        self.methods.insert(uid, method);
    }

    /// `infos`' methods from `first_uid` on, each overload a uid; answers the next free uid.
    fn add_module_methods(&mut self, infos: &[MethodInfo], first_uid: u32) -> u32 {
        let mut uid = first_uid;
        for info in infos.iter().filter(|info| !RESERVED.contains(&info.name.as_str())) {
            for overload in overloads(info) {
                let action = Action::Module(info.name.clone());
                self.add(uid, &info.name, &overload.params, &overload.returns, &info.help, action);
                uid += 1;
            }
        }
        uid
    }

    /// A module's main object; ALMemory's (`memory`) with `subscriber`.
    pub(crate) fn module(infos: &[MethodInfo], memory: bool) -> ObjectTable {
        let names: Vec<&str> = infos.iter().map(|info| info.name.as_str()).collect();
        let mut table = ObjectTable::with_generics(&names);
        let next = table.add_module_methods(infos, FIRST_MODULE_METHOD);
        if memory && !names.contains(&"subscriber") {
            let help = "subscriber(event): an object whose signal `signal` carries each value of the event.";
            table.add(next, "subscriber", "(s)", "o", help, Action::Subscriber);
        }
        table
    }

    /// The ServiceDirectory: libqi's methods and signals at their fixed uids, then the
    /// methods of naobroker's `ServiceDirectory` module (`infos`). A `legacy` client gets
    /// the 6-field ServiceInfo.
    pub(crate) fn directory(infos: &[MethodInfo], legacy: bool) -> ObjectTable {
        use Directory::*;
        let info = if legacy { ServiceInfo::LEGACY_SIGNATURE } else { ServiceInfo::SIGNATURE };
        let (list, tuple) = (format!("[{info}]"), format!("({info})"));
        let names: Vec<&str> = infos.iter().map(|info| info.name.as_str()).collect();
        let mut table = ObjectTable::with_generics(&names);
        let fixed: [(u32, &str, &str, &str, Directory); 8] = [
            (100, "service", "(s)", info, Service),
            (101, "services", "()", &list, Services),
            (102, "registerService", &tuple, "I", RegisterService),
            (103, "unregisterService", "(I)", "v", UnregisterService),
            (104, "serviceReady", "(I)", "v", ServiceReady),
            (105, "updateServiceInfo", &tuple, "v", UpdateServiceInfo),
            (108, "machineId", "()", "s", MachineId),
            (109, "_socketOfService", "(I)", "o", SocketOfService),
        ];
        for (uid, name, params, returns, method) in fixed {
            table.add(uid, name, params, returns, "", Action::Directory(method));
        }
        for (uid, name) in [(SERVICE_ADDED, "serviceAdded"), (SERVICE_REMOVED, "serviceRemoved")] {
            table.meta.signals.insert(uid, MetaSignal::new(uid, name, "(Is)"));
        }
        let own: Vec<MethodInfo> =
            infos.iter().filter(|m| table.meta.method(&m.name).is_none()).cloned().collect();
        table.add_module_methods(&own, FIRST_DIRECTORY_EXTRA);
        table
    }

    /// An object `ALMemory.subscriber(event)` made: one signal, `signal(value)`.
    pub(crate) fn subscriber() -> ObjectTable {
        let mut table = ObjectTable::with_generics(&[]);
        table.meta.signals.insert(SUBSCRIBER_SIGNAL, MetaSignal::new(SUBSCRIBER_SIGNAL, "signal", "(m)"));
        table
    }

    pub(crate) fn method(&self, uid: u32) -> Option<&Method> {
        self.methods.get(&uid)
    }

    pub(crate) fn has_signal(&self, uid: u32) -> bool {
        self.meta.signals.contains_key(&uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_protocol::{MethodType, ValueType};

    fn info(name: &str, params: Vec<ValueType>, returns: ValueType) -> MethodInfo {
        let types = MethodType { params, returns };
        MethodInfo {
            name: name.into(),
            signature: types.to_string(),
            help: format!("{name} help"),
            types: Some(types),
        }
    }

    #[test]
    fn module_methods_follow_libqi_s_own() {
        use ValueType::*;
        let infos = [
            info("getData", vec![String], Dynamic),
            info("getTime", vec![Optional(Box::new(Int64))], Int32),
            info("stats", vec![], Dynamic),
            info("metaObject", vec![], Dynamic),
        ];
        let table = ObjectTable::module(&infos, true);
        let get_data = table.method(100).unwrap();
        assert_eq!((get_data.name.as_str(), get_data.params.to_string()), ("getData", "(s)".to_owned()));
        assert_eq!(table.meta.methods[&100].description, "getData help");
        assert_eq!(table.method(101).unwrap().params.to_string(), "()");
        assert_eq!(table.method(102).unwrap().params.to_string(), "(l)");
        // The module's own stats replaces libqi's; metaObject stays libqi's.
        assert_eq!(table.method(103).unwrap().action, Action::Module("stats".into()));
        assert!(table.method(82).is_none());
        assert_eq!(table.method(2).unwrap().action, Action::Generic(Generic::MetaObject));
        let subscriber = table.method(104).unwrap();
        assert_eq!(
            (subscriber.name.as_str(), subscriber.returns.to_string()),
            ("subscriber", "o".to_owned())
        );
        assert!(table.has_signal(86));
    }

    #[test]
    fn the_directory_has_libqi_s_uids() {
        let modules = info("modules", vec![], ValueType::List(Box::new(ValueType::String)));
        let table = ObjectTable::directory(&[modules], false);
        assert_eq!(table.method(100).unwrap().returns.to_string(), ServiceInfo::SIGNATURE);
        assert_eq!(table.method(108).unwrap().action, Action::Directory(Directory::MachineId));
        assert_eq!(table.method(120).unwrap().action, Action::Module("modules".into()));
        assert!(table.has_signal(106) && table.has_signal(107));
        let legacy = ObjectTable::directory(&[], true);
        assert_eq!(
            legacy.method(101).unwrap().returns.to_string(),
            format!("[{}]", ServiceInfo::LEGACY_SIGNATURE)
        );
    }

    #[test]
    fn a_subscriber_has_its_signal() {
        let table = ObjectTable::subscriber();
        assert!(table.has_signal(SUBSCRIBER_SIGNAL));
        assert_eq!(table.meta.signal("signal").unwrap().signature, "(m)");
    }
}
