//! Following the cycle thread from the broker's thread: `DCM/PreProcess` and
//! `DCM/PostProcess` raised in ALMemory (every `event_decimation` cycles), and `DCM.step`
//! calls answered once their cycles ran.

use std::cell::RefCell;
use std::os::unix::net::UnixDatagram;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm::cycle::{CycleReport, Shared};
use naobroker_framework::{Broker, Value};
use naobroker_rt::Wakeups;
use tokio::sync::oneshot;

/// A `DCM.step` call waiting for cycle number `cycle`.
pub(crate) struct StepWaiter {
    pub(crate) cycle: u64,
    pub(crate) done: oneshot::Sender<()>,
}

/// The cycle's reports and wake-ups, received from the cycle thread.
pub(crate) struct CycleSignal {
    pub(crate) reports: rtrb::Consumer<CycleReport>,
    pub(crate) wake: UnixDatagram,
}

/// Start following the cycle: from now on each wake-up raises, through `broker`, the
/// cycle events of the reports received (every `event_decimation` cycles) and answers the
/// `step` calls in `waiters` whose cycle ran (`shared` counts the cycles).
pub(crate) fn follow_cycles(
    CycleSignal { mut reports, wake }: CycleSignal,
    waiters: Rc<RefCell<Vec<StepWaiter>>>,
    shared: Arc<Shared>,
    broker: Broker,
    event_decimation: u64,
) {
    actix_rt::spawn(async move {
        let wakeups = match Wakeups::new(wake) {
            Ok(wakeups) => wakeups,
            Err(error) => {
                tracing::error!(%error, "cannot follow the DCM cycle");
                return;
            }
        };
        while wakeups.next().await {
            while let Ok(report) = reports.pop() {
                if report.cycle % event_decimation == 0 {
                    raise_cycle_events(&broker, &report);
                }
            }
            answer_steps(&waiters, &shared);
        }
    });
}

/// Raise `DCM/PreProcess` and `DCM/PostProcess` for one cycle. The raise only stores the
/// value and queues it for each subscriber within its window (docs/protocol.md): a
/// subscriber slower than the cycle loses events, counted by the broker, and never slows
/// the cycle nor makes the broker hold them.
fn raise_cycle_events(broker: &Broker, report: &CycleReport) {
    let value = Value::Array(vec![report.cycle.into(), report.time.into()]);
    for event in ["DCM/PreProcess", "DCM/PostProcess"] {
        // Refused only without ALMemory (a DCM alone, in tests): nothing to tell 100 times a second.
        let _ = broker.raise_event(event, value.clone());
    }
}

/// Answer the `step` calls whose cycle ran.
fn answer_steps(waiters: &RefCell<Vec<StepWaiter>>, shared: &Shared) {
    let done = shared.cycles();
    let ready: Vec<StepWaiter> = {
        let mut waiters = waiters.borrow_mut();
        let (ready, pending) = waiters.drain(..).partition(|waiter| waiter.cycle <= done);
        *waiters = pending;
        ready
    };
    for waiter in ready {
        let _ = waiter.done.send(());
    }
}
