use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How a slot's bits are shown to readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    Float,
    Int,
    Bool,
}

/// The fixed list of real-time keys, decided once at start-up.
#[derive(Debug, Default)]
pub struct SlotLayout {
    names: Vec<String>,
    kinds: Vec<SlotKind>,
    index: HashMap<String, usize>,
}

impl SlotLayout {
    pub fn new() -> Self {
        SlotLayout::default()
    }

    /// Add a key; returns its slot index (the existing one if already there).
    pub fn add(&mut self, name: &str, kind: SlotKind) -> usize {
        if let Some(&index) = self.index.get(name) {
            return index;
        }
        self.names.push(name.to_owned());
        self.kinds.push(kind);
        self.index.insert(name.to_owned(), self.names.len() - 1);
        self.names.len() - 1
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    pub fn kind(&self, index: usize) -> SlotKind {
        self.kinds[index]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

/// Preallocated values of the real-time keys: one atomic word per key holding f64
/// bits, written by the DCM thread without locks or allocation and read by anyone.
#[derive(Debug)]
pub struct RtSlots {
    layout: SlotLayout,
    values: Box<[AtomicU64]>,
    /// Unix time in µs of the last cycle that wrote the slots.
    updated_us: AtomicU64,
}

impl RtSlots {
    pub fn new(layout: SlotLayout) -> Arc<RtSlots> {
        let values = (0..layout.len()).map(|_| AtomicU64::new(0f64.to_bits())).collect();
        Arc::new(RtSlots { layout, values, updated_us: AtomicU64::new(0) })
    }

    pub fn layout(&self) -> &SlotLayout {
        &self.layout
    }

    #[inline]
    pub fn set(&self, index: usize, value: f64) {
        self.values[index].store(value.to_bits(), Ordering::Relaxed);
    }

    #[inline]
    pub fn get(&self, index: usize) -> f64 {
        f64::from_bits(self.values[index].load(Ordering::Relaxed))
    }

    /// Mark the end of a cycle's writes (release: readers that see the new stamp see
    /// the values written before it).
    pub fn publish(&self, unix_us: u64) {
        self.updated_us.store(unix_us, Ordering::Release);
    }

    pub fn updated_us(&self) -> u64 {
        self.updated_us.load(Ordering::Acquire)
    }

    /// Resolve keys once for [`FastAccess`] reads each cycle.
    pub fn fast_access(self: &Arc<Self>, keys: &[&str]) -> Result<FastAccess, String> {
        let indices = keys
            .iter()
            .map(|key| {
                self.layout
                    .index_of(key)
                    .ok_or_else(|| format!("{key} is not a real-time key (fast access reads DCM-owned keys)"))
            })
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
        assert!(slots.fast_access(&["Other"]).unwrap_err().contains("Other"));
    }
}
