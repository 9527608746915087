//! Seeded randomness (SplitMix64), and the run's size: cases, seed and limits.

use naobroker_protocol::DecodeLimits;

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub(crate) fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// A length, mostly small, sometimes up to `max`.
    pub(crate) fn length(&mut self, max: usize) -> usize {
        let at_most = |n: usize| n.min(max + 1);
        match self.below(8) {
            0..=4 => self.below(at_most(8)),
            5 | 6 => self.below(at_most(64)),
            _ => self.below(max + 1),
        }
    }
}

/// Cases per family: a few seconds in CI unless `NAOBROKER_FUZZ_CASES` asks for more.
pub(crate) fn cases() -> usize {
    std::env::var("NAOBROKER_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000)
}

/// The run's seed: fixed in CI, so that a failure there reproduces anywhere.
pub(crate) fn seed() -> u64 {
    std::env::var("NAOBROKER_FUZZ_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x6e61_6f62_726f_6b72)
}

/// The default limits, with frames capped where the generators can cross the cap.
pub(crate) fn limits() -> DecodeLimits {
    DecodeLimits { max_frame_bytes: 1 << 20, ..DecodeLimits::default() }
}
