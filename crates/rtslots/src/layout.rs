//! The fixed list of real-time keys and how each is shown to readers, decided once at
//! start-up, before the slots exist.

use std::collections::HashMap;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_added_twice_keeps_its_first_slot_and_kind() {
        let mut layout = SlotLayout::new();
        assert_eq!(layout.add("DCM/Time", SlotKind::Int), 0);
        assert_eq!(layout.add("DCM/Realtime", SlotKind::Bool), 1);
        assert_eq!(layout.add("DCM/Time", SlotKind::Float), 0);
        assert_eq!((layout.len(), layout.kind(0), layout.name(1)), (2, SlotKind::Int, "DCM/Realtime"));
        assert_eq!(layout.index_of("DCM/Cycle"), None);
        assert_eq!(layout.names().collect::<Vec<_>>(), ["DCM/Time", "DCM/Realtime"]);
    }
}
