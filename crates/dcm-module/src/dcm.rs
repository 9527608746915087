//! The DCM module's state on the broker's thread: the handle on the real-time cycle, the
//! aliases, the preferences and the `DCM.step` calls waiting for their cycles. Its method
//! table is in `module.rs`, the handlers in `methods.rs` and `settings.rs`.

use std::cell::RefCell;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm::core::Aliases;
use naobroker_dcm::cycle::CycleReport;
use naobroker_framework::Broker;
use naobroker_memory::Store;

use crate::cycle_events::{CycleSignal, StepWaiter};
use crate::handle::DcmHandle;
use crate::parse::RequestParser;
use crate::recording::Recordings;
use crate::settings::Settings;

/// The DCM module: NAOqi's DCM API over the real-time cycle.
pub struct Dcm {
    pub(crate) handle: DcmHandle,
    pub(crate) aliases: Aliases,
    pub(crate) waiters: Rc<RefCell<Vec<StepWaiter>>>,
    /// The cycle's reports and wake-ups, until `started` follows them.
    pub(crate) signal: Option<CycleSignal>,
    pub(crate) broker: Broker,
    pub(crate) event_decimation: u64,
    pub(crate) settings: Settings,
    pub(crate) recordings: Recordings,
}

impl Dcm {
    pub fn new(
        handle: DcmHandle,
        reports: rtrb::Consumer<CycleReport>,
        wake: UnixDatagram,
        broker: Broker,
        event_decimation: u32,
    ) -> Dcm {
        let settings = Settings::new(handle.model());
        Dcm {
            handle,
            settings,
            aliases: Aliases::default(),
            waiters: Rc::default(),
            signal: Some(CycleSignal { reports, wake }),
            broker,
            event_decimation: u64::from(event_decimation.max(1)),
            recordings: Recordings::default(),
        }
    }

    /// Show the preferences in ALMemory's `store`, and save them into `description` (the
    /// robot description file the broker started with, if any).
    pub fn with_preferences(mut self, store: Arc<Store>, description: Option<PathBuf>) -> Dcm {
        self.settings.attach(store, description);
        self
    }

    pub(crate) fn parser(&self) -> RequestParser<'_> {
        RequestParser { model: self.handle.model(), aliases: &self.aliases }
    }
}
