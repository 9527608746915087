//! What a real-time thread asks of the OS before its first cycle: `SCHED_FIFO`, a CPU, locked
//! memory. Each refusal is said once, clearly, and the thread runs anyway.

use thread_priority::unix::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadSchedulePolicy,
};
use thread_priority::ThreadPriority;

/// Who a real-time thread is and what it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSpec {
    /// The OS thread's name (`ps -L`, `top -H`), e.g. `dcm-cycle`.
    pub name: &'static str,
    /// What the log calls it, e.g. `DCM cycle`.
    pub role: &'static str,
    /// `SCHED_FIFO` priority (1–99, higher preempts lower); `None` keeps the normal
    /// scheduler without asking.
    pub priority: Option<u8>,
    /// The CPU to pin the thread to.
    pub cpu: Option<usize>,
    /// Lock the whole process's memory (`mlockall`): no page of it is swapped out.
    pub mlock: bool,
}

/// On the thread itself: ask for what `spec` says ([`crate::RtThread::spawn`] does, before
/// the first cycle). Returns whether the thread got its `SCHED_FIFO` priority.
pub fn make_realtime(spec: &ThreadSpec) -> bool {
    let role = spec.role;
    if spec.mlock {
        use nix::sys::mman::{mlockall, MlockAllFlags};
        if let Err(error) = mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE) {
            tracing::warn!(%error, "mlockall refused for the {role}: the process's memory may be paged out");
        }
    }
    if let Some(cpu) = spec.cpu {
        let mut set = nix::sched::CpuSet::new();
        let pinned =
            set.set(cpu).and_then(|_| nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set));
        if let Err(error) = pinned {
            tracing::warn!(cpu, %error, "cannot pin the {role} thread to its CPU");
        }
    }
    let Some(priority) = spec.priority else { return false };
    let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    let result =
        priority.min(99).try_into().map_err(|_| thread_priority::Error::Priority("out of range")).and_then(
            |value| {
                set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Crossplatform(value), fifo)
            },
        );
    match result {
        Ok(()) => {
            tracing::info!(priority, "{role} thread runs SCHED_FIFO");
            true
        }
        Err(error) => {
            tracing::warn!(
                priority,
                ?error,
                "the OS refused SCHED_FIFO for the {role} (run as root or grant CAP_SYS_NICE / rtprio): \
                 it runs with normal priority"
            );
            false
        }
    }
}
