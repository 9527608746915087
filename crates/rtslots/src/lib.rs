//! Lock-free real-time slots: one atomic word per key, laid out once at start-up, written
//! by the DCM's cycle thread without locks or allocation and read by anyone (ALMemory,
//! real-time hooks, ALMotion's thread). Below both the DCM and ALMemory, so that neither
//! depends on the other. A reader that needs several slots of one cycle (a joint state, a
//! pose) reads them with [`RtSlots::read_consistent`]: a sequence lock, whose writer neither
//! locks nor allocates, retried while a cycle's writes are under way.
#![deny(unsafe_code, unreachable_pub)]

mod layout;

pub use layout::{SlotKind, SlotLayout};

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Unix time now in µs: the stamp of a cycle's writes and of ALMemory's entries.
pub fn timestamp_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// Tries of [`RtSlots::read_consistent`] a reader off the real-time thread makes per look: a
/// cycle's writes take microseconds, so a try after one under way mostly finds them done.
pub const CONSISTENT_READ_TRIES: usize = 64;

/// A key asked of [`RtSlots::fast_access`] that no slot holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} is not a real-time key (fast access reads DCM-owned keys)")]
pub struct NotRealTimeKey {
    pub key: String,
}

/// Preallocated values of the real-time keys: one atomic word per key holding f64
/// bits, written by the DCM thread without locks or allocation and read by anyone.
#[derive(Debug)]
pub struct RtSlots {
    layout: SlotLayout,
    values: Box<[AtomicU64]>,
    /// Unix time in µs of the last cycle that wrote the slots.
    updated_us: AtomicU64,
    /// Odd while a cycle's writes are under way (from [`RtSlots::begin_write`] to
    /// [`RtSlots::publish`]), even between; one more each time.
    sequence: AtomicU64,
}

impl RtSlots {
    pub fn new(layout: SlotLayout) -> Arc<RtSlots> {
        let values = (0..layout.len()).map(|_| AtomicU64::new(0f64.to_bits())).collect();
        Arc::new(RtSlots { layout, values, updated_us: AtomicU64::new(0), sequence: AtomicU64::new(0) })
    }

    pub fn layout(&self) -> &SlotLayout {
        &self.layout
    }

    #[inline]
    pub fn set(&self, index: usize, value: f64) {
        self.values[index].store(value.to_bits(), Ordering::Relaxed);
    }

    /// Write the consecutive slots from `first` on, one per value: a block of keys
    /// (every actuator's value) in one pass, without checking each index.
    #[inline]
    pub fn set_block(&self, first: usize, values: impl IntoIterator<Item = f64>) {
        for (slot, value) in self.values[first..].iter().zip(values) {
            slot.store(value.to_bits(), Ordering::Relaxed);
        }
    }

    #[inline]
    pub fn get(&self, index: usize) -> f64 {
        f64::from_bits(self.values[index].load(Ordering::Relaxed))
    }

    /// Mark the start of a cycle's writes: until [`RtSlots::publish`],
    /// [`RtSlots::read_consistent`] retries. One writer only (the DCM's cycle thread); no lock,
    /// no allocation.
    #[inline]
    pub fn begin_write(&self) {
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(sequence | 1, Ordering::Relaxed);
        // The odd sequence is seen by any reader that sees a value written after it.
        fence(Ordering::Release);
    }

    /// Mark the end of a cycle's writes (release: readers that see the new stamp see
    /// the values written before it), begun or not with [`RtSlots::begin_write`].
    pub fn publish(&self, unix_us: u64) {
        self.updated_us.store(unix_us, Ordering::Release);
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store((sequence | 1) + 1, Ordering::Release);
    }

    /// `read` over the slots, once it ran while no cycle's writes were under way (all it read
    /// from one cycle); tried at most `tries` times, none when writes were under way each time.
    /// Lock-free; for readers off the real-time thread.
    pub fn read_consistent<R>(&self, tries: usize, mut read: impl FnMut(&RtSlots) -> R) -> Option<R> {
        for _ in 0..tries {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let result = read(self);
            fence(Ordering::Acquire);
            if self.sequence.load(Ordering::Relaxed) == before {
                return Some(result);
            }
        }
        None
    }

    pub fn updated_us(&self) -> u64 {
        self.updated_us.load(Ordering::Acquire)
    }

