//! Each actuator's answers (`.../Ack`, `.../Nack`) as the cycle counts them: what every
//! actuator's device answered alike, counted once (one frame or map carries every
//! actuator: the usual case), plus what each answered on its own. A cycle publishes the
//! totals only when they changed, and without reading a per-actuator count that was
//! never used.

/// Which totals changed since [`AnswerCounts::take_changes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerChanges {
    pub acks: bool,
    pub nacks: bool,
}

/// The answers counted since the start, per actuator.
#[derive(Debug, Clone)]
pub struct AnswerCounts {
    /// What every actuator's device answered alike: acknowledged writes, missed ones.
    every_acks: u64,
    every_nacks: u64,
    /// What each actuator's device answered on its own, beside `every_*`.
    own_acks: Box<[u64]>,
    own_nacks: Box<[u64]>,
    /// Some actuator has answers of its own: its totals are not the shared ones.
    own: bool,
    changes: AnswerChanges,
}

impl AnswerCounts {
    /// No answers yet for `actuators` actuators.
    pub fn new(actuators: usize) -> AnswerCounts {
        AnswerCounts {
            every_acks: 0,
            every_nacks: 0,
            own_acks: vec![0; actuators].into(),
            own_nacks: vec![0; actuators].into(),
            own: false,
            changes: AnswerChanges::default(),
        }
    }

    /// Every actuator's device acknowledged `acks` more writes and missed `nacks` more.
    #[inline]
    pub fn add_to_every(&mut self, acks: u64, nacks: u64) {
        self.every_acks += acks;
        self.every_nacks += nacks;
        self.changes.acks |= acks > 0;
        self.changes.nacks |= nacks > 0;
    }

    /// `actuator`'s device alone acknowledged `acks` more writes and missed `nacks` more
    /// (an actuator the model does not have is ignored: nothing on the cycle thread panics).
    pub fn add(&mut self, actuator: usize, acks: u64, nacks: u64) {
        let (Some(own_acks), Some(own_nacks)) =
            (self.own_acks.get_mut(actuator), self.own_nacks.get_mut(actuator))
        else {
            return;
        };
        *own_acks += acks;
        *own_nacks += nacks;
        self.own |= acks > 0 || nacks > 0;
        self.changes.acks |= acks > 0;
        self.changes.nacks |= nacks > 0;
    }

    pub fn len(&self) -> usize {
        self.own_acks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.own_acks.is_empty()
    }

    /// Every actuator's acknowledged writes, in order.
    pub fn acks(&self) -> impl Iterator<Item = u64> + '_ {
        totals(self.every_acks, &self.own_acks, self.own)
    }

    /// Every actuator's missed writes, in order.
    pub fn nacks(&self) -> impl Iterator<Item = u64> + '_ {
        totals(self.every_nacks, &self.own_nacks, self.own)
    }

    /// Which totals changed since the last call.
    pub fn take_changes(&mut self) -> AnswerChanges {
        std::mem::take(&mut self.changes)
    }
}

/// `every` plus each actuator's own count; the own counts are not read while none was
/// ever added.
#[inline]
fn totals(every: u64, own: &[u64], any_own: bool) -> impl Iterator<Item = u64> + '_ {
    (0..own.len()).map(move |actuator| if any_own { every + own[actuator] } else { every })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_what_every_device_and_each_answered() {
        let mut counts = AnswerCounts::new(3);
        assert_eq!(counts.take_changes(), AnswerChanges::default());
        counts.add_to_every(2, 0);
        assert_eq!(counts.take_changes(), AnswerChanges { acks: true, nacks: false });
        assert_eq!(counts.acks().collect::<Vec<_>>(), [2, 2, 2]);
        counts.add(1, 0, 3);
        counts.add(7, 5, 5);
        assert_eq!(counts.take_changes(), AnswerChanges { acks: false, nacks: true });
        assert_eq!(counts.nacks().collect::<Vec<_>>(), [0, 3, 0]);
        counts.add_to_every(1, 1);
        assert_eq!(counts.acks().collect::<Vec<_>>(), [3, 3, 3]);
        assert_eq!(counts.nacks().collect::<Vec<_>>(), [1, 4, 1]);
        counts.add_to_every(0, 0);
        counts.take_changes();
        assert_eq!(counts.take_changes(), AnswerChanges::default(), "nothing new: nothing to publish");
    }
}
