//! One producer's own requests on their way to the cycle thread, oldest first: what each
//! does to its actuators' lengths, kept until the cycle says it applied them.

use std::collections::VecDeque;

use crate::core::LengthChange;

/// A producer's requests the cycle has not applied yet. Only its producer touches it; its
/// storage is reserved at start and reused, so that queuing a request allocates nothing
/// while the queue stays within it.
#[derive(Debug, Default)]
pub(crate) struct Queued {
    /// `(sequence number, how many changes)` per request, the first sent being number 1.
    requests: VecDeque<(u64, usize)>,
    /// The length changes of every queued request, by actuator, in order.
    changes: VecDeque<(usize, LengthChange)>,
    /// The room for changes reserved at start, kept when the queue empties.
    reserved: usize,
    sent: u64,
}

impl Queued {
    pub(crate) fn with_capacity(requests: usize, changes: usize) -> Queued {
        Queued {
            requests: VecDeque::with_capacity(requests),
            changes: VecDeque::with_capacity(changes),
            reserved: changes,
            sent: 0,
        }
    }

    /// Forget the requests the cycle applied: the first `applied` ever sent.
    pub(crate) fn forget_applied(&mut self, applied: u64) {
        while let Some(&(sequence, count)) = self.requests.front() {
            if sequence > applied {
                break;
            }
            self.requests.pop_front();
            self.changes.drain(..count);
        }
        if self.requests.is_empty() && self.changes.capacity() > self.reserved {
            // A burst of large requests is over: its memory goes back.
            self.changes = VecDeque::with_capacity(self.reserved);
        }
    }

    pub(crate) fn push(&mut self, changes: &[(usize, LengthChange)]) {
        self.sent += 1;
        self.requests.push_back((self.sent, changes.len()));
        self.changes.extend(changes.iter().copied());
    }

    /// Every queued change, in the order the cycle applies them.
    pub(crate) fn changes(&self) -> impl Iterator<Item = &(usize, LengthChange)> + '_ {
        self.changes.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::LengthChange::{Add, Reset};

    #[test]
    fn applied_requests_are_forgotten_in_order() {
        let mut queued = Queued::default();
        queued.push(&[(0, Add(3)), (1, Add(1))]);
        queued.push(&[(0, Reset(2))]);
        queued.push(&[(0, Add(4))]);
        let changes = |queued: &Queued| queued.changes().copied().collect::<Vec<_>>();
        assert_eq!(changes(&queued), [(0, Add(3)), (1, Add(1)), (0, Reset(2)), (0, Add(4))]);
        queued.forget_applied(1);
        assert_eq!(changes(&queued), [(0, Reset(2)), (0, Add(4))]);
        queued.forget_applied(3);
        assert_eq!(changes(&queued), []);
        queued.push(&[(1, Add(9))]);
        assert_eq!(changes(&queued), [(1, Add(9))], "number 4 is still queued");
    }
}
