//! A Cartesian path in the motion cycle: key targets at times from its start, followed from
//! where the effector was when it started, each segment a straight line (the rotation
//! turning about one axis) on a smooth profile that starts and stops at rest at every key,
//! as ALMotion's joint key frames do. Its keys live in storage reserved at start.

use naobroker_kinematics::transform::between;
use naobroker_kinematics::Transform;

/// The most keys a path holds: ALMotion's bound on a Cartesian path's points.
pub const MAX_PATH_KEYS: usize = 200;

/// A key past [`MAX_PATH_KEYS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathFull;

/// Keys `(time s, target)`, times increasing, and the start they are followed from.
#[derive(Debug, Clone)]
pub struct Path {
    start: Transform,
    keys: Vec<(f64, Transform)>,
}

impl Default for Path {
    fn default() -> Path {
        Path::new()
    }
}

impl Path {
    /// An empty path, its storage reserved (allocates once).
    pub fn new() -> Path {
        Path { start: Transform::IDENTITY, keys: Vec::with_capacity(MAX_PATH_KEYS) }
    }

    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Add a key; times are the caller's to keep increasing.
    pub fn push(&mut self, time: f64, target: Transform) -> Result<(), PathFull> {
        if self.keys.len() == MAX_PATH_KEYS {
            return Err(PathFull);
        }
        self.keys.push((time, target));
        Ok(())
    }

    /// Take `other`'s keys (no allocation: both hold [`MAX_PATH_KEYS`]).
    pub fn copy_from(&mut self, other: &Path) {
        self.keys.clear();
        self.keys.extend_from_slice(&other.keys);
        self.start = other.start;
    }

    /// Where the path starts from.
    pub fn set_start(&mut self, start: Transform) {
        self.start = start;
    }

    /// Every key's target passed through `change` (an axis mask keeping some of the start's
    /// components).
    pub fn map_targets(&mut self, change: impl Fn(&Transform) -> Transform) {
        for (_, target) in &mut self.keys {
            *target = change(target);
        }
    }

    /// The last key's time (s); 0 for an empty path.
    pub fn duration(&self) -> f64 {
        self.keys.last().map_or(0.0, |(time, _)| *time)
    }

    /// The target `elapsed` s after the start.
    pub fn at(&self, elapsed: f64) -> Transform {
        let mut from = (0.0, self.start);
        for &(time, target) in &self.keys {
            if elapsed < time {
                let fraction = ((elapsed - from.0) / (time - from.0)).clamp(0.0, 1.0);
                return between(&from.1, &target, smooth(fraction));
            }
            from = (time, target);
        }
        from.1
    }
}

/// Smoothstep: from rest to rest.
pub(crate) fn smooth(fraction: f64) -> f64 {
    fraction * fraction * (3.0 - 2.0 * fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_passes_each_key_at_its_time_at_rest() {
        let mut path = Path::new();
        path.set_start(Transform::IDENTITY);
        path.push(1.0, Transform::translation([0.1, 0.0, 0.0])).unwrap();
        path.push(3.0, Transform::from_position6d([0.1, 0.2, 0.0, 0.0, 0.0, 1.0])).unwrap();
        assert_eq!(path.at(0.0), Transform::IDENTITY);
        assert!((path.at(0.5).translation[0] - 0.05).abs() < 1e-12, "halfway at half time");
        assert!((path.at(0.99).translation[0] - 0.1).abs() < 1e-4, "slows into the key");
        assert_eq!(path.at(1.0).translation, [0.1, 0.0, 0.0]);
        let middle = path.at(2.0).to_position6d();
        assert!((middle[1] - 0.1).abs() < 1e-12 && (middle[5] - 0.5).abs() < 1e-9, "{middle:?}");
        assert_eq!(path.at(5.0).to_position6d()[1], 0.2);
        assert_eq!(path.duration(), 3.0);
    }

    #[test]
    fn a_path_holds_its_bound_of_keys() {
        let mut path = Path::new();
        for key in 0..MAX_PATH_KEYS {
            path.push(key as f64 + 1.0, Transform::IDENTITY).unwrap();
        }
        assert_eq!(path.push(1000.0, Transform::IDENTITY), Err(PathFull));
    }
}
