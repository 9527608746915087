//! Joint trajectories, as pure functions of time since the task started (seconds).

/// How one joint moves during a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Track {
    /// Toward a target at a constant speed (rad/s): `setAngles`, `changeAngles`.
    Toward { target: f64, speed: f64 },
    /// A smooth curve through key frames, from the start value at t = 0. `times`
    /// strictly increase and are > 0. Endpoints and key-frame times are exact.
    Keys { times: Vec<f64>, values: Vec<f64> },
    /// NAOqi's Bezier key frames: each key has an in and an out handle
    /// `(dTime, dValue)` relative to the key.
    Bezier { times: Vec<f64>, values: Vec<f64>, handles: Vec<[(f64, f64); 2]> },
}

impl Track {
    /// Seconds the track lasts (`Toward` lasts until it arrives: infinite here).
    pub fn duration(&self) -> f64 {
        match self {
            Track::Toward { .. } => f64::INFINITY,
            Track::Keys { times, .. } | Track::Bezier { times, .. } => times.last().copied().unwrap_or(0.0),
        }
    }

    /// Value at `t` seconds, starting from `start` (the value when the task began) and
    /// from `current` (the value last commanded, for `Toward`), `dt` seconds per cycle.
    pub fn value(&self, start: f64, current: f64, t: f64, dt: f64) -> f64 {
        match self {
            Track::Toward { target, speed } => {
                // Exactly on the target once within a step (`setStiffnesses` is one step).
                let (step, gap) = (speed * dt, target - current);
                if gap.abs() <= step {
                    *target
                } else {
                    current + step.copysign(gap)
                }
            }
            Track::Keys { times, values } => keys(start, times, values, t),
            Track::Bezier { times, values, handles } => bezier(start, times, values, handles, t),
        }
    }
}

/// Piecewise cubic Hermite through (0, start) and the key frames, with zero speed at
/// both ends and, inside, tangents that never overshoot (Fritsch–Carlson): smooth,
/// monotone between keys, exact at every key.
fn keys(start: f64, times: &[f64], values: &[f64], t: f64) -> f64 {
    let n = times.len();
    if n == 0 {
        return start;
    }
    let time = |i: usize| if i == 0 { 0.0 } else { times[i - 1] };
    let value = |i: usize| if i == 0 { start } else { values[i - 1] };
    if t <= 0.0 {
        return start;
    }
    if t >= time(n) {
        return value(n);
    }
    let segment = (1..=n).find(|&i| t < time(i)).unwrap_or(n) - 1;
    let slope = |i: usize| (value(i + 1) - value(i)) / (time(i + 1) - time(i));
    let tangent = |i: usize| {
        if i == 0 || i == n {
            return 0.0;
        }
        let (before, after) = (slope(i - 1), slope(i));
        if before * after <= 0.0 {
            0.0
        } else {
            2.0 / (1.0 / before + 1.0 / after)
        }
    };
    let (t0, t1) = (time(segment), time(segment + 1));
    let h = t1 - t0;
    let s = (t - t0) / h;
    let (s2, s3) = (s * s, s * s * s);
    (2.0 * s3 - 3.0 * s2 + 1.0) * value(segment)
        + (s3 - 2.0 * s2 + s) * h * tangent(segment)
        + (-2.0 * s3 + 3.0 * s2) * value(segment + 1)
        + (s3 - s2) * h * tangent(segment + 1)
}

fn bezier(start: f64, times: &[f64], values: &[f64], handles: &[[(f64, f64); 2]], t: f64) -> f64 {
    let n = times.len();
    if n == 0 || t <= 0.0 {
        return start;
    }
    if t >= times[n - 1] {
        return values[n - 1];
    }
    let k = times.iter().position(|&time| t < time).unwrap_or(n - 1);
    let (p0, p1) = if k == 0 {
        ((0.0, start), (0.0, start))
    } else {
        let (dt, dv) = handles[k - 1][1];
        ((times[k - 1], values[k - 1]), (times[k - 1] + dt, values[k - 1] + dv))
    };
    let (dt, dv) = handles[k][0];
    let p3 = (times[k], values[k]);
    let p2 = (times[k] + dt, values[k] + dv);
    let point = |s: f64, a: f64, b: f64, c: f64, d: f64| {
        let u = 1.0 - s;
        u * u * u * a + 3.0 * u * u * s * b + 3.0 * u * s * s * c + s * s * s * d
    };
    // x(s) increases with s for sane handles: find s with x(s) = t by bisection.
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (low + high);
        if point(mid, p0.0, p1.0, p2.0, p3.0) < t {
            low = mid;
        } else {
            high = mid;
        }
    }
    point(0.5 * (low + high), p0.1, p1.1, p2.1, p3.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_exact_smooth_and_do_not_overshoot() {
        let track = Track::Keys { times: vec![1.0, 2.0], values: vec![1.0, 0.5] };
        assert_eq!(track.value(0.0, 0.0, 0.0, 0.02), 0.0);
        assert_eq!(track.value(0.0, 0.0, 1.0, 0.02), 1.0);
        assert_eq!(track.value(0.0, 0.0, 2.0, 0.02), 0.5);
        assert_eq!(track.value(0.0, 0.0, 5.0, 0.02), 0.5);
        let samples: Vec<f64> = (0..=200).map(|i| track.value(0.0, 0.0, f64::from(i) * 0.01, 0.02)).collect();
        assert!(samples.iter().all(|&v| (0.0..=1.0).contains(&v)), "no overshoot");
        // Zero speed at the start and the end, no jump anywhere.
        assert!(samples[1] - samples[0] < 0.001 && (samples[200] - samples[199]).abs() < 0.001);
        assert!(samples.windows(2).all(|w| (w[1] - w[0]).abs() < 0.03));
    }

    #[test]
    fn toward_moves_at_its_speed_and_stops_on_the_target() {
        let track = Track::Toward { target: 1.0, speed: 2.0 };
        assert!((track.value(0.0, 0.0, 0.0, 0.02) - 0.04).abs() < 1e-12);
        assert_eq!(track.value(0.0, 0.99, 0.0, 0.02), 1.0);
    }

    #[test]
    fn bezier_passes_through_its_keys() {
        let track = Track::Bezier {
            times: vec![1.0, 2.0],
            values: vec![1.0, 0.0],
            handles: vec![[(-0.3, 0.0), (0.3, 0.0)], [(-0.3, 0.0), (0.3, 0.0)]],
        };
        assert!((track.value(0.0, 0.0, 1.0, 0.02) - 1.0).abs() < 1e-9);
        assert_eq!(track.value(0.0, 0.0, 2.0, 0.02), 0.0);
        let mid = track.value(0.0, 0.0, 1.5, 0.02);
        assert!((mid - 0.5).abs() < 1e-6, "symmetric handles cross halfway: {mid}");
    }
}
