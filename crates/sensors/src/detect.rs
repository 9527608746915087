//! Edge detectors run on the DCM cycle thread: thresholds with hysteresis, debouncing in
//! DCM time, chest-button click counting and the battery percentage. Plain values, no
//! allocation; each returns something only on the cycle a state changes.

use naobroker_dcm::time::{elapsed, DcmTime};

/// Where a reading's "on" state lies, with a second threshold to leave it, so that a
/// value wavering at the border does not chatter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Band {
    /// On at `on` or above; off again below `off` (`off <= on`).
    Above { on: f64, off: f64 },
    /// On below `on`; off again at `off` or above (`off >= on`).
    Below { on: f64, off: f64 },
}

impl Band {
    /// The state `value` calls for, given the state it is in.
    pub(crate) fn classify(self, state: bool, value: f64) -> bool {
        match (self, state) {
            (Band::Above { on, .. }, false) => value >= on,
            (Band::Above { off, .. }, true) => value >= off,
            (Band::Below { on, .. }, false) => value < on,
            (Band::Below { off, .. }, true) => value < off,
        }
    }
}

/// A two-state signal whose new state counts once it held for `hold_ms` of DCM time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Debounce {
    state: bool,
    /// When the readings started to differ from `state`.
    differs_since: Option<DcmTime>,
    hold_ms: i32,
}

impl Debounce {
    pub(crate) fn new(state: bool, hold_ms: i32) -> Debounce {
        Debounce { state, differs_since: None, hold_ms }
    }

    pub(crate) fn state(&self) -> bool {
        self.state
    }

    /// Feed this cycle's reading; the new state on the cycle it changes.
    pub(crate) fn update(&mut self, reading: bool, time: DcmTime) -> Option<bool> {
        if reading == self.state {
            self.differs_since = None;
            return None;
        }
        let since = *self.differs_since.get_or_insert(time);
        if elapsed(since, time) < self.hold_ms {
            return None;
        }
        self.state = reading;
        self.differs_since = None;
        Some(reading)
    }
}

/// Counts chest-button clicks: a press released within `long_ms` is a click; clicks
/// follow one another while each press comes within `window_ms` of the last release.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clicks {
    count: u8,
    pressed_at: Option<DcmTime>,
    released_at: DcmTime,
    window_ms: i32,
    long_ms: i32,
}

impl Clicks {
    pub(crate) fn new(window_ms: i32, long_ms: i32) -> Clicks {
        Clicks { count: 0, pressed_at: None, released_at: 0, window_ms, long_ms }
    }

    pub(crate) fn press(&mut self, time: DcmTime) {
        self.pressed_at = Some(time);
    }

    /// A long press ends the sequence without a click.
    pub(crate) fn release(&mut self, time: DcmTime) {
        let Some(pressed_at) = self.pressed_at.take() else { return };
        if elapsed(pressed_at, time) >= self.long_ms {
            self.count = 0;
            return;
        }
        self.count = self.count.saturating_add(1);
        self.released_at = time;
    }

    /// The number of clicks, on the first cycle past the window after the last one.
    pub(crate) fn poll(&mut self, time: DcmTime) -> Option<u8> {
        let ended =
            self.count > 0 && self.pressed_at.is_none() && elapsed(self.released_at, time) > self.window_ms;
        if !ended {
            return None;
        }
        Some(std::mem::take(&mut self.count))
    }
}

/// The battery's charge in whole percent, changed only once the reading moved more
/// than `margin` points past the half-way mark from the last percentage reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Percentage {
    percent: i32,
    margin: f64,
}

impl Percentage {
    /// `ratio`: the charge sensor's 0–1 reading.
    pub(crate) fn new(ratio: f64, margin: f64) -> Percentage {
        Percentage { percent: Self::rounded(ratio), margin }
    }

    fn rounded(ratio: f64) -> i32 {
        (ratio * 100.0).round().clamp(0.0, 100.0) as i32
    }

    pub(crate) fn percent(&self) -> i32 {
        self.percent
    }

    /// The new percentage when it changed.
    pub(crate) fn update(&mut self, ratio: f64) -> Option<i32> {
        let distance = (ratio * 100.0 - f64::from(self.percent)).abs();
        let percent = Self::rounded(ratio);
        if distance < 0.5 + self.margin || percent == self.percent {
            return None;
        }
        self.percent = percent;
        Some(percent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_leave_at_their_second_threshold() {
        let detected = Band::Below { on: 0.5, off: 0.55 };
        assert!(!detected.classify(false, 0.5));
        assert!(detected.classify(false, 0.49));
        assert!(detected.classify(true, 0.54), "still detected inside the margin");
        assert!(!detected.classify(true, 0.55));
        let contact = Band::Above { on: 1.0, off: 0.5 };
        assert!(!contact.classify(false, 0.9));
        assert!(contact.classify(false, 1.0));
        assert!(contact.classify(true, 0.5));
        assert!(!contact.classify(true, 0.49));
    }

    #[test]
    fn a_debounced_change_counts_once_it_held() {
        let mut bumper = Debounce::new(false, 20);
        assert_eq!(bumper.update(true, 100), None);
        assert_eq!(bumper.update(false, 110), None, "a bounce restarts the wait");
        assert_eq!(bumper.update(true, 120), None);
        assert_eq!(bumper.update(true, 130), None);
        assert_eq!(bumper.update(true, 140), Some(true));
        assert_eq!(bumper.update(true, 150), None, "an edge, not a level");
        assert!(bumper.state());
        let mut touch = Debounce::new(false, 0);
        assert_eq!(touch.update(true, i32::MAX), Some(true), "no hold: at once");
        let mut across = Debounce::new(false, 20);
        assert_eq!(across.update(true, i32::MAX - 5), None);
        assert_eq!(across.update(true, i32::MIN + 14), Some(true), "held 20 ms across the roll-over");
    }

    #[test]
    fn clicks_are_counted_after_the_window() {
        let mut clicks = Clicks::new(400, 1000);
        clicks.press(0);
        clicks.release(100);
        assert_eq!(clicks.poll(500), None, "the window is still open");
        clicks.press(450);
        assert_eq!(clicks.poll(900), None, "no count while pressed");
        clicks.release(550);
        assert_eq!(clicks.poll(950), None);
        assert_eq!(clicks.poll(951), Some(2));
        assert_eq!(clicks.poll(2000), None, "counted once");
        clicks.press(3000);
        clicks.release(4000);
        assert_eq!(clicks.poll(9000), None, "a long press is no click");
    }

    #[test]
    fn the_percentage_moves_by_whole_points_past_a_margin() {
        let mut charge = Percentage::new(0.5, 0.1);
        assert_eq!(charge.percent(), 50);
        assert_eq!(charge.update(0.4945), None, "0.55 points away: inside the margin");
        assert_eq!(charge.update(0.4939), Some(49));
        assert_eq!(charge.update(0.4941), None, "no chatter back");
        assert_eq!(charge.update(0.30), Some(30));
        assert_eq!(charge.update(1.2), Some(100), "clamped");
    }
}
