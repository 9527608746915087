//! The actor side of the DCM, shared by the `Dcm` module and by the in-process modules that
//! hook the cycle (ALMotion, ALSensors, FallGuard): one request channel into the cycle
//! thread, the device model and the counters the thread shares.

use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm::cycle::{ChannelError, CycleContext, Phase, RequestChannel, Shared};
use naobroker_framework::Value;
use naobroker_robot::device::DeviceModel;
use naobroker_rtslots::{FastAccess, NotRealTimeKey};

use crate::stats::stats_value;

/// A name [`DcmHandle::actuator`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown actuator {0}")]
pub struct UnknownActuator(pub String);

/// The actor side of the DCM, shared by the module and by in-process modules that
/// register real-time hooks. Lives on the broker's arbiter thread.
#[derive(Clone)]
pub struct DcmHandle {
    channel: Rc<RefCell<RequestChannel>>,
    shared: Arc<Shared>,
    model: Arc<DeviceModel>,
}

/// Removes its hook from the cycle when disconnected (or dropped).
pub struct HookConnection {
    id: u32,
    channel: Rc<RefCell<RequestChannel>>,
}

impl HookConnection {
    pub fn disconnect(self) {}
}

impl Drop for HookConnection {
    fn drop(&mut self) {
        if let Err(error) = self.channel.borrow_mut().remove_hook(self.id) {
            tracing::warn!(%error, "could not remove a real-time hook");
        }
    }
}

impl DcmHandle {
    pub fn new(channel: RequestChannel) -> DcmHandle {
        let shared = Arc::clone(channel.shared());
        let model = Arc::clone(channel.model());
        DcmHandle { channel: Rc::new(RefCell::new(channel)), shared, model }
    }

    pub fn model(&self) -> &Arc<DeviceModel> {
        &self.model
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The request channel, for the module's own requests.
    pub(crate) fn channel(&self) -> RefMut<'_, RequestChannel> {
        self.channel.borrow_mut()
    }

    /// Cycle statistics, with each hook's name (`DCM.stats` without the module's own).
    pub fn cycle_stats(&self) -> Value {
        stats_value(&self.shared.stats.snapshot(), self.channel.borrow().hook_names())
    }

    /// An actuator's index for [`CycleContext::set`].
    pub fn actuator(&self, name: &str) -> Result<usize, UnknownActuator> {
        self.model.actuator(name).ok_or_else(|| UnknownActuator(name.to_owned()))
    }

    /// Resolve ALMemory real-time keys once, for reading in a hook every cycle.
    pub fn fast_access(&self, keys: &[&str]) -> Result<FastAccess, NotRealTimeKey> {
        self.shared.slots.fast_access(keys)
    }

    /// NAOqi's `atPreProcess`: `callback` runs on the cycle thread after the sensors
    /// are read, before commands are computed. It must not allocate, lock or block.
    pub fn at_pre_process(
        &self,
        name: &str,
        callback: impl FnMut(&mut CycleContext<'_>) + Send + 'static,
    ) -> Result<HookConnection, ChannelError> {
        self.hook(Phase::Pre, name, Box::new(callback))
    }

    /// NAOqi's `atPostProcess`: runs after every value reached ALMemory.
    pub fn at_post_process(
        &self,
        name: &str,
        callback: impl FnMut(&mut CycleContext<'_>) + Send + 'static,
    ) -> Result<HookConnection, ChannelError> {
        self.hook(Phase::Post, name, Box::new(callback))
    }

    fn hook(
        &self,
        phase: Phase,
        name: &str,
        callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>,
    ) -> Result<HookConnection, ChannelError> {
        let id = self.channel.borrow_mut().add_hook(phase, name, callback)?;
        Ok(HookConnection { id, channel: Rc::clone(&self.channel) })
    }
}
