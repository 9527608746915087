//! What a real-time thread asks of the OS before its first cycle: `SCHED_FIFO`, a CPU kept
//! awake or not, locked memory. Each refusal is said once, clearly, and the thread runs
//! anyway.

use thread_priority::unix::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadSchedulePolicy,
};
use thread_priority::ThreadPriority;

use crate::awake::CpuAwake;

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
    /// Keep `cpu` out of idle states while the thread runs, so that a wake-up finds it
    /// running with its caches (see `awake.rs`): faster cycles after a sleep, for the CPU's
    /// idle power. Needs `cpu`, and the right to write that CPU's sysfs file (root, or a
    /// boot-time rule: docs/realtime.md).
    pub keep_cpu_awake: bool,
    /// Lock the whole process's memory (`mlockall`): no page of it is swapped out.
    pub mlock: bool,
}

/// What the OS granted a real-time thread; dropping it lets the thread's CPU idle again.
#[must_use = "dropped, it lets the thread's CPU idle again"]
#[derive(Debug)]
pub struct Realtime {
    /// The thread runs `SCHED_FIFO`.
    pub fifo: bool,
    awake: Option<CpuAwake>,
}

impl Realtime {
    /// The thread's CPU is kept out of idle states.
    pub fn cpu_awake(&self) -> bool {
        self.awake.is_some()
    }
}

/// On the thread itself: ask for what `spec` says ([`crate::RtThread::spawn`] does, before
/// the first cycle), for as long as the thread holds what this returns.
pub fn make_realtime(spec: &ThreadSpec) -> Realtime {
    lock_memory_and_pin(spec);
    let awake = if spec.keep_cpu_awake { hold_cpu_awake(spec) } else { None };
    Realtime { fifo: ask_for_fifo(spec), awake }
}

fn lock_memory_and_pin(spec: &ThreadSpec) {
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
}

fn hold_cpu_awake(spec: &ThreadSpec) -> Option<CpuAwake> {
    let role = spec.role;
    let Some(cpu) = spec.cpu else {
        tracing::warn!("the {role} asks to keep its CPU awake but names no CPU: its CPU may idle");
        return None;
    };
    match CpuAwake::hold(cpu) {
        Ok(awake) => {
            tracing::info!(cpu, "{role}: CPU kept out of idle states while it runs");
            Some(awake)
        }
        Err(error) => {
            tracing::warn!(
                cpu,
                %error,
                "cannot keep the {role}'s CPU awake (root writes its pm_qos_resume_latency_us): \
                 it may idle between cycles, and a cycle after a sleep takes longer"
            );
            None
        }
    }
}

/// Asks for `SCHED_FIFO` at `spec.priority`: whether the thread got it.
fn ask_for_fifo(spec: &ThreadSpec) -> bool {
    let role = spec.role;
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
