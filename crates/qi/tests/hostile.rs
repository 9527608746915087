//! Hostile input: bad headers, truncated payloads, 4 GiB length prefixes and counts refused
//! without allocating, nesting and element counts bounded, every bad signature refused.

use naobroker_qi::{
    decode_message, CapabilityMap, DecodeError, FrameError, Header, Limits, MetaObject, Options, QiValue,
    Reader, ServiceInfo, SignatureError, Type, HEADER_SIZE,
};

#[global_allocator]
static ALLOCATOR: naobroker_alloc_counter::Counting = naobroker_alloc_counter::Counting;

fn header(size: u32, kind: u8) -> [u8; HEADER_SIZE] {
    let mut bytes = [0u8; HEADER_SIZE];
    bytes[..4].copy_from_slice(&[0x42, 0xde, 0xad, 0x42]);
    bytes[4] = 7;
    bytes[8..12].copy_from_slice(&size.to_le_bytes());
    bytes[14] = kind;
    bytes
}

fn decode(signature: &str, bytes: &[u8]) -> Result<QiValue, DecodeError> {
    QiValue::decode(&Type::parse(signature).unwrap(), bytes, &Options::default())
}

/// Run `decode` on a thread that counts its allocations; give its result and the count.
fn allocations_of<T: Send + 'static>(decode: impl FnOnce() -> T + Send + 'static) -> (T, u64) {
    assert!(naobroker_alloc_counter::allocations_seen_on_a_new_thread() > 0, "the counting allocator is on");
    std::thread::spawn(move || {
        naobroker_alloc_counter::start_counting();
        let result = decode();
        (result, naobroker_alloc_counter::counted())
    })
    .join()
    .unwrap()
}

#[test]
fn headers_are_refused_from_their_28_bytes() {
    let mut bad_magic = header(0, 1);
    bad_magic[0] = 0x43;
    assert_eq!(decode_message(&bad_magic, 100), Err(FrameError::BadMagic([0x43, 0xde, 0xad, 0x42])));
    let mut version = header(0, 1);
    version[12] = 1;
    assert_eq!(decode_message(&version, 100), Err(FrameError::UnsupportedVersion(1)));
    assert_eq!(decode_message(&header(0, 9), 100), Err(FrameError::UnknownType(9)));
    assert_eq!(decode_message(&header(101, 1), 100), Err(FrameError::TooLarge { size: 101, limit: 100 }));
    assert!(matches!(
        decode_message(&header(100, 1), 100),
        Ok(naobroker_qi::Decoded::Incomplete { needed: 128 })
    ));
}

#[test]
fn a_4_gib_payload_is_refused_from_the_header_without_allocating() {
    let (result, allocations) = allocations_of(|| decode_message(&header(u32::MAX, 1), 16 << 20).map(|_| ()));
    assert_eq!(result, Err(FrameError::TooLarge { size: u32::MAX, limit: 16 << 20 }));
    assert_eq!(allocations, 0);
    let bytes = header(u32::MAX, 1);
    assert!(Header::decode(&bytes, u32::MAX).is_ok(), "the caller's maximum is the only bound");
}

#[test]
fn a_4_gib_length_or_count_is_refused_without_allocating() {
    for signature in ["s", "r", "m", "[i]", "[s]", "{sm}", "[[i]]", "o"] {
        let ty = Type::parse(signature).unwrap();
        // What the thread owns is handed back, so that its free is not counted.
        let ((result, _ty), allocations) = allocations_of(move || {
            (QiValue::decode(&ty, &u32::MAX.to_le_bytes(), &Options::default()).map(|_| ()), ty)
        });
        assert!(
            matches!(result, Err(DecodeError::Truncated { .. } | DecodeError::CountTooLarge { .. })),
            "{signature}: {result:?}"
        );
        assert_eq!(allocations, 0, "{signature} allocated");
    }
    let (meta, allocations) = allocations_of(|| MetaObject::decode(&u32::MAX.to_le_bytes()).map(|_| ()));
    assert!(matches!(meta, Err(DecodeError::CountTooLarge { .. })));
    assert_eq!(allocations, 0);
}

