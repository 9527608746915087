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

/// One actuator's timed commands, sorted by time, preallocated to its capacity, and the
/// value of the last one consumed. Apart from its actuator's state ([`Actuator`]): a cycle
/// reads it only when a command falls due (or, in the seed's algorithm, when the last
/// consumed command is after the last cycle).
#[derive(Debug, Clone)]
pub struct Buffer {
    commands: VecDeque<TimedCommand>,
    /// `lastCommandValue`: the value of the last consumed timed command (its time is the
    /// actuator's, read at every cycle).
    last_value: f64,
}

impl Buffer {
    /// An empty buffer for an actuator starting at `initial`.
    pub fn new(capacity: usize, initial: f64) -> Buffer {
        Buffer { commands: VecDeque::with_capacity(capacity), last_value: initial }
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
    /// The caller checks capacity first (`len_after`), so nothing allocates here; then
    /// tells the actuator ([`Actuator::follow`]).
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
    }
}

/// The state of the seed's algorithm for one actuator: all that a cycle reads and writes
/// while no command falls due, 32 bytes (two to a cache line), so that the cycle walks a
/// dense array of them. `lastCycleTime`, the same for every actuator, is the caller's;
/// `lastCommandValue`, read only when the last consumed command is after the last cycle, the
/// buffer's.
#[derive(Debug, Clone, Copy)]
pub struct Actuator {
    /// A copy of the buffer's first command, when there is one.
    has_next: bool,
    next_time: DcmTime,
    next_value: f64,
    trigger: bool,
    /// `sendCommandDouble`: the last computed command, unrounded.
    send_double: f64,
    /// `lastCommandTime`: the time of the last consumed timed command.
    last_time: DcmTime,
    /// Nothing buffered and nothing applied at its last cycle: every cycle sends the same
    /// value until a command or a new conversion comes.
    settled: bool,
}

impl Actuator {
    pub fn new(trigger: bool, initial: f64, start: DcmTime) -> Actuator {
        Actuator {
            has_next: false,
            next_time: start,
            next_value: initial,
            trigger,
            send_double: initial,
            last_time: start,
            settled: false,
        }
    }

    /// Its buffer changed: the buffer's first command is the next one.
    pub fn follow(&mut self, buffer: &Buffer) {
        self.settled = false;
        match buffer.commands.front() {
            Some(command) => {
                (self.has_next, self.next_time, self.next_value) = (true, command.time, command.value)
            }
            None => self.has_next = false,
        }
    }

    #[inline]
    fn next(&self) -> Option<TimedCommand> {
        self.has_next.then_some(TimedCommand { time: self.next_time, value: self.next_value })
    }

    fn consume(&mut self, command: TimedCommand, buffer: &mut Buffer) {
        self.send_double = command.value;
        buffer.last_value = command.value;
        self.last_time = command.time;
        buffer.commands.pop_front();
        self.follow(buffer);
    }

    pub fn is_trigger(&self) -> bool {
        self.trigger
    }

    /// Its output is what it was at its last cycle, whatever the time: a cycle may skip it.
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// Its output must be computed again (its conversion changed).
    pub fn unsettle(&mut self) {
        self.settled = false;
    }

