//! The members libqi gives every object (uids 0-8, 80-85 and signal 86) and the
//! ServiceDirectory's own (100-109), with the exact signatures libqi 4.0.3 advertises.

use super::{MetaMethod, MetaObject, MetaSignal};

const MIN_MAX_SUM: &str = "(fff)<MinMaxSum,minValue,maxValue,cumulatedValue>";
const EVENT_TRACE: &str = "((IiIm(ll)<timeval,tv_sec,tv_usec>llII)<EventTrace,id,kind,slotId,arguments,\
    timestamp,userUsTime,systemUsTime,callerContext,calleeContext>)";

impl MetaObject {
    /// uid of `registerEvent (IIL) -> L`: subscribe a link to a signal.
    pub const REGISTER_EVENT: u32 = 0;
    /// uid of `unregisterEvent (IIL) -> v`.
    pub const UNREGISTER_EVENT: u32 = 1;
    /// uid of `metaObject (I) -> MetaObject`.
    pub const META_OBJECT: u32 = 2;
    /// uid of `terminate (I) -> v`.
    pub const TERMINATE: u32 = 3;
    /// uid of `property (m) -> m`.
    pub const PROPERTY: u32 = 5;
    /// uid of `setProperty (mm) -> v`.
    pub const SET_PROPERTY: u32 = 6;
    /// uid of `properties () -> [s]`.
    pub const PROPERTIES: u32 = 7;
    /// uid of `registerEventWithSignature (IILs) -> L`.
    pub const REGISTER_EVENT_WITH_SIGNATURE: u32 = 8;
    /// The first uid libqi gives an object's own methods and signals.
    pub const FIRST_USER_UID: u32 = 100;

    /// What libqi gives every object before its own members: the generic methods, the
    /// statistics and trace methods, and the `traceObject` signal.
    pub fn base_object() -> MetaObject {
        let stats = format!(
            "{{I(I{MIN_MAX_SUM}{MIN_MAX_SUM}{MIN_MAX_SUM})<MethodStatistics,count,wall,user,system>}}"
        );
        let methods = [
            MetaMethod::new(Self::REGISTER_EVENT, "registerEvent", "(IIL)", "L"),
            MetaMethod::new(Self::UNREGISTER_EVENT, "unregisterEvent", "(IIL)", "v"),
            MetaMethod::new(Self::META_OBJECT, "metaObject", "(I)", MetaObject::SIGNATURE),
            MetaMethod::new(Self::TERMINATE, "terminate", "(I)", "v"),
            MetaMethod::new(Self::PROPERTY, "property", "(m)", "m"),
            MetaMethod::new(Self::SET_PROPERTY, "setProperty", "(mm)", "v"),
            MetaMethod::new(Self::PROPERTIES, "properties", "()", "[s]"),
            MetaMethod::new(Self::REGISTER_EVENT_WITH_SIGNATURE, "registerEventWithSignature", "(IILs)", "L"),
            MetaMethod::new(80, "isStatsEnabled", "()", "b"),
            MetaMethod::new(81, "enableStats", "(b)", "v"),
            MetaMethod::new(82, "stats", "()", &stats),
            MetaMethod::new(83, "clearStats", "()", "v"),
            MetaMethod::new(84, "isTraceEnabled", "()", "b"),
            MetaMethod::new(85, "enableTrace", "(b)", "v"),
        ];
        let mut meta = MetaObject::default();
        for method in methods {
            meta.methods.insert(method.uid, method);
        }
        meta.signals.insert(86, MetaSignal::new(86, "traceObject", EVENT_TRACE));
        meta
    }

    /// uid of the ServiceDirectory's `service (s) -> ServiceInfo`.
    pub const SD_SERVICE: u32 = 100;
    /// uid of `services () -> [ServiceInfo]`.
    pub const SD_SERVICES: u32 = 101;
    /// uid of `registerService (ServiceInfo) -> I`.
    pub const SD_REGISTER_SERVICE: u32 = 102;
    /// uid of `unregisterService (I) -> v`.
    pub const SD_UNREGISTER_SERVICE: u32 = 103;
    /// uid of `serviceReady (I) -> v`.
    pub const SD_SERVICE_READY: u32 = 104;
    /// uid of `updateServiceInfo (ServiceInfo) -> v`.
    pub const SD_UPDATE_SERVICE_INFO: u32 = 105;
    /// uid of the signal `serviceAdded (Is)`.
    pub const SD_SERVICE_ADDED: u32 = 106;
    /// uid of the signal `serviceRemoved (Is)`.
    pub const SD_SERVICE_REMOVED: u32 = 107;
    /// uid of `machineId () -> s`.
    pub const SD_MACHINE_ID: u32 = 108;
    /// uid of `_socketOfService (I) -> o`.
    pub const SD_SOCKET_OF_SERVICE: u32 = 109;

    /// The ServiceDirectory's MetaObject as libqi 4.0.3 serves it. `service_info_signature`
    /// is [`crate::ServiceInfo::SIGNATURE`], or [`crate::ServiceInfo::LEGACY_SIGNATURE`] for a peer that
    /// did not advertise `ObjectPtrUID`.
    pub fn service_directory(service_info_signature: &str) -> MetaObject {
        let info = service_info_signature;
        let methods = [
            MetaMethod::new(Self::SD_SERVICE, "service", "(s)", info),
            MetaMethod::new(Self::SD_SERVICES, "services", "()", &format!("[{info}]")),
            MetaMethod::new(Self::SD_REGISTER_SERVICE, "registerService", &format!("({info})"), "I"),
            MetaMethod::new(Self::SD_UNREGISTER_SERVICE, "unregisterService", "(I)", "v"),
            MetaMethod::new(Self::SD_SERVICE_READY, "serviceReady", "(I)", "v"),
            MetaMethod::new(Self::SD_UPDATE_SERVICE_INFO, "updateServiceInfo", &format!("({info})"), "v"),
            MetaMethod::new(Self::SD_MACHINE_ID, "machineId", "()", "s"),
            MetaMethod::new(Self::SD_SOCKET_OF_SERVICE, "_socketOfService", "(I)", "o"),
        ];
        let mut meta = Self::base_object();
        for method in methods {
            meta.methods.insert(method.uid, method);
        }
        for signal in [
            MetaSignal::new(Self::SD_SERVICE_ADDED, "serviceAdded", "(Is)"),
            MetaSignal::new(Self::SD_SERVICE_REMOVED, "serviceRemoved", "(Is)"),
        ] {
            meta.signals.insert(signal.uid, signal);
        }
        meta
    }
}