#[test]
fn truncated_values_are_refused_at_every_cut() {
    let ty = Type::parse("(sI[s]{sm}+d)").unwrap();
    let mut caps = CapabilityMap::default();
    caps.set_bool("x", true);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&[2, 0, 0, 0, b'h', b'i', 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, b'a']);
    caps.encode(&mut bytes, &Options::default()).unwrap();
    bytes.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
    let value = QiValue::decode(&ty, &bytes, &Options::default()).unwrap();
    assert_eq!(value.to_bytes(&ty, &Options::default()).unwrap(), bytes);
    for cut in 0..bytes.len() {
        let result = QiValue::decode(&ty, &bytes[..cut], &Options::default());
        assert!(
            matches!(result, Err(DecodeError::Truncated { .. } | DecodeError::CountTooLarge { .. })),
            "{cut}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(QiValue::decode(&ty, &longer, &Options::default()), Err(DecodeError::Trailing(1)));
}

#[test]
fn elements_of_no_bytes_are_bounded_by_the_value_budget() {
    let options = Options { limits: Limits { max_values: 1000, ..Limits::default() }, ..Options::default() };
    let count = u32::MAX.to_le_bytes();
    for signature in ["[v]", "[()]", "{vv}", "[(vv)]"] {
        let result = QiValue::decode(&Type::parse(signature).unwrap(), &count, &options);
        assert_eq!(result, Err(DecodeError::TooManyValues { limit: 1000 }), "{signature}");
    }
    let mut small = 999u32.to_le_bytes().to_vec();
    assert!(QiValue::decode(&Type::parse("[v]").unwrap(), &small, &options).is_ok());
    small[0] = 0xe8; // 1000 elements and the list itself
    assert!(QiValue::decode(&Type::parse("[v]").unwrap(), &small, &options).is_err());
}

#[test]
fn signatures_inside_dynamic_values_spend_the_same_budget() {
    let options = Options { limits: Limits { max_values: 50, ..Limits::default() }, ..Options::default() };
    let signature = format!("({})", "v".repeat(60));
    let mut bytes = (signature.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(signature.as_bytes());
    let result = QiValue::decode(&Type::Dynamic, &bytes, &options);
    assert!(matches!(result, Err(DecodeError::Signature(SignatureError::TooManyElements { limit: 50 }))));
}

#[test]
fn dynamic_values_nested_without_end_stop_at_the_depth_limit() {
    let limit = Limits::default().max_depth;
    let nested: Vec<u8> = std::iter::repeat_n([1, 0, 0, 0, b'm'], 100_000).flatten().collect();
    assert_eq!(decode("m", &nested), Err(DecodeError::TooDeep { limit }));
    let lists: Vec<u8> =
        std::iter::repeat_n([3, 0, 0, 0, b'[', b'm', b']', 1, 0, 0, 0], 100_000).flatten().collect();
    assert_eq!(decode("m", &lists), Err(DecodeError::TooDeep { limit }));
    // A type nested past the limit cannot be parsed, only built by hand: still refused.
    let deep = (0..200).fold(Type::Int32, |inner, _| Type::Optional(Box::new(inner)));
    let present = vec![1u8; 200];
    assert_eq!(QiValue::decode(&deep, &present, &Options::default()), Err(DecodeError::TooDeep { limit }));
}

#[test]
fn deep_signatures_are_refused() {
    let limit = Limits::default().max_depth;
    let deep = |depth: usize| format!("{}i{}", "[".repeat(depth), "]".repeat(depth));
    assert!(Type::parse(&deep(limit)).is_ok());
    assert_eq!(Type::parse(&deep(limit + 1)), Err(SignatureError::TooDeep { limit }));
    assert_eq!(Type::parse(&"(".repeat(50_000)), Err(SignatureError::TooDeep { limit }));
    let long = "i".repeat(70_000);
    assert_eq!(Type::parse(&long), Err(SignatureError::TooLong { len: 70_000, limit: 64 * 1024 }));
}

#[test]
fn bad_signatures_are_refused() {
    let unexpected = |at, found| Err(SignatureError::Unexpected { at, found });
    assert_eq!(Type::parse(""), Err(SignatureError::Empty));
    assert_eq!(Type::parse("["), Err(SignatureError::UnexpectedEnd));
    assert_eq!(Type::parse("[s"), Err(SignatureError::UnexpectedEnd));
    assert_eq!(Type::parse("[si]"), unexpected(2, 'i'));
    assert_eq!(Type::parse("[]"), unexpected(1, ']'));
    assert_eq!(Type::parse("{s}"), unexpected(2, '}'));
    assert_eq!(Type::parse("{smm}"), unexpected(3, 'm'));
    assert_eq!(Type::parse("(s"), Err(SignatureError::UnexpectedEnd));
    assert_eq!(Type::parse("s)"), Err(SignatureError::Trailing { at: 1 }));
    assert_eq!(Type::parse("ss"), Err(SignatureError::Trailing { at: 1 }));
    assert_eq!(Type::parse("Q"), unexpected(0, 'Q'));
    assert_eq!(Type::parse("*"), unexpected(0, '*'));
    assert_eq!(Type::parse("(s)<Name,a"), Err(SignatureError::UnexpectedEnd));
    assert_eq!(Type::parse("[s]<Name>"), Err(SignatureError::Trailing { at: 3 }));
    assert_eq!(Type::parse("+"), Err(SignatureError::UnexpectedEnd));
    let mut bytes = 3u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"[s)");
    assert!(matches!(decode("m", &bytes), Err(DecodeError::Signature(_))));
}

#[test]
fn what_libqi_never_sends_is_refused() {
    assert_eq!(decode("b", &[2]), Err(DecodeError::InvalidBool { at: 0, value: 2 }));
    assert_eq!(decode("X", &[]), Err(DecodeError::NotDecodable("X".into())));
    assert_eq!(decode("[_]", &[1, 0, 0, 0]), Err(DecodeError::NotDecodable("_".into())));
    assert!(decode("[_]", &[0, 0, 0, 0]).is_ok(), "an empty container of nothing is fine");
    assert_eq!(decode("~s", &[]), Err(DecodeError::NotDecodable("~s".into())));
    let mut name = 2u32.to_le_bytes().to_vec();
    name.extend_from_slice(&[0xff, 0xfe]);
    let mut info = name.clone();
    info.extend_from_slice(&[0; 16]);
    assert_eq!(ServiceInfo::decode(&info), Err(DecodeError::NotUtf8("service name")));
    assert_eq!(Reader::new(&name).read_string("name"), Err(DecodeError::NotUtf8("name")));
    assert!(decode("s", &name).is_ok(), "a qi string need not be UTF-8");
}

#[test]
fn the_smallest_structures_still_decode_in_numbers() {
    // The element counts are checked against the fewest bytes an element can take: these
    // lists of the smallest elements sit exactly at that bound.
    let options = Options::default();
    let infos = vec![ServiceInfo::default(); 3];
    let mut bytes = Vec::new();
    ServiceInfo::encode_list(&infos, &mut bytes).unwrap();
    assert_eq!(bytes.len(), 4 + 3 * 28);
    assert_eq!(ServiceInfo::decode_list(&bytes).unwrap(), infos);
    let mut meta = MetaObject::default();
    for uid in 0..3 {
        meta.methods.insert(uid, naobroker_qi::MetaMethod { uid, ..Default::default() });
        meta.signals.insert(uid, naobroker_qi::MetaSignal { uid, ..Default::default() });
        meta.properties.insert(uid, naobroker_qi::MetaProperty { uid, ..Default::default() });
    }
    assert_eq!(MetaObject::decode(&meta.to_bytes().unwrap()).unwrap(), meta);
    let objects = QiValue::List(vec![QiValue::Object(Box::default()); 3]);
    let smallest = [
        ("[o]", objects),
        ("[m]", QiValue::List(vec![QiValue::Dynamic(None); 3])),
        ("[+i]", QiValue::List(vec![QiValue::Optional(None); 3])),
        ("[(bv)]", QiValue::List(vec![QiValue::Tuple(vec![QiValue::Bool(true), QiValue::Void]); 3])),
        ("{s[i]}", QiValue::Map(vec![(QiValue::string(""), QiValue::List(vec![])); 3])),
    ];
    for (signature, value) in smallest {
        let ty = Type::parse(signature).unwrap();
        let bytes = value.to_bytes(&ty, &options).unwrap();
        assert_eq!(QiValue::decode(&ty, &bytes, &options), Ok(value), "{signature}");
    }
    let mut caps = CapabilityMap::default();
    caps.entries.insert("a".into(), QiValue::Dynamic(None));
    caps.entries.insert("b".into(), QiValue::Dynamic(None));
    assert_eq!(CapabilityMap::decode(&caps.to_bytes(&options).unwrap(), &options), Ok(caps));
}
