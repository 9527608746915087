//! One producer's own requests on their way to the cycle thread, oldest first: what each
//! does to its actuators' lengths, kept until the cycle says it applied them.

use std::collections::VecDeque;

use crate::core::LengthChange;

/// The length changes of one queued request, by actuator.
type Changes = Vec<(usize, LengthChange)>;

/// A producer's requests the cycle has not applied yet. Only its producer touches it.
#[derive(Debug, Default)]
pub(crate) struct Queued {
    /// `(sequence number, changes)`, the first request sent being number 1.
    requests: VecDeque<(u64, Changes)>,
    sent: u64,
}

impl Queued {
    /// Forget the requests the cycle applied: the first `applied` ever sent.
    pub(crate) fn forget_applied(&mut self, applied: u64) {
        while self.requests.front().is_some_and(|(sequence, _)| *sequence <= applied) {
            self.requests.pop_front();
        }
    }

    pub(crate) fn push(&mut self, changes: Changes) {
        self.sent += 1;
        self.requests.push_back((self.sent, changes));
    }

    /// The queued changes for one actuator, in the order the cycle applies them.
    pub(crate) fn changes_for(&self, actuator: usize) -> impl Iterator<Item = LengthChange> + '_ {
        self.requests
            .iter()
            .flat_map(|(_, changes)| changes.iter())
            .filter(move |(target, _)| *target == actuator)
            .map(|(_, change)| *change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::LengthChange::{Add, Reset};

    #[test]
    fn applied_requests_are_forgotten_in_order() {
        let mut queued = Queued::default();
        queued.push(vec![(0, Add(3)), (1, Add(1))]);
        queued.push(vec![(0, Reset(2))]);
        queued.push(vec![(0, Add(4))]);
        assert_eq!(queued.changes_for(0).collect::<Vec<_>>(), [Add(3), Reset(2), Add(4)]);
        queued.forget_applied(1);
        assert_eq!(queued.changes_for(0).collect::<Vec<_>>(), [Reset(2), Add(4)]);
        assert_eq!(queued.changes_for(1).count(), 0);
        queued.forget_applied(3);
        assert_eq!(queued.changes_for(0).count(), 0);
        queued.push(vec![(1, Add(9))]);
        assert_eq!(queued.changes_for(1).collect::<Vec<_>>(), [Add(9)], "number 4 is still queued");
    }
}
