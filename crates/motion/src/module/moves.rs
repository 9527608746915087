//! The API side's account of the walk's moves: their ids, the one under way, who waits for
//! each, and whether the walk swings the arms.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use tokio::sync::oneshot;

use naobroker_walk::FootStep;

use crate::engine::walking::MoveOutcome;

/// The moves sent to the walk and not ended yet.
pub(super) struct Moves {
    last_id: Cell<u64>,
    /// The move the walk has now, until it ends.
    current: Cell<Option<u64>>,
    waiters: RefCell<HashMap<u64, Vec<oneshot::Sender<MoveOutcome>>>>,
    arms: Cell<[bool; 2]>,
    /// The footsteps sent since the plan was last cleared, in order: the walk's count of
    /// those it has not begun tells which are still ahead.
    footsteps: RefCell<Vec<FootStep>>,
}

impl Default for Moves {
    fn default() -> Self {
        Moves {
            last_id: Cell::new(0),
            current: Cell::new(None),
            waiters: RefCell::default(),
            arms: Cell::new([true; 2]),
            footsteps: RefCell::default(),
        }
    }
}

impl Moves {
    /// The id the next move gets.
    pub(super) fn next_id(&self) -> u64 {
        self.last_id.get() + 1
    }

    /// Move `id` went to the walk: it is the one under way.
    pub(super) fn sent(&self, id: u64) {
        self.last_id.set(id);
        self.current.set(Some(id));
    }

    pub(super) fn current(&self) -> Option<u64> {
        self.current.get()
    }

    /// Tells how move `id` ends.
    pub(super) fn wait_for(&self, id: u64) -> oneshot::Receiver<MoveOutcome> {
        let (done, ended) = oneshot::channel();
        self.waiters.borrow_mut().entry(id).or_default().push(done);
        ended
    }

    /// Move `id` ended: who waited learns how.
    pub(super) fn ended(&self, id: u64, outcome: MoveOutcome) {
        if self.current.get() == Some(id) {
            self.current.set(None);
        }
        for waiter in self.waiters.borrow_mut().remove(&id).unwrap_or_default() {
            let _ = waiter.send(outcome);
        }
    }

    /// Whether the walk swings the left and the right arm.
    pub(super) fn arms(&self) -> [bool; 2] {
        self.arms.get()
    }

    pub(super) fn set_arms(&self, arms: [bool; 2]) {
        self.arms.set(arms);
    }

    /// Footsteps sent to the walk (`clear`: instead of those before).
    pub(super) fn planned(&self, steps: &[FootStep], clear: bool) {
        let mut footsteps = self.footsteps.borrow_mut();
        if clear {
            footsteps.clear();
        }
        footsteps.extend_from_slice(steps);
    }

    /// The footstep under way (when `walking`) and those ahead, of the `ahead` the walk has not
    /// begun.
    pub(super) fn footsteps(&self, ahead: usize, walking: bool) -> (Option<FootStep>, Vec<FootStep>) {
        let footsteps = self.footsteps.borrow();
        let first_ahead = footsteps.len().saturating_sub(ahead);
        let current = (walking && first_ahead > 0).then(|| footsteps[first_ahead - 1]);
        (current, footsteps[first_ahead..].to_vec())
    }
}