    /// Resolve keys once for [`FastAccess`] reads each cycle.
    pub fn fast_access(self: &Arc<Self>, keys: &[&str]) -> Result<FastAccess, NotRealTimeKey> {
        let indices = keys
            .iter()
            .map(|key| self.layout.index_of(key).ok_or_else(|| NotRealTimeKey { key: (*key).to_owned() }))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FastAccess { slots: Arc::clone(self), indices })
    }
}

/// NAOqi's ALMemoryFastAccess: keys resolved once, read every cycle without
/// allocating or locking (safe in a real-time hook).
#[derive(Debug, Clone)]
pub struct FastAccess {
    slots: Arc<RtSlots>,
    indices: Vec<usize>,
}

impl FastAccess {
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The value of the `position`-th resolved key.
    #[inline]
    pub fn get(&self, position: usize) -> f64 {
        self.slots.get(self.indices[position])
    }

    /// Read every resolved key into `out` (as many as fit).
    #[inline]
    pub fn read(&self, out: &mut [f64]) {
        for (value, &index) in out.iter_mut().zip(&self.indices) {
            *value = self.slots.get(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_access_reads_what_the_writer_stored() {
        let mut layout = SlotLayout::new();
        let a = layout.add("Device/A", SlotKind::Float);
        let b = layout.add("Device/B", SlotKind::Float);
        let slots = RtSlots::new(layout);
        slots.set(a, 1.5);
        slots.set(b, -2.0);
        let fast = slots.fast_access(&["Device/B", "Device/A"]).unwrap();
        let mut out = [0.0; 2];
        fast.read(&mut out);
        assert_eq!(out, [-2.0, 1.5]);
        assert_eq!(slots.fast_access(&["Other"]).unwrap_err(), NotRealTimeKey { key: "Other".into() });
    }

    #[test]
    fn a_block_fills_consecutive_slots_and_stops_at_the_last() {
        let mut layout = SlotLayout::new();
        for name in ["Device/A", "Device/B", "Device/C"] {
            layout.add(name, SlotKind::Float);
        }
        let slots = RtSlots::new(layout);
        slots.set_block(1, [1.0, 2.0, 3.0]);
        assert_eq!([slots.get(0), slots.get(1), slots.get(2)], [0.0, 1.0, 2.0]);
    }

    fn two_slots() -> (Arc<RtSlots>, usize, usize) {
        let mut layout = SlotLayout::new();
        let a = layout.add("Device/A", SlotKind::Float);
        let b = layout.add("Device/B", SlotKind::Float);
        (RtSlots::new(layout), a, b)
    }

    #[test]
    fn a_read_during_a_cycles_writes_is_retried_never_half_written() {
        let (slots, a, b) = two_slots();
        let both = |slots: &RtSlots| (slots.get(a), slots.get(b));
        assert_eq!(slots.read_consistent(3, both), Some((0.0, 0.0)));
        slots.begin_write();
        slots.set(a, 1.0);
        assert_eq!(slots.read_consistent(3, both), None, "cycle 1 half written");
        slots.set(b, 1.0);
        slots.publish(timestamp_now());
        assert_eq!(slots.read_consistent(3, both), Some((1.0, 1.0)));
        // A cycle that began and ended while reading: read again.
        let mut first = true;
        let read = slots.read_consistent(3, |slots| {
            if std::mem::take(&mut first) {
                slots.begin_write();
                slots.set(a, 2.0);
                let torn = both(slots);
                slots.set(b, 2.0);
                slots.publish(timestamp_now());
                return torn;
            }
            both(slots)
        });
        assert_eq!(read, Some((2.0, 2.0)));
    }

    #[test]
    fn readers_beside_a_writing_thread_see_whole_cycles() {
        let (slots, a, b) = two_slots();
        let writer = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || {
                for cycle in 1..=200_000 {
                    slots.begin_write();
                    slots.set(a, f64::from(cycle));
                    slots.set(b, -f64::from(cycle));
                    slots.publish(u64::from(cycle as u32));
                }
            })
        };
        while !writer.is_finished() {
            if let Some((x, y)) = slots.read_consistent(1000, |slots| (slots.get(a), slots.get(b))) {
                assert_eq!(x, -y, "a cycle read half written");
            }
        }
        writer.join().unwrap();
    }

    #[test]
    fn a_cycle_stamp_is_seen_by_readers() {
        let slots = RtSlots::new(SlotLayout::new());
        assert_eq!(slots.updated_us(), 0);
        let now = timestamp_now();
        slots.publish(now);
        assert_eq!(slots.updated_us(), now);
    }
}
