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

    /// Every queued change, in the order the cycle applies them.
    pub(crate) fn changes(&self) -> impl Iterator<Item = &(usize, LengthChange)> + '_ {
        self.requests.iter().flat_map(|(_, changes)| changes.iter())
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
        let changes = |queued: &Queued| queued.changes().copied().collect::<Vec<_>>();
        assert_eq!(changes(&queued), [(0, Add(3)), (1, Add(1)), (0, Reset(2)), (0, Add(4))]);
        queued.forget_applied(1);
        assert_eq!(changes(&queued), [(0, Reset(2)), (0, Add(4))]);
        queued.forget_applied(3);
        assert_eq!(changes(&queued), []);
        queued.push(vec![(1, Add(9))]);
        assert_eq!(changes(&queued), [(1, Add(9))], "number 4 is still queued");
    }
}
