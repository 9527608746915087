//! A total of the bytes connections hold for messages they have not received whole, shared
//! by every socket (and any other transport) given it: without one, each connection that
//! announced a large frame and sent it slowly held what it had sent, bounded only by the
//! number of connections.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The shared total and its limit.
#[derive(Debug)]
pub struct UnfinishedBudget {
    held: AtomicUsize,
    limit: usize,
    refusals: AtomicU64,
}

impl UnfinishedBudget {
    /// A budget of `limit` bytes over every connection that holds a share of it.
    pub fn new(limit: usize) -> Arc<UnfinishedBudget> {
        Arc::new(UnfinishedBudget {
            held: AtomicUsize::new(0),
            limit,
            refusals: AtomicU64::new(0),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held now, over every connection.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// How many times a connection asked for more than was left (and was closed).
    pub fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// One connection's share, empty until it holds something.
    pub fn share(self: &Arc<Self>) -> UnfinishedShare {
        UnfinishedShare {
            budget: Arc::clone(self),
            held: 0,
        }
    }
}

/// What one connection holds of an [`UnfinishedBudget`]; given back when dropped.
#[derive(Debug)]
pub struct UnfinishedShare {
    budget: Arc<UnfinishedBudget>,
    held: usize,
}

impl UnfinishedShare {
    /// Holds `bytes` from now on (more or fewer than before). False, with the share
    /// unchanged and the refusal counted, when the budget has not that much left.
    pub fn hold(&mut self, bytes: usize) -> bool {
        if bytes == self.held {
            return true;
        }
        if bytes < self.held {
            self.budget
                .held
                .fetch_sub(self.held - bytes, Ordering::Relaxed);
            self.held = bytes;
            return true;
        }
        let more = bytes - self.held;
        let limit = self.budget.limit;
        let taken = self
            .budget
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(more).filter(|&total| total <= limit)
            });
        if taken.is_err() {
            self.budget.refusals.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.held = bytes;
        true
    }

    pub fn held(&self) -> usize {
        self.held
    }

    pub fn limit(&self) -> usize {
        self.budget.limit
    }
}

impl Drop for UnfinishedShare {
    fn drop(&mut self) {
        self.hold(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_stay_within_the_total_and_are_given_back() {
        let budget = UnfinishedBudget::new(100);
        let mut first = budget.share();
        let mut second = budget.share();
        assert!(first.hold(60));
        assert!(!second.hold(50));
        assert_eq!((1, 60), (budget.refusals(), budget.held()));
        assert!(second.hold(40));
        assert!(first.hold(10));
        assert!(second.hold(90));
        drop(second);
        assert_eq!(10, budget.held());
        drop(first);
        assert_eq!(0, budget.held());
    }
}