    /// One cycle of the seed's algorithm at `now`, the previous one having been at
    /// `last_cycle`, taking from `buffer` the commands that fall due. Returns the value to
    /// send (before rounding) and whether a command was applied (for a trigger actuator: it
    /// fired).
    #[inline]
    pub fn cycle(&mut self, last_cycle: DcmTime, now: DcmTime, buffer: &mut Buffer) -> (f64, bool) {
        let mut applied = false;
        if self.trigger {
            while let Some(command) = self.next() {
                if is_before(now, command.time) {
                    break;
                }
                self.consume(command, buffer);
                applied = true;
            }
            self.settled = !self.has_next && !applied;
            return (self.send_double, applied);
        }
        while let Some(command) = self.next() {
            if !is_before(now, command.time) {
                // In the past or right now: apply it and forget it.
                self.consume(command, buffer);
                applied = true;
                if command.time == now {
                    break;
                }
            } else {
                // In the future: interpolate from the latest known point.
                let (from_time, from_value) = if is_before(last_cycle, self.last_time) {
                    (self.last_time, buffer.last_value)
                } else {
                    (last_cycle, self.send_double)
                };
                let dt1 = elapsed(from_time, now) as f64;
                let dt2 = elapsed(from_time, command.time) as f64;
                self.send_double = (command.value - from_value) * dt1 / dt2 + from_value;
                break;
            }
        }
        self.settled = !self.has_next && !applied;
        (self.send_double, applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(pairs: &[(DcmTime, f64)]) -> Vec<TimedCommand> {
        pairs.iter().map(|&(time, value)| TimedCommand { time, value }).collect()
    }

    fn times(buffer: &Buffer) -> Vec<DcmTime> {
        buffer.commands().map(|c| c.time).collect()
    }

    /// A buffer holding `base`, then updated with `new`.
    fn updated(base: &[TimedCommand], update: UpdateType, new: &[TimedCommand]) -> Buffer {
        let mut buffer = Buffer::new(16, 0.0);
        buffer.apply(UpdateType::Merge, base);
        buffer.apply(update, new);
        buffer
    }

    #[test]
    fn update_types_follow_the_seed() {
        let base = commands(&[(10, 1.0), (20, 2.0), (30, 3.0), (40, 4.0)]);
        let new = commands(&[(25, 9.0), (35, 9.0)]);
        assert_eq!(times(&updated(&base, UpdateType::Merge, &new)), [10, 20, 25, 30, 35, 40]);
        assert_eq!(times(&updated(&base, UpdateType::ClearAll, &new)), [25, 35]);
        assert_eq!(times(&updated(&base, UpdateType::ClearAfter, &new)), [10, 20, 25, 35]);
        assert_eq!(times(&updated(&base, UpdateType::ClearBefore, &new)), [25, 35, 40]);
    }

    #[test]
    fn same_time_later_sent_wins() {
        let mut buffer = Buffer::new(16, 0.0);
        buffer.apply(UpdateType::Merge, &commands(&[(10, 1.0)]));
        assert_eq!(buffer.len_after(UpdateType::Merge, &commands(&[(10, 2.0)])), 1);
        buffer.apply(UpdateType::Merge, &commands(&[(10, 2.0)]));
        assert_eq!(buffer.commands().copied().collect::<Vec<_>>(), commands(&[(10, 2.0)]));
    }

    #[test]
    fn trigger_applies_past_commands_once_and_ignores_future_ones() {
        let (mut a, mut buffer) = (Actuator::new(true, 0.0, 0), Buffer::new(16, 0.0));
        buffer.apply(UpdateType::Merge, &commands(&[(15, 1.0), (35, 2.0)]));
        a.follow(&buffer);
        assert_eq!(a.cycle(0, 10, &mut buffer), (0.0, false));
        assert_eq!(a.cycle(10, 20, &mut buffer), (1.0, true));
        assert_eq!(a.cycle(20, 30, &mut buffer), (1.0, false));
        assert_eq!(a.cycle(30, 40, &mut buffer), (2.0, true));
        assert!(buffer.is_empty() && !a.is_settled());
        assert_eq!(a.cycle(40, 50, &mut buffer), (2.0, false));
        assert!(a.is_settled());
    }

    #[test]
    fn buffers_sort_across_the_rollover() {
        let mut buffer = Buffer::new(16, 0.0);
        buffer.apply(UpdateType::Merge, &commands(&[(i32::MIN + 10, 2.0), (i32::MAX - 10, 1.0)]));
        assert_eq!(times(&buffer), [i32::MAX - 10, i32::MIN + 10]);
    }

    #[test]
    fn the_state_a_cycle_walks_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Actuator>(), 32);
    }
}
