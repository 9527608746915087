//! Buffer lengths bounded before a request is applied: what a group of commands does to
//! an actuator's length at most, and the peak a request reaches given what is queued
//! before it. Used by the producers' check and by the core's own.

use super::UpdateType;

/// What one group of commands does to a buffer's length, at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthChange {
    /// `ClearAll`: afterwards the buffer holds exactly these commands.
    Reset(usize),
    /// `Merge`, `ClearAfter`, `ClearBefore`: at most this many more. What they clear
    /// depends on the buffer when the cycle applies them, which a producer cannot see.
    Add(usize),
}

impl LengthChange {
    pub fn of(update: UpdateType, count: usize) -> LengthChange {
        match update {
            UpdateType::ClearAll => LengthChange::Reset(count),
            UpdateType::Merge | UpdateType::ClearAfter | UpdateType::ClearBefore => LengthChange::Add(count),
        }
    }

    /// The commands this group itself brings.
    pub fn count(self) -> usize {
        match self {
            LengthChange::Reset(count) | LengthChange::Add(count) => count,
        }
    }

    /// The length after this group, at most, from a buffer of `length`.
    pub fn after(self, length: usize) -> usize {
        match self {
            LengthChange::Reset(count) => count,
            LengthChange::Add(count) => length + count,
        }
    }
}

/// The most commands one actuator holds at any step of applying a new request.
///
/// `start` is the buffer's length as last published; `queued` the changes this producer
/// queued before (applied in order, before the new ones); `new` the request's own groups
/// for this actuator, in order; `others` the commands other producers queued for it,
/// which the cycle may apply before or after: counted at every step, as if after.
pub fn peak(
    start: usize,
    queued: impl IntoIterator<Item = LengthChange>,
    new: impl IntoIterator<Item = LengthChange>,
    others: usize,
) -> usize {
    let mut length = queued.into_iter().fold(start, |length, change| change.after(length));
    let mut peak = 0;
    for change in new {
        length = change.after(length);
        peak = peak.max(length);
    }
    peak + others
}

#[cfg(test)]
mod tests {
    use super::LengthChange::{Add, Reset};
    use super::*;

    #[test]
    fn clear_all_counts_only_what_it_brings() {
        assert_eq!(peak(4096, [], [Reset(1)], 0), 1, "a full buffer cleared by the request itself");
        assert_eq!(peak(4096, [Add(10), Add(5)], [Reset(3)], 0), 3, "queued commands are cleared too");
        assert_eq!(peak(0, [], [Reset(3)], 7), 10, "another producer's commands may come after");
    }

    #[test]
    fn other_updates_count_everything_queued() {
        assert_eq!(peak(100, [Add(10)], [Add(5)], 0), 115);
        assert_eq!(peak(100, [Reset(2)], [Add(5)], 0), 7, "a queued ClearAll empties the buffer first");
        assert_eq!(peak(100, [Reset(2), Add(4)], [Add(5)], 3), 14);
    }

    #[test]
    fn several_groups_for_one_actuator_peak_at_their_worst_step() {
        assert_eq!(peak(4000, [], [Add(100), Reset(1)], 0), 4100, "the Merge overflows before the clear");
        assert_eq!(peak(4096, [], [Reset(1), Add(100)], 0), 101);
        assert_eq!(peak(10, [], [Reset(50), Reset(2)], 0), 50);
    }

    #[test]
    fn update_types_map_to_changes() {
        assert_eq!(LengthChange::of(UpdateType::ClearAll, 3), Reset(3));
        for update in [UpdateType::Merge, UpdateType::ClearAfter, UpdateType::ClearBefore] {
            assert_eq!(LengthChange::of(update, 3), Add(3));
        }
        assert_eq!(Reset(3).count(), 3);
    }
}
