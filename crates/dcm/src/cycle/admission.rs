//! A producer's capacity check of a new request, in one pass over the request and one over
//! the producer's queued requests, with a per-actuator tally allocated once: a request
//! with many groups (an alias naming one actuator many times) costs linear time.

use std::sync::atomic::Ordering;

use super::queued::Queued;
use super::Shared;
use crate::core::{LengthChange, Refusal};

/// One actuator's count while a request is checked.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    /// A group of the request names this actuator.
    touched: bool,
    /// Its buffer's length after the steps counted so far, at most.
    length: usize,
    /// The most it holds after any of the request's own groups.
    peak: usize,
    /// Commands other producers queued for it.
    others: usize,
}

/// The producer's per-actuator tallies, reset after every check.
#[derive(Debug)]
pub(crate) struct Admission {
    tallies: Box<[Tally]>,
}

impl Admission {
    pub(crate) fn new(actuators: usize) -> Admission {
        Admission { tallies: vec![Tally::default(); actuators].into_boxed_slice() }
    }

    /// The first actuator (in the request's order) whose buffer could overflow at some
    /// step of applying `changes`. Each touched actuator's bound counts the buffer as last
    /// published, this producer's `queued` requests in order (a queued `ClearAll` empties
    /// it), the request's own groups in order, and other producers' queued commands as if
    /// they came after. `changes` name actuators of the model (checked by the caller).
    pub(crate) fn check(
        &mut self,
        shared: &Shared,
        producer: usize,
        queued: &Queued,
        changes: &[(usize, LengthChange)],
    ) -> Result<(), Refusal> {
        for &(actuator, _) in changes {
            let tally = &mut self.tallies[actuator];
            if !tally.touched {
                // Queued commands first, the buffer after: a request the cycle applies
                // between the two reads is counted twice, never missed.
                let others = shared.queued_by_others(producer, actuator);
                let length = shared.buffer_len[actuator].load(Ordering::SeqCst) as usize;
                *tally = Tally { touched: true, length, peak: 0, others };
            }
        }
        for &(actuator, change) in queued.changes() {
            let tally = &mut self.tallies[actuator];
            if tally.touched {
                tally.length = change.after(tally.length);
            }
        }
        for &(actuator, change) in changes {
            let tally = &mut self.tallies[actuator];
            tally.length = change.after(tally.length);
            tally.peak = tally.peak.max(tally.length);
        }
        let mut verdict = Ok(());
        for &(actuator, _) in changes {
            let tally = &mut self.tallies[actuator];
            if tally.touched {
                tally.touched = false;
                let would_hold = tally.peak + tally.others;
                if verdict.is_ok() && would_hold > shared.capacity {
                    verdict = Err(Refusal { actuator, would_hold });
                }
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use naobroker_rtslots::RtSlots;

    use super::*;
    use crate::core::LengthChange::{Add, Reset};
    use crate::cycle::{ClockMode, CycleConfig, DcmSlots};
    use naobroker_robot::device::{DeviceModel, RobotDescription};

    const ACTUATORS: usize = 3;

    /// Producer 0's view: `lengths` published, producer 1's `others` queued per actuator.
    fn shared(lengths: [u32; ACTUATORS], others: [u32; ACTUATORS], capacity: usize) -> Shared {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let (layout, dcm_slots) = DcmSlots::layout(&model);
        let config = CycleConfig {
            clock: ClockMode::Manual,
            buffer_capacity: capacity,
            producers: &["this one", "another"],
            ..CycleConfig::default()
        };
        let shared = Shared::new(RtSlots::new(layout), dcm_slots, ACTUATORS, 0, &config, None);
        for actuator in 0..ACTUATORS {
            shared.buffer_len[actuator].store(lengths[actuator], Ordering::SeqCst);
            shared.queued_slot(1, actuator).store(others[actuator], Ordering::SeqCst);
        }
        shared
    }

    /// The most actuator 0 would hold, read from a refusal at capacity 0.
    fn would_hold(shared: &Shared, queued: &Queued, changes: &[(usize, LengthChange)]) -> usize {
        let mut admission = Admission::new(ACTUATORS);
        match admission.check(shared, 0, queued, changes) {
            Err(Refusal { actuator: 0, would_hold }) => would_hold,
            other => panic!("{other:?}"),
        }
    }

    fn queued(requests: &[&[(usize, LengthChange)]]) -> Queued {
        let mut queued = Queued::default();
        for request in requests {
            queued.push(request);
        }
        queued
    }

    #[test]
    fn clear_all_counts_only_what_it_brings() {
        let full = shared([4096, 0, 0], [0; 3], 0);
        assert_eq!(would_hold(&full, &queued(&[]), &[(0, Reset(1))]), 1, "cleared by the request itself");
        let queue = queued(&[&[(0, Add(10))], &[(0, Add(5))]]);
        assert_eq!(would_hold(&full, &queue, &[(0, Reset(3))]), 3, "queued commands are cleared too");
        let busy = shared([0, 0, 0], [7, 0, 0], 0);
        assert_eq!(would_hold(&busy, &queued(&[]), &[(0, Reset(3))]), 10, "others may come after");
    }

    #[test]
    fn other_updates_count_everything_queued() {
        let hundred = shared([100, 0, 0], [0; 3], 0);
        assert_eq!(would_hold(&hundred, &queued(&[&[(0, Add(10))]]), &[(0, Add(5))]), 115);
        let queue = queued(&[&[(0, Reset(2))]]);
        assert_eq!(would_hold(&hundred, &queue, &[(0, Add(5))]), 7, "a queued ClearAll empties it first");
        let busy = shared([100, 0, 0], [3, 0, 0], 0);
        let queue = queued(&[&[(0, Reset(2)), (1, Add(50))], &[(0, Add(4))]]);
        assert_eq!(would_hold(&busy, &queue, &[(0, Add(5))]), 14, "only actuator 0's changes count");
    }

    #[test]
    fn several_groups_for_one_actuator_peak_at_their_worst_step() {
        let nearly_full = shared([4000, 0, 0], [0; 3], 0);
        let merge_then_clear = [(0, Add(100)), (1, Add(1)), (0, Reset(1))];
        assert_eq!(would_hold(&nearly_full, &queued(&[]), &merge_then_clear), 4100);
        let full = shared([4096, 0, 0], [0; 3], 0);
        assert_eq!(would_hold(&full, &queued(&[]), &[(0, Reset(1)), (0, Add(100))]), 101);
        let ten = shared([10, 0, 0], [0; 3], 0);
        assert_eq!(would_hold(&ten, &queued(&[]), &[(0, Reset(50)), (0, Reset(2))]), 50);
    }

    #[test]
    fn the_first_overflowing_actuator_is_named_and_every_tally_is_reset() {
        let shared = shared([0, 4096, 4096], [0; 3], 4096);
        let mut admission = Admission::new(ACTUATORS);
        let changes = [(0, Add(1)), (2, Add(1)), (1, Add(1))];
        let refusal = admission.check(&shared, 0, &Queued::default(), &changes).unwrap_err();
        assert_eq!(refusal, Refusal { actuator: 2, would_hold: 4097 });
        assert!(admission.tallies.iter().all(|tally| !tally.touched));
        assert_eq!(admission.check(&shared, 0, &Queued::default(), &[(0, Add(4096))]), Ok(()));
    }

    #[test]
    fn a_request_of_many_groups_for_one_actuator_is_counted_in_one_pass() {
        let shared = shared([0, 0, 0], [0; 3], 4096);
        let mut admission = Admission::new(ACTUATORS);
        let mut changes = vec![(1, Reset(4)); 200_000];
        changes.push((1, Add(4093)));
        let refusal = admission.check(&shared, 0, &Queued::default(), &changes).unwrap_err();
        assert_eq!(refusal, Refusal { actuator: 1, would_hold: 4097 });
    }
}
