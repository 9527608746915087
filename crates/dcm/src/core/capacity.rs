//! Buffer lengths bounded before a request is applied: what a group of commands does to
//! an actuator's length at most. Used by the producers' check (`cycle/admission.rs`) and
//! by the core's own.

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

#[cfg(test)]
mod tests {
    use super::LengthChange::{Add, Reset};
    use super::*;

    #[test]
    fn update_types_map_to_changes() {
        assert_eq!(LengthChange::of(UpdateType::ClearAll, 3), Reset(3));
        for update in [UpdateType::Merge, UpdateType::ClearAfter, UpdateType::ClearBefore] {
            assert_eq!(LengthChange::of(update, 3), Add(3));
        }
        assert_eq!(Reset(3).count(), 3);
    }
}
