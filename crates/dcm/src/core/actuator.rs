//! One actuator's timed-command buffer and the seed's interpolation algorithm, cycle by
//! cycle (interpolated devices, and triggers that apply past commands once).

use std::collections::VecDeque;

use super::UpdateType;
use crate::time::{elapsed, is_before, DcmTime};

/// A target value for an actuator at a DCM time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimedCommand {
    pub time: DcmTime,
    pub value: f64,
}

/// One actuator's timed-command buffer and the state of the seed's algorithm.
#[derive(Debug, Clone)]
pub struct Actuator {
    /// A copy of the buffer's first command: most cycles only need it, and it sits
    /// in the dense actuator array while the buffer lives elsewhere on the heap.
    next: Option<TimedCommand>,
    commands: VecDeque<TimedCommand>,
    trigger: bool,
    /// `sendCommandDouble`: the last computed command, unrounded.
    send_double: f64,
    /// `lastCommandValue` / `lastCommandTime`: the last consumed timed command.
    last_value: f64,
    last_time: DcmTime,
    /// `lastCycleTime`.
    last_cycle: DcmTime,
}

impl Actuator {
    pub fn new(trigger: bool, initial: f64, start: DcmTime, capacity: usize) -> Actuator {
        Actuator {
            next: None,
            commands: VecDeque::with_capacity(capacity),
            trigger,
            send_double: initial,
            last_value: initial,
            last_time: start,
            last_cycle: start,
        }
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    pub fn commands(&self) -> impl Iterator<Item = &TimedCommand> {
        self.commands.iter()
    }

    /// Index of the first buffered command not before `time`.
    fn position(&self, time: DcmTime) -> usize {
        self.commands.partition_point(|c| is_before(c.time, time))
    }

    /// The range of existing commands an update deletes, given the new commands
    /// (sorted, distinct times).
    fn cleared(&self, update: UpdateType, new: &[TimedCommand]) -> std::ops::Range<usize> {
        let (Some(first), Some(last)) = (new.first(), new.last()) else {
            return match update {
                UpdateType::ClearAll => 0..self.commands.len(),
                _ => 0..0,
            };
        };
        match update {
            UpdateType::Merge => 0..0,
            UpdateType::ClearAll => 0..self.commands.len(),
            // Existing commands after the soonest new one.
            UpdateType::ClearAfter => {
                let from = self.commands.partition_point(|c| !is_before(first.time, c.time));
                from..self.commands.len()
            }
            // Existing commands before the latest new one (the mirror of ClearAfter).
            UpdateType::ClearBefore => 0..self.position(last.time),
        }
    }

    /// How many commands the buffer would hold after `apply(update, new)`.
    pub fn len_after(&self, update: UpdateType, new: &[TimedCommand]) -> usize {
        let cleared = self.cleared(update, new);
        let kept = self.commands.len() - cleared.len();
        let duplicates = new
            .iter()
            .filter(|command| {
                let at = self.position(command.time);
                at < self.commands.len() && self.commands[at].time == command.time && !cleared.contains(&at)
            })
            .count();
        kept + new.len() - duplicates
    }

    /// Apply an update with new commands sorted by time, times distinct. A command at
    /// the same time as a buffered one replaces it: the later-sent wins.
    /// The caller checks capacity first (`len_after`), so nothing allocates here.
    pub fn apply(&mut self, update: UpdateType, new: &[TimedCommand]) {
        let cleared = self.cleared(update, new);
        self.commands.drain(cleared);
        for command in new {
            let at = self.position(command.time);
            match self.commands.get_mut(at) {
                Some(existing) if existing.time == command.time => existing.value = command.value,
                _ => self.commands.insert(at, *command),
            }
        }
        self.next = self.commands.front().copied();
    }

    fn consume(&mut self, command: TimedCommand) {
        self.send_double = command.value;
        self.last_value = command.value;
        self.last_time = command.time;
        self.commands.pop_front();
        self.next = self.commands.front().copied();
    }

    /// One cycle of the seed's algorithm at `now`. Returns the value to send (before
    /// rounding) and, for a trigger actuator, whether a command was applied.
    pub fn cycle(&mut self, now: DcmTime) -> (f64, bool) {
        if self.trigger {
            let mut fired = false;
            while let Some(command) = self.next {
                if is_before(now, command.time) {
                    break;
                }
                self.consume(command);
                fired = true;
            }
            self.last_cycle = now;
            return (self.send_double, fired);
        }
        while let Some(command) = self.next {
            if !is_before(now, command.time) {
                // In the past or right now: apply it and forget it.
                self.consume(command);
                if command.time == now {
                    break;
                }
            } else {
                // In the future: interpolate from the latest known point.
                let (from_time, from_value) = if is_before(self.last_cycle, self.last_time) {
                    (self.last_time, self.last_value)
                } else {
                    (self.last_cycle, self.send_double)
                };
                let dt1 = elapsed(from_time, now) as f64;
                let dt2 = elapsed(from_time, command.time) as f64;
                self.send_double = (command.value - from_value) * dt1 / dt2 + from_value;
                break;
            }
        }
        self.last_cycle = now;
        (self.send_double, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(pairs: &[(DcmTime, f64)]) -> Vec<TimedCommand> {
        pairs.iter().map(|&(time, value)| TimedCommand { time, value }).collect()
    }

    fn times(actuator: &Actuator) -> Vec<DcmTime> {
        actuator.commands().map(|c| c.time).collect()
    }

    #[test]
    fn update_types_follow_the_seed() {
        let base = commands(&[(10, 1.0), (20, 2.0), (30, 3.0), (40, 4.0)]);
        let new = commands(&[(25, 9.0), (35, 9.0)]);
        let mut a = Actuator::new(false, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &base);
        a.apply(UpdateType::Merge, &new);
        assert_eq!(times(&a), [10, 20, 25, 30, 35, 40]);

        let mut a = Actuator::new(false, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &base);
        a.apply(UpdateType::ClearAll, &new);
        assert_eq!(times(&a), [25, 35]);

        let mut a = Actuator::new(false, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &base);
        a.apply(UpdateType::ClearAfter, &new);
        assert_eq!(times(&a), [10, 20, 25, 35]);

        let mut a = Actuator::new(false, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &base);
        a.apply(UpdateType::ClearBefore, &new);
        assert_eq!(times(&a), [25, 35, 40]);
    }

    #[test]
    fn same_time_later_sent_wins() {
        let mut a = Actuator::new(false, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &commands(&[(10, 1.0)]));
        assert_eq!(a.len_after(UpdateType::Merge, &commands(&[(10, 2.0)])), 1);
        a.apply(UpdateType::Merge, &commands(&[(10, 2.0)]));
        assert_eq!(a.commands().copied().collect::<Vec<_>>(), commands(&[(10, 2.0)]));
    }

    #[test]
    fn trigger_applies_past_commands_once_and_ignores_future_ones() {
        let mut a = Actuator::new(true, 0.0, 0, 16);
        a.apply(UpdateType::Merge, &commands(&[(15, 1.0), (35, 2.0)]));
        assert_eq!(a.cycle(10), (0.0, false));
        assert_eq!(a.cycle(20), (1.0, true));
        assert_eq!(a.cycle(30), (1.0, false));
        assert_eq!(a.cycle(40), (2.0, true));
    }

    #[test]
    fn buffers_sort_across_the_rollover() {
        let mut a = Actuator::new(false, 0.0, i32::MAX - 50, 16);
        a.apply(UpdateType::Merge, &commands(&[(i32::MIN + 10, 2.0), (i32::MAX - 10, 1.0)]));
        assert_eq!(times(&a), [i32::MAX - 10, i32::MIN + 10]);
    }
}
