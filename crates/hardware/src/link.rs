//! The health of a link to the robot that can drop and come back (the `lola` backend's
//! socket): written by the backend on the cycle thread through atomics, read by the actor
//! side (`DCM.stats`, ALMemory's `HAL/Link/*` keys, the log), never locked.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Where the link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// No connection: none made yet, or lost; the backend tries again.
    Absent,
    /// Connected, no sensor map yet.
    Waiting,
    /// Sensor maps arrive: the DCM cycles.
    Up,
    /// Connected, but no sensor map for the stall time: no cycle runs, ALMemory keeps the
    /// last values.
    Stalled,
}

impl LinkState {
    const ALL: [LinkState; 4] = [LinkState::Absent, LinkState::Waiting, LinkState::Up, LinkState::Stalled];

    /// As ALMemory's `HAL/Link/State` and `DCM.stats` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Absent => "absent",
            LinkState::Waiting => "waiting",
            LinkState::Up => "up",
            LinkState::Stalled => "stalled",
        }
    }

    pub fn is_connected(self) -> bool {
        self != LinkState::Absent
    }

    /// The sensor values in ALMemory are not this moment's: the robot is not sending.
    pub fn is_stale(self) -> bool {
        self != LinkState::Up
    }
}

/// Why the link was last lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkLoss {
    /// Never lost.
    None,
    /// The robot closed the connection (LoLA stopped or restarted).
    Closed,
    /// Reading or writing failed (the OS error is [`LinkSnapshot::loss_error`]).
    Failed,
    /// The robot sent bytes that are no map, and the stream could not be resynchronized.
    Malformed,
    /// A sensor map did not end within the bytes a map may take.
    Oversized,
}

impl LinkLoss {
    const ALL: [LinkLoss; 5] =
        [LinkLoss::None, LinkLoss::Closed, LinkLoss::Failed, LinkLoss::Malformed, LinkLoss::Oversized];
}

/// The texts a [`LinkHealth`] keeps (LoLA's `RobotConfig`: four).
pub const IDENTITY_TEXTS: usize = 4;
/// The most bytes each text keeps.
pub const IDENTITY_TEXT_BYTES: usize = 32;
const WORDS: usize = IDENTITY_TEXT_BYTES / 8;

/// The link's counters and state, shared by the backend (the only writer, on the cycle
/// thread) and the actor side.
#[derive(Debug)]
pub struct LinkHealth {
    /// Where the robot is (LoLA's socket path), for the log.
    endpoint: String,
    /// The ALMemory key of each identity text.
    identity_keys: [&'static str; IDENTITY_TEXTS],
    state: AtomicU8,
    /// The OS error of the last failed attempt to connect; 0 once connected.
    connect_error: AtomicI32,
    loss: AtomicU8,
    loss_error: AtomicI32,
    maps: AtomicU64,
    answers: AtomicU64,
    stalls: AtomicU64,
    reconnects: AtomicU64,
    malformed: AtomicU64,
    oversized: AtomicU64,
    late_cycles: AtomicU64,
    /// A sequence lock over the identity texts: odd while they are written.
    identity_sequence: AtomicU32,
    identity_words: [[AtomicU64; WORDS]; IDENTITY_TEXTS],
    identity_lens: [AtomicU8; IDENTITY_TEXTS],
}

/// A link's counters and state at one moment ([`LinkHealth::snapshot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSnapshot {
    pub state: LinkState,
    /// The OS error (errno) of the last failed attempt to connect, while absent.
    pub connect_error: Option<i32>,
    /// Why the link was last lost, and the OS error when reading or writing failed.
    pub loss: LinkLoss,
    pub loss_error: Option<i32>,
    /// Sensor maps received, actuator maps sent.
    pub maps: u64,
    pub answers: u64,
    /// Times the robot stopped sending while connected.
    pub stalls: u64,
    /// Connections made after the first.
    pub reconnects: u64,
    /// Maps that were no sensor map (answered, skipped) or broke the stream (reset).
    pub malformed: u64,
    /// Maps that did not end within the bytes a map may take (the stream is reset).
    pub oversized: u64,
    /// Sensor maps answered with the last commands because the cycle thread was late.
    pub late_cycles: u64,
}

