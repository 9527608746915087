//! Byte-exact tests against a real libqi 4.0.3 exchange (`qi` 3.1.5 client and server through
//! a logging proxy; `raw-hex.log` has every message, `decoded.txt` what libqi made of them):
//! each message decodes, and what it decodes to encodes back to the same bytes.

mod messages;
mod mutations;

use naobroker_qi::{decode_message, Address, Decoded, Flags, Message, MessageType, HEADER_SIZE};

/// One captured message: its direction and the bytes on the wire (header and payload).
pub struct Captured {
    pub from_client: bool,
    pub id: u32,
    pub kind: u8,
    pub address: Address,
    pub payload: Vec<u8>,
    pub wire: Vec<u8>,
}

pub fn hex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex length");
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect()
}

/// Every message of `raw-hex.log`, in order. The log prints each header's fields; the wire
/// bytes are rebuilt here from them, independently of the codec under test.
pub fn capture() -> Vec<Captured> {
    include_str!("raw-hex.log")
        .lines()
        .map(|line| {
            let mut words = line.split(' ');
            let from_client = words.next() == Some("C->S");
            let field = |name: &str| {
                let prefix = format!("{name}=");
                line.split(' ').find_map(|word| word.strip_prefix(prefix.as_str())).unwrap().to_owned()
            };
            let id: u32 = field("id").parse().unwrap();
            let size: u32 = field("size").parse().unwrap();
            let kind: u8 = field("type").parse().unwrap();
            let flags: u8 = field("flags").parse().unwrap();
            let address: Vec<u32> = field("addr").split('.').map(|part| part.parse().unwrap()).collect();
            let payload = hex(&field("body"));
            assert_eq!(payload.len(), size as usize);
            assert_eq!(field("raw"), "42dead42");
            let mut wire = hex("42dead42");
            wire.extend_from_slice(&id.to_le_bytes());
            wire.extend_from_slice(&size.to_le_bytes());
            wire.extend_from_slice(&[0, 0, kind, flags]);
            for part in &address {
                wire.extend_from_slice(&part.to_le_bytes());
            }
            wire.extend_from_slice(&payload);
            let address = Address::new(address[0], address[1], address[2]);
            Captured { from_client, id, kind, address, payload, wire }
        })
        .collect()
}

/// The captured message with this id, direction and type.
pub fn find(from_client: bool, id: u32, kind: MessageType) -> Captured {
    capture()
        .into_iter()
        .find(|message| message.from_client == from_client && message.id == id && message.kind == kind as u8)
        .unwrap_or_else(|| panic!("no captured message {id} of type {kind:?}"))
}

#[test]
fn the_capture_has_every_message_of_the_exchange() {
    let messages = capture();
    assert_eq!(messages.len(), 23);
    assert_eq!(messages.iter().filter(|message| message.from_client).count(), 11);
    // The first header, byte for byte as libqi-wire.md A.7 quotes it.
    let first = ["42dead42", "02000000", "a1000000", "0000", "01", "00", "00000000", "00000000", "08000000"];
    assert_eq!(messages[0].wire[..HEADER_SIZE], hex(&first.concat()));
}

#[test]
fn every_captured_message_decodes_and_encodes_back_to_its_bytes() {
    for captured in capture() {
        let decoded = decode_message(&captured.wire, 1 << 20).unwrap();
        let Decoded::Message { message, consumed } = decoded else { panic!("incomplete: {decoded:?}") };
        assert_eq!(consumed, captured.wire.len());
        assert_eq!(message.id, captured.id);
        assert_eq!(message.kind as u8, captured.kind);
        assert_eq!(message.flags, Flags::NONE);
        assert_eq!(message.address, captured.address);
        assert_eq!(message.payload, captured.payload);
        assert_eq!(message.encode().unwrap(), captured.wire, "message {} re-encoded", captured.id);
    }
}

#[test]
fn the_whole_stream_decodes_whatever_the_chunks_it_arrives_in() {
    let messages = capture();
    let stream: Vec<u8> = messages.iter().flat_map(|message| message.wire.clone()).collect();
    for chunk in [1, 3, 28, 29, 1000, stream.len()] {
        let mut buffer = Vec::new();
        let mut decoded: Vec<Message> = Vec::new();
        for piece in stream.chunks(chunk) {
            buffer.extend_from_slice(piece);
            while let Decoded::Message { message, consumed } = decode_message(&buffer, 1 << 20).unwrap() {
                buffer.drain(..consumed);
                decoded.push(message);
            }
        }
        assert!(buffer.is_empty());
        let ids: Vec<u32> = decoded.iter().map(|message| message.id).collect();
        let expected: Vec<u32> = messages.iter().map(|message| message.id).collect();
        assert_eq!(ids, expected, "in chunks of {chunk}");
    }
}

#[test]
fn incomplete_says_how_many_bytes_the_message_needs() {
    let reply = find(false, 3, MessageType::Reply);
    assert_eq!(
        decode_message(&reply.wire[..10], 1 << 20).unwrap(),
        Decoded::Incomplete { needed: HEADER_SIZE }
    );
    let needed = HEADER_SIZE + 2144;
    assert_eq!(decode_message(&reply.wire[..HEADER_SIZE], 1 << 20).unwrap(), Decoded::Incomplete { needed });
    assert_eq!(decode_message(&reply.wire[..needed - 1], 1 << 20).unwrap(), Decoded::Incomplete { needed });
}
