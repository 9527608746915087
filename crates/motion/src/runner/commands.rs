//! The API's end of the motion thread's command queue. The tasks the motion thread is done
//! with come back whole through a second queue and are freed here, on the API's side:
//! never on the motion thread.

use crate::engine::{MotionTask, ToEngine};

pub struct Commands {
    queue: rtrb::Producer<ToEngine>,
    retired: rtrb::Consumer<Box<MotionTask>>,
}

impl Commands {
    pub(super) fn new(queue: rtrb::Producer<ToEngine>, retired: rtrb::Consumer<Box<MotionTask>>) -> Commands {
        Commands { queue, retired }
    }

    /// Queue a command for the next motion cycle; a full queue gives it back.
    pub fn push(&mut self, command: ToEngine) -> Result<(), ToEngine> {
        // Freeing the ended tasks first keeps their queue within its capacity (every task
        // that can be queued or running at once), so the motion thread never waits on it.
        while self.retired.pop().is_ok() {}
        self.queue.push(command).map_err(|rtrb::PushError::Full(command)| command)
    }
}
