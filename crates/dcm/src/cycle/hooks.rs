//! Real-time hooks (NAOqi's atPreProcess / atPostProcess): callbacks run on the cycle
//! thread, what they see of a cycle and the commands they send, all preallocated.

use naobroker_rtslots::RtSlots;

use crate::time::DcmTime;

/// Hooks the cycle runs at once, at most.
pub const MAX_HOOKS: usize = 16;

/// NAOqi's onPreProcess (after sensors are read, before commands are computed) and
/// onPostProcess (after every value reached ALMemory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pre,
    Post,
}

/// A callback run on the cycle thread.
pub struct Hook {
    pub(crate) id: u32,
    pub(crate) phase: Phase,
    pub(crate) callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>,
}

impl Hook {
    pub(crate) fn new(id: u32, phase: Phase, callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>) -> Hook {
        Hook { id, phase, callback }
    }
}

/// Commands hooks queue for the cycle, preallocated.
pub struct HookCommands {
    commands: Vec<(usize, f64)>,
}

impl HookCommands {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        HookCommands { commands: Vec::with_capacity(capacity) }
    }

    pub(crate) fn pending(&self) -> &[(usize, f64)] {
        &self.commands
    }

    pub(crate) fn clear(&mut self) {
        self.commands.clear();
    }
}

/// What a hook sees and may do during one cycle. Nothing here allocates or locks.
pub struct CycleContext<'a> {
    /// DCM time of this cycle.
    pub time: DcmTime,
    pub cycle: u64,
    pub(crate) slots: &'a RtSlots,
    pub(crate) commands: &'a mut HookCommands,
}

impl CycleContext<'_> {
    /// ALMemory's real-time values (read them through a resolved `FastAccess`, or here by index).
    pub fn slots(&self) -> &RtSlots {
        self.slots
    }

    /// Send `value` to an actuator now, replacing its buffered commands (ClearAll at
    /// this cycle's time). From a preProcess hook it is sent this cycle; from a
    /// postProcess hook, at the next. Returns false when the queue is full.
    pub fn set(&mut self, actuator: usize, value: f64) -> bool {
        if value.is_nan() || self.commands.commands.len() == self.commands.commands.capacity() {
            return false;
        }
        self.commands.commands.push((actuator, value));
        true
    }
}
