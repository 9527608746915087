//! The captured payloads with bytes changed, inserted or cut at random (a fixed seed): every
//! decode answers a value or an error and never panics, and what decodes encodes back to
//! the same bytes.

use naobroker_qi::{CapabilityMap, MessageType, MetaObject, Options, QiValue, ServiceInfo, Type};

use super::find;

/// xorshift64*: a deterministic stream, so that a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

fn mutate(rng: &mut Rng, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len().max(1));
        match rng.below(5) {
            0 if !bytes.is_empty() => bytes[at] = rng.next() as u8,
            // A length or count field made huge, or zero.
            1 if at + 4 <= bytes.len() => bytes[at..at + 4].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]),
            2 if at + 4 <= bytes.len() => bytes[at..at + 4].copy_from_slice(&[0, 0, 0, 0]),
            3 => bytes.insert(at.min(bytes.len()), rng.next() as u8),
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// Captured payloads and the signature each was sent with.
fn payloads() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("{sm}", find(true, 2, MessageType::Call).payload),
        ("{sm}", find(false, 2, MessageType::Reply).payload),
        (MetaObject::SIGNATURE, find(false, 3, MessageType::Reply).payload),
        (MetaObject::SIGNATURE, find(false, 10, MessageType::Reply).payload),
        ("[(sIsI[s]ss)]", find(false, 7, MessageType::Reply).payload),
        (ServiceInfo::SIGNATURE, find(false, 8, MessageType::Reply).payload),
        ("(IIL)", find(true, 4, MessageType::Call).payload),
        ("m", find(false, 12, MessageType::Reply).payload),
        ("m", find(false, 13, MessageType::Error).payload),
        ("(sm)", find(false, 13, MessageType::Event).payload),
    ]
}

#[test]
fn mutated_payloads_decode_or_are_refused_never_panic() {
    let options = Options { object_uid: true, ..Options::default() };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut decoded = 0;
    for (signature, original) in payloads() {
        let ty = Type::parse(signature).unwrap();
        for _ in 0..3000 {
            let bytes = mutate(&mut rng, &original);
            // The typed decoders take the same bytes: they too must only answer.
            let _ = MetaObject::decode(&bytes);
            let _ = ServiceInfo::decode(&bytes);
            let _ = CapabilityMap::decode(&bytes, &options);
            let Ok(value) = QiValue::decode(&ty, &bytes, &options) else { continue };
            decoded += 1;
            // The encoding is canonical: a value that decodes encodes back to its very bytes.
            assert_eq!(value.to_bytes(&ty, &options).unwrap(), bytes, "{signature}");
        }
    }
    assert!(decoded > 1000, "mutations that still decode are exercised too ({decoded})");
}