fn state_code(state: LinkState) -> u8 {
    LinkState::ALL.iter().position(|&known| known == state).unwrap_or(0) as u8
}

fn loss_code(loss: LinkLoss) -> u8 {
    LinkLoss::ALL.iter().position(|&known| known == loss).unwrap_or(0) as u8
}

fn nonzero(errno: i32) -> Option<i32> {
    (errno != 0).then_some(errno)
}

impl LinkHealth {
    /// A link to `endpoint`, absent until the backend connects; its identity texts go to
    /// `identity_keys` in ALMemory.
    pub fn new(endpoint: String, identity_keys: [&'static str; IDENTITY_TEXTS]) -> LinkHealth {
        LinkHealth {
            endpoint,
            identity_keys,
            state: AtomicU8::new(state_code(LinkState::Absent)),
            connect_error: AtomicI32::new(0),
            loss: AtomicU8::new(loss_code(LinkLoss::None)),
            loss_error: AtomicI32::new(0),
            maps: AtomicU64::new(0),
            answers: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            oversized: AtomicU64::new(0),
            late_cycles: AtomicU64::new(0),
            identity_sequence: AtomicU32::new(0),
            identity_words: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            identity_lens: std::array::from_fn(|_| AtomicU8::new(0)),
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn state(&self) -> LinkState {
        LinkState::ALL[usize::from(self.state.load(Ordering::Acquire)).min(LinkState::ALL.len() - 1)]
    }

    pub fn snapshot(&self) -> LinkSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let loss = usize::from(self.loss.load(Ordering::Relaxed)).min(LinkLoss::ALL.len() - 1);
        LinkSnapshot {
            state: self.state(),
            connect_error: nonzero(self.connect_error.load(Ordering::Relaxed)),
            loss: LinkLoss::ALL[loss],
            loss_error: nonzero(self.loss_error.load(Ordering::Relaxed)),
            maps: load(&self.maps),
            answers: load(&self.answers),
            stalls: load(&self.stalls),
            reconnects: load(&self.reconnects),
            malformed: load(&self.malformed),
            oversized: load(&self.oversized),
            late_cycles: load(&self.late_cycles),
        }
    }

    /// Actuator maps sent.
    pub fn answers(&self) -> u64 {
        self.answers.load(Ordering::Relaxed)
    }

    /// The identity texts with their ALMemory keys, and how many times they changed (0:
    /// never reported); `None` while the backend writes them.
    pub fn identity(&self) -> Option<(u32, Vec<(&'static str, String)>)> {
        let before = self.identity_sequence.load(Ordering::Acquire);
        if before % 2 == 1 {
            return None;
        }
        let texts = (0..IDENTITY_TEXTS)
            .map(|text| {
                let len =
                    usize::from(self.identity_lens[text].load(Ordering::Relaxed)).min(IDENTITY_TEXT_BYTES);
                let mut bytes = [0u8; IDENTITY_TEXT_BYTES];
                for (chunk, word) in bytes.chunks_mut(8).zip(&self.identity_words[text]) {
                    chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
                }
                (self.identity_keys[text], String::from_utf8_lossy(&bytes[..len]).into_owned())
            })
            .collect();
        std::sync::atomic::fence(Ordering::Acquire);
        (self.identity_sequence.load(Ordering::Relaxed) == before).then_some((before / 2, texts))
    }

    pub fn set_state(&self, state: LinkState) {
        self.state.store(state_code(state), Ordering::Release);
    }

    pub fn connect_failed(&self, errno: i32) {
        self.connect_error.store(errno, Ordering::Relaxed);
    }

    /// Connected: the first time, or again (`reconnected`).
    pub fn connected(&self, reconnected: bool) {
        self.connect_error.store(0, Ordering::Relaxed);
        if reconnected {
            self.reconnects.fetch_add(1, Ordering::Relaxed);
        }
        self.set_state(LinkState::Waiting);
    }

    pub fn lost(&self, loss: LinkLoss, errno: i32) {
        self.loss.store(loss_code(loss), Ordering::Relaxed);
        self.loss_error.store(errno, Ordering::Relaxed);
        self.set_state(LinkState::Absent);
    }

    pub fn count_map(&self) {
        self.maps.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_answer(&self) {
        self.answers.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_stall(&self) {
        self.stalls.fetch_add(1, Ordering::Relaxed);
        self.set_state(LinkState::Stalled);
    }

    pub fn count_malformed(&self) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_oversized(&self) {
        self.oversized.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_late(&self) {
        self.late_cycles.fetch_add(1, Ordering::Relaxed);
    }

    /// Replace the identity texts (each cut to [`IDENTITY_TEXT_BYTES`]): on the cycle
    /// thread, without allocating, and only when they changed.
    pub fn set_identity(&self, texts: [&str; IDENTITY_TEXTS]) {
        let sequence = self.identity_sequence.load(Ordering::Relaxed);
        self.identity_sequence.store(sequence.wrapping_add(1), Ordering::Release);
        std::sync::atomic::fence(Ordering::Release);
        for (text, value) in texts.iter().enumerate() {
            let mut len = value.len().min(IDENTITY_TEXT_BYTES);
            while !value.is_char_boundary(len) {
                len -= 1;
            }
            let mut bytes = [0u8; IDENTITY_TEXT_BYTES];
            bytes[..len].copy_from_slice(&value.as_bytes()[..len]);
            for (word, chunk) in self.identity_words[text].iter().zip(bytes.chunks(8)) {
                let mut le = [0u8; 8];
                le.copy_from_slice(chunk);
                word.store(u64::from_le_bytes(le), Ordering::Relaxed);
            }
            self.identity_lens[text].store(len as u8, Ordering::Relaxed);
        }
        self.identity_sequence.store(sequence.wrapping_add(2), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_texts_come_back_with_their_keys_and_count_their_changes() {
        let link = LinkHealth::new("/tmp/robocup".into(), ["A", "B", "C", "D"]);
        let (changes, texts) = link.identity().unwrap();
        assert_eq!(changes, 0);
        assert_eq!(texts[0], ("A", String::new()));
        let long = "é".repeat(20);
        link.set_identity(["P0000073A03S83I00011", "6.0.0", &long, ""]);
        let (changes, texts) = link.identity().unwrap();
        assert_eq!(changes, 1);
        let values: Vec<&str> = texts.iter().map(|(_, text)| text.as_str()).collect();
        assert_eq!(values, ["P0000073A03S83I00011", "6.0.0", &"é".repeat(16), ""]);
    }

    #[test]
    fn states_and_losses_come_back_as_written() {
        let link = LinkHealth::new("/tmp/robocup".into(), ["A", "B", "C", "D"]);
        assert_eq!(link.state(), LinkState::Absent);
        link.connect_failed(2);
        assert_eq!(link.snapshot().connect_error, Some(2));
        link.connected(true);
        link.count_stall();
        let snapshot = link.snapshot();
        assert_eq!(
            (snapshot.state, snapshot.connect_error, snapshot.reconnects, snapshot.stalls),
            (LinkState::Stalled, None, 1, 1)
        );
        assert!(snapshot.state.is_connected() && snapshot.state.is_stale());
        link.lost(LinkLoss::Failed, 32);
        let snapshot = link.snapshot();
        assert_eq!(
            (snapshot.state, snapshot.loss, snapshot.loss_error),
            (LinkState::Absent, LinkLoss::Failed, Some(32))
        );
    }
}
