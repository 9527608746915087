//! NAOqi's rule for competing motion tasks: a blocking call (`angleInterpolation` and its
//! kin) whose joints a running blocking call's task uses "is postponed until the resource is
//! freed"; a reactive call (`setAngles`, `changeAngles`) takes them over at once
//! (`tasks.rs`), and its own task books nothing: a blocking call takes its joints over too. A
//! resource is a joint's position or its stiffness. Postponed tasks start in the order they
//! came: a later one never overtakes an earlier one waiting on the same resource.

use super::{Channel, Engine, EngineOutput, FromEngine, MotionTask};

impl Engine {
    /// A blocking call's task: started at once when its resources are free, else postponed
    /// (the API bounds how many may wait: room for them was reserved at start).
    pub(super) fn start_when_free(&mut self, task: Box<MotionTask>, output: &mut EngineOutput) {
        let full = self.postponed.len() == self.postponed.capacity();
        if full || !self.busy(&task, self.postponed.len()) {
            self.start_task(task, true, output);
        } else {
            self.postponed.push(task);
        }
    }

    /// Whether a running blocking call's task, or one postponed before `postponed[before]`,
    /// uses one of `task`'s resources.
    fn busy(&self, task: &MotionTask, before: usize) -> bool {
        let earlier = &self.postponed[..before];
        task.tracks.iter().any(|track| {
            self.owner(track.motor, track.channel).is_some_and(|index| self.is_blocking(index))
                || earlier.iter().any(|waiting| waiting.mask(track.channel) & (1 << track.motor) != 0)
        })
    }

    /// Start the postponed tasks whose resources were freed, in their order.
    pub(super) fn start_postponed(&mut self, output: &mut EngineOutput) {
        let mut index = 0;
        while index < self.postponed.len() {
            if self.running.len() < self.running.capacity() && !self.busy(&self.postponed[index], index) {
                let task = self.postponed.remove(index);
                self.start_task(task, true, output);
            } else {
                index += 1;
            }
        }
    }

    /// End the postponed tasks `ends` picks, as killed, in their order.
    pub(super) fn end_postponed(&mut self, ends: impl Fn(&MotionTask) -> bool, output: &mut EngineOutput) {
        let mut index = 0;
        while index < self.postponed.len() {
            if ends(&self.postponed[index]) {
                let task = self.postponed.remove(index);
                output.reports.push(FromEngine::Finished { id: task.id, completed: false });
                output.retired.push(task);
            } else {
                index += 1;
            }
        }
    }
}

/// Whether `task` moves or stiffens one of `motors`.
pub(super) fn uses(task: &MotionTask, motors: u64) -> bool {
    (task.mask(Channel::Position) | task.mask(Channel::Stiffness)) & motors != 0
}

#[cfg(test)]
mod tests {
    use naobroker_dcm::core::Request;

    use super::super::tests::nao_with_slots;
    use super::super::{Channel, Engine, EngineOutput, FromEngine, MotionTask, ToEngine, TrackEntry};
    use crate::trajectory::Track;

    fn keys(motor: usize, seconds: f64, value: f64) -> TrackEntry {
        let track = Track::Keys { times: vec![seconds], values: vec![value] };
        TrackEntry { motor, channel: Channel::Position, track, relative: false }
    }

    fn when_free(engine: &mut Engine, id: u64, tracks: Vec<TrackEntry>, output: &mut EngineOutput) {
        engine.command(ToEngine::StartWhenFree(Box::new(MotionTask { id, tracks })), output);
    }

    /// Motion cycles from DCM time `from`, `count` of them: the tasks that ended, in order.
    fn run(engine: &mut Engine, from: i32, count: i32) -> Vec<FromEngine> {
        let mut output = EngineOutput::default();
        for cycle in 0..count {
            engine.cycle(from + 20 * cycle, &mut Request::default(), &mut output);
        }
        output.reports.retain(|report| matches!(report, FromEngine::Finished { .. }));
        output.reports
    }

    #[test]
    fn a_task_on_busy_joints_starts_once_they_are_free_and_never_overtakes_an_earlier_one() {
        let (mut engine, body, _) = nao_with_slots();
        let (yaw, pitch) = (body.joints[0].motor, body.joints[1].motor);
        let mut output = EngineOutput::default();
        when_free(&mut engine, 1, vec![keys(yaw, 0.1, 0.3)], &mut output);
        when_free(&mut engine, 2, vec![keys(yaw, 0.1, -0.3), keys(pitch, 0.1, 0.2)], &mut output);
        // Only HeadPitch, free now: but task 2, waiting for HeadYaw, asked for it first.
        when_free(&mut engine, 3, vec![keys(pitch, 0.1, -0.2)], &mut output);
        assert!(output.reports.is_empty(), "nothing ended: {:?}", output.reports);
        assert_eq!(engine.owner(yaw, Channel::Position), Some(0));
        assert_eq!(engine.owner(pitch, Channel::Position), None, "task 3 waits behind task 2");
        // Each takes its 0.1 s (5 cycles) from the cycle after the one before ended.
        let ends: Vec<(i32, FromEngine)> = (1..=20)
            .flat_map(|cycle| run(&mut engine, 20 * cycle, 1).into_iter().map(move |report| (cycle, report)))
            .collect();
        let done = |id| FromEngine::Finished { id, completed: true };
        assert_eq!(ends, [(5, done(1)), (10, done(2)), (15, done(3))]);
    }

    #[test]
    fn a_blocking_task_takes_a_reactive_tasks_joints_at_once() {
        let (mut engine, body, _) = nao_with_slots();
        let yaw = body.joints[0].motor;
        let mut output = EngineOutput::default();
        engine.command(
            ToEngine::Start(Box::new(MotionTask { id: 1, tracks: vec![keys(yaw, 1.0, 0.3)] })),
            &mut output,
        );
        when_free(&mut engine, 2, vec![keys(yaw, 0.1, -0.3)], &mut output);
        assert_eq!(output.reports, [FromEngine::Finished { id: 1, completed: false }]);
        assert_eq!(engine.owner(yaw, Channel::Position), Some(0), "task 2 runs");
    }

    #[test]
    fn a_reactive_task_takes_over_and_kills_end_postponed_tasks() {
        let (mut engine, body, _) = nao_with_slots();
        let (yaw, pitch) = (body.joints[0].motor, body.joints[1].motor);
        let mut output = EngineOutput::default();
        when_free(&mut engine, 1, vec![keys(yaw, 1.0, 0.3)], &mut output);
        when_free(&mut engine, 2, vec![keys(yaw, 0.1, -0.3)], &mut output);
        when_free(&mut engine, 3, vec![keys(yaw, 0.1, -0.3), keys(pitch, 0.1, 0.1)], &mut output);
        engine.command(
            ToEngine::Start(Box::new(MotionTask { id: 4, tracks: vec![keys(yaw, 0.1, 0.5)] })),
            &mut output,
        );
        let killed = |id| FromEngine::Finished { id, completed: false };
        assert_eq!(output.reports, [killed(1)], "the reactive task took HeadYaw at once");
        output.reports.clear();
        engine.command(ToEngine::Kill(2), &mut output);
        engine.command(ToEngine::KillMotors(1 << pitch), &mut output);
        assert_eq!(output.reports, [killed(2), killed(3)]);
        assert_eq!(output.retired.iter().map(|task| task.id).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(run(&mut engine, 20, 6), [FromEngine::Finished { id: 4, completed: true }]);
    }
}
