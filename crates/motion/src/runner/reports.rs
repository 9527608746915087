//! The motion thread's reports to the API, in cycle order. A cycle's `PreProcess` goes out
//! only when the queue has room for it and for everything the cycle can report after it,
//! its `PostProcess` (`Cycle`) included: the pair is reported whole or not at all, and a
//! task's end, which a blocked call waits for, is never crowded out by cycle events. What
//! does not fit is counted (`ALMotion.stats`: `reports_dropped`).

use naobroker_dcm::time::DcmTime;
use naobroker_rt::Reporter;

use crate::engine::FromEngine;

pub(super) struct Reports {
    queue: Reporter<FromEngine>,
    /// The most reports one cycle makes after its `PreProcess`.
    per_cycle: usize,
    /// This cycle's `PreProcess` went out: its `PostProcess` goes out too.
    announced: bool,
}

impl Reports {
    pub(super) fn new(queue: Reporter<FromEngine>, per_cycle: usize) -> Reports {
        Reports { queue, per_cycle, announced: false }
    }

    /// A cycle starts; how many reports were dropped (its `PreProcess`, or none).
    pub(super) fn pre_process(&mut self, cycle: u64, time: DcmTime) -> u64 {
        self.announced = self.queue.room() > self.per_cycle;
        if self.announced {
            // Cannot fail: there is room.
            let _ = self.queue.push(FromEngine::PreProcess { cycle, time });
            0
        } else {
            1
        }
    }

    /// The cycle's reports, taken from `events`; how many were dropped.
    pub(super) fn send(&mut self, events: &mut Vec<FromEngine>) -> u64 {
        let mut dropped = 0;
        for event in events.drain(..) {
            let unannounced = matches!(event, FromEngine::Cycle { .. }) && !self.announced;
            if unannounced || self.queue.push(event).is_err() {
                dropped += 1;
            }
        }
        dropped
    }

    /// Wake the API: what the queue holds is ready.
    pub(super) fn wake(&self) {
        self.queue.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle_reports(finished: u64) -> Vec<FromEngine> {
        let mut events: Vec<FromEngine> =
            (1..=finished).map(|id| FromEngine::Finished { id, completed: true }).collect();
        events.push(FromEngine::Cycle { cycle: 1, time: 20 });
        events
    }

    #[test]
    fn pre_and_post_process_go_out_together_or_not_at_all() {
        // Room for 5; a cycle reports at most 3 after its PreProcess.
        let (queue, reader) = naobroker_rt::report_queue(5).unwrap();
        let mut received = reader.queue;
        let mut reports = Reports::new(queue, 3);
        assert_eq!(reports.pre_process(1, 20), 0);
        assert_eq!(reports.send(&mut cycle_reports(2)), 0);
        assert_eq!(received.slots(), 4);
        // One slot left: no room for the pair, the task end still goes out.
        assert_eq!(reports.pre_process(2, 40), 1);
        assert_eq!(reports.send(&mut cycle_reports(1)), 1);
        let got: Vec<FromEngine> = std::iter::from_fn(|| received.pop().ok()).collect();
        assert_eq!(
            got,
            [
                FromEngine::PreProcess { cycle: 1, time: 20 },
                FromEngine::Finished { id: 1, completed: true },
                FromEngine::Finished { id: 2, completed: true },
                FromEngine::Cycle { cycle: 1, time: 20 },
                FromEngine::Finished { id: 1, completed: true },
            ]
        );
        // Read: the pairs resume.
        assert_eq!(reports.pre_process(3, 60), 0);
        assert_eq!(reports.send(&mut cycle_reports(0)), 0);
        assert_eq!(received.slots(), 2);
    }
}
