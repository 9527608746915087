//! Deterministic noise, so that simulated runs repeat exactly.

/// A xorshift generator of values in [-1, 1).
#[derive(Debug, Clone)]
pub struct Noise {
    state: u64,
}

impl Default for Noise {
    fn default() -> Noise {
        Noise { state: 0x9E37_79B9_7F4A_7C15 }
    }
}

impl Noise {
    /// The next value, in [-1, 1).
    pub fn draw(&mut self) -> f64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}
