//! Every device's conversion (gain, offset), kept as a two-byte code into the few distinct
//! conversions a robot has (the NAO V6: four for its 140 actuators, one for its 136
//! sensors): a cycle reads 2 bytes per device and a handful of conversions instead of 16
//! bytes per device. A calibration changes one device's without allocating.

use naobroker_robot::device::Conversion;

/// Each device's conversion, by device index.
#[derive(Debug, Clone)]
pub(crate) struct Conversions {
    /// Per device: its conversion's index in `distinct`.
    codes: Box<[u16]>,
    /// The conversions in use (and some no device uses any more), at most one per device:
    /// preallocated to that.
    distinct: Vec<Conversion>,
}

/// The same conversion to the bit (`-0.0` is not `0.0` as an offset: `x - offset` differs).
fn same(a: Conversion, b: Conversion) -> bool {
    a.gain.to_bits() == b.gain.to_bits() && a.offset.to_bits() == b.offset.to_bits()
}

impl Conversions {
    /// At most 65 536 devices (a description has a few hundred).
    pub(crate) fn new(all: impl ExactSizeIterator<Item = Conversion>) -> Conversions {
        let devices = all.len();
        assert!(devices <= usize::from(u16::MAX) + 1, "{devices} devices: at most 65 536 have conversions");
        let mut distinct: Vec<Conversion> = Vec::with_capacity(devices);
        let codes = all
            .map(|conversion| match distinct.iter().position(|&known| same(known, conversion)) {
                Some(code) => code as u16,
                None => {
                    distinct.push(conversion);
                    (distinct.len() - 1) as u16
                }
            })
            .collect();
        Conversions { codes, distinct }
    }

    #[inline]
    pub(crate) fn get(&self, device: usize) -> Conversion {
        self.distinct[usize::from(self.codes[device])]
    }

    /// Every device's conversion, in order.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = Conversion> + '_ {
        self.codes.iter().map(|&code| self.distinct[usize::from(code)])
    }

    /// Per device, in order: its conversion's code, for [`Conversions::of_code`].
    #[inline]
    pub(crate) fn codes(&self) -> &[u16] {
        &self.codes
    }

    /// The conversion a device of this code has.
    #[inline]
    pub(crate) fn of_code(&self, code: u16) -> Conversion {
        self.distinct[usize::from(code)]
    }

    fn used_by_another(&self, code: usize, device: usize) -> bool {
        self.codes.iter().enumerate().any(|(other, &used)| other != device && usize::from(used) == code)
    }

    fn used(&self, code: usize) -> bool {
        self.codes.iter().any(|&used| usize::from(used) == code)
    }

    /// `device`'s new conversion, without allocating: a known one is shared; else the
    /// device's own entry is rewritten when no other device uses it, or an entry no device
    /// uses, or a new one (there is room: every entry is in use and one by two devices, so
    /// there are fewer entries than devices).
    pub(crate) fn set(&mut self, device: usize, conversion: Conversion) {
        let code = match self.distinct.iter().position(|&known| same(known, conversion)) {
            Some(code) => code,
            None => {
                let own = usize::from(self.codes[device]);
                let unused = || (0..self.distinct.len()).find(|&code| !self.used(code));
                if !self.used_by_another(own, device) {
                    own
                } else if let Some(unused) = unused() {
                    unused
                } else {
                    self.distinct.push(conversion);
                    self.distinct.len() - 1
                }
            }
        };
        self.distinct[code] = conversion;
        self.codes[device] = code as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversion(gain: f64, offset: f64) -> Conversion {
        Conversion { gain, offset }
    }

    fn all(conversions: &Conversions) -> Vec<(f64, f64)> {
        conversions.iter().map(|c| (c.gain, c.offset)).collect()
    }

    #[test]
    fn devices_share_their_conversions_and_change_one_at_a_time() {
        let a = conversion(255.0, 0.0);
        let b = conversion(4096.0, 0.0);
        let mut conversions = Conversions::new([a, b, a, a].into_iter());
        assert_eq!(conversions.distinct.len(), 2);
        conversions.set(2, conversion(2.0, 1.0));
        assert_eq!(all(&conversions), [(255.0, 0.0), (4096.0, 0.0), (2.0, 1.0), (255.0, 0.0)]);
        // Its own entry, used by no other device, is rewritten.
        conversions.set(2, conversion(3.0, 1.0));
        assert_eq!(conversions.get(2), conversion(3.0, 1.0));
        assert_eq!(conversions.distinct.len(), 3);
        // A known conversion is shared; the entry left unused is taken next.
        conversions.set(2, b);
        conversions.set(0, conversion(5.0, 0.0));
        assert_eq!(conversions.distinct.len(), 3);
        assert_eq!(all(&conversions), [(5.0, 0.0), (4096.0, 0.0), (4096.0, 0.0), (255.0, 0.0)]);
        // -0.0 and 0.0 are different offsets.
        conversions.set(3, conversion(255.0, -0.0));
        assert_eq!(conversions.get(3).offset.to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    #[should_panic(expected = "65537 devices: at most 65 536 have conversions")]
    fn more_devices_than_codes_are_refused() {
        Conversions::new((0..65_537).map(|_| conversion(1.0, 0.0)));
    }

    #[test]
    fn as_many_devices_as_codes_are_taken() {
        let mut conversions = Conversions::new((0..65_536).map(|_| conversion(1.0, 0.0)));
        conversions.set(65_535, conversion(2.0, 0.0));
        assert_eq!(conversions.codes()[65_535], 1);
        assert_eq!(conversions.get(65_535), conversion(2.0, 0.0));
    }

    #[test]
    fn every_device_different_never_grows_past_one_entry_each() {
        let mut conversions = Conversions::new((0..4).map(|_| conversion(1.0, 0.0)));
        let capacity = conversions.distinct.capacity();
        for round in 0..50 {
            for device in 0..4 {
                conversions.set(device, conversion(1.0, f64::from(round * 4 + device as i32)));
            }
            let expected: Vec<_> = (0..4).map(|device| (1.0, f64::from(round * 4 + device))).collect();
            assert_eq!(all(&conversions), expected);
        }
        assert!(conversions.distinct.len() <= 4);
        assert_eq!(conversions.distinct.capacity(), capacity, "no allocation");
    }
}
