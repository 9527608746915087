//! What the API set and the motion thread has not applied yet. The motion thread stores
//! the stiffness it commands at the end of each cycle; `getStiffnesses` right after
//! `setStiffnesses`, before that cycle, answers what the call set. Commands are counted
//! on both sides (the thread publishes how many it had taken in when it stored its
//! values): a value set by command n is answered until the thread has applied command n,
//! then the thread's own value, so no store of an older value can hide it.

use std::cell::{Cell, RefCell};

use crate::runner::MotionShared;

pub(super) struct Unapplied {
    /// Commands pushed to the motion thread so far.
    sent: Cell<u64>,
    /// Per motor: the command that set its stiffness (its count, from 1), and the value.
    stiffness: RefCell<Vec<(u64, f64)>>,
}

impl Unapplied {
    pub(super) fn new(motors: usize) -> Unapplied {
        Unapplied { sent: Cell::new(0), stiffness: RefCell::new(vec![(0, 0.0); motors]) }
    }

    /// A command went to the motion thread.
    pub(super) fn command_sent(&self) {
        self.sent.set(self.sent.get() + 1);
    }

    /// The last command sent sets `motor`'s stiffness to `value`.
    pub(super) fn stiffness_set(&self, motor: usize, value: f64) {
        self.stiffness.borrow_mut()[motor] = (self.sent.get(), value);
    }

    /// The stiffness commanded on `motor`: what the last call set, until the motion thread
    /// has applied it.
    pub(super) fn stiffness(&self, motor: usize, shared: &MotionShared) -> f64 {
        let (command, value) = self.stiffness.borrow()[motor];
        if shared.applied() < command {
            value
        } else {
            shared.stiffness(motor)
        }
    }
}
