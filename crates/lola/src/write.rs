//! A MessagePack writer into a fixed buffer, for the few shapes LoLA's maps use.

pub(crate) struct Writer<'a> {
    buffer: &'a mut [u8],
    position: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buffer: &'a mut [u8]) -> Writer<'a> {
        Writer { buffer, position: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> usize {
        self.position
    }

    // The encoders size every message before writing it: the buffer always holds it, and
    // a write past its end is a bug (an index panic), never a silently short message.
    fn bytes(&mut self, bytes: &[u8]) {
        self.buffer[self.position..self.position + bytes.len()].copy_from_slice(bytes);
        self.position += bytes.len();
    }

    /// A map header for up to 15 entries (fixmap).
    pub(crate) fn small_map(&mut self, entries: usize) {
        debug_assert!(entries < 16);
        self.bytes(&[0x80 | entries as u8]);
    }

    /// An array header: fixarray below 16 elements, array 16 above.
    pub(crate) fn array(&mut self, elements: usize) {
        if elements < 16 {
            self.bytes(&[0x90 | elements as u8]);
        } else {
            let [high, low] = (elements as u16).to_be_bytes();
            self.bytes(&[0xdc, high, low]);
        }
    }

    /// A text: fixstr up to 31 bytes, str 8 above.
    pub(crate) fn text(&mut self, text: &str) {
        if text.len() < 32 {
            self.bytes(&[0xa0 | text.len() as u8]);
        } else {
            self.bytes(&[0xd9, text.len() as u8]);
        }
        self.bytes(text.as_bytes());
    }

    pub(crate) fn float32(&mut self, value: f32) {
        let [a, b, c, d] = value.to_be_bytes();
        self.bytes(&[0xca, a, b, c, d]);
    }

    pub(crate) fn floats(&mut self, values: &[f32]) {
        self.array(values.len());
        for &value in values {
            self.float32(value);
        }
    }

    /// A positive fixint, 0..=127.
    pub(crate) fn fixint(&mut self, value: u8) {
        debug_assert!(value < 128);
        self.bytes(&[value]);
    }

    pub(crate) fn boolean(&mut self, value: bool) {
        self.bytes(&[if value { 0xc3 } else { 0xc2 }]);
    }
}
