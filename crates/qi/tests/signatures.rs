//! Type signatures parse into the tree libqi means and print back to the same text; headers
//! encode and decode every field.

use naobroker_qi::{Address, Flags, Header, MessageType, MetaObject, ServiceInfo, TupleType, Type};

#[test]
fn every_signature_of_the_capture_prints_back_to_its_text() {
    let captured = [
        "L",
        "(IIL)",
        "v",
        "()",
        "(I)",
        "m",
        "(m)",
        "(mm)",
        "[s]",
        "(IILs)",
        "b",
        "(b)",
        "s",
        "o",
        "(sm)",
        "(Is)",
        MetaObject::SIGNATURE,
        ServiceInfo::SIGNATURE,
        ServiceInfo::LEGACY_SIGNATURE,
        "{I(I(fff)<MinMaxSum,minValue,maxValue,cumulatedValue>(fff)<MinMaxSum,minValue,maxValue,\
         cumulatedValue>(fff)<MinMaxSum,minValue,maxValue,cumulatedValue>)<MethodStatistics,count,wall,\
         user,system>}",
        "((IiIm(ll)<timeval,tv_sec,tv_usec>llII)<EventTrace,id,kind,slotId,arguments,timestamp,userUsTime,\
         systemUsTime,callerContext,calleeContext>)",
    ];
    for text in captured {
        assert_eq!(Type::parse(text).unwrap().to_string(), text);
    }
}

#[test]
fn every_letter_of_libqi_parses_and_prints() {
    for text in ["v", "b", "c", "C", "w", "W", "i", "I", "l", "L", "f", "d", "s", "r", "m", "o", "X", "_"] {
        assert_eq!(Type::parse(text).unwrap().to_string(), text);
    }
    for text in ["[m]", "{sm}", "{I[s]}", "+s", "#m", "~m", "(s(i)[+d])", "[{s(ii)<P,x,y>}]", "(i)<A<B>,c>"] {
        assert_eq!(text.parse::<Type>().unwrap().to_string(), text);
    }
}

#[test]
fn signatures_parse_into_the_typed_tree() {
    let list = |inner| Type::List(Box::new(inner));
    assert_eq!(Type::parse("[[i]]"), Ok(list(list(Type::Int32))));
    assert_eq!(Type::parse("{sm}"), Ok(Type::Map(Box::new(Type::String), Box::new(Type::Dynamic))));
    assert_eq!(Type::parse("+L"), Ok(Type::Optional(Box::new(Type::UInt64))));
    assert_eq!(Type::parse("#s"), Ok(Type::VarArgs(Box::new(Type::String))));
    assert_eq!(Type::parse("()"), Ok(Type::tuple(vec![])));
    let point = Type::parse("(ff)<Point,x,y>").unwrap();
    let members = vec![Type::Float, Type::Float];
    assert_eq!(point, Type::Tuple(TupleType { members, annotation: Some("Point,x,y".into()) }));
    let Type::Tuple(tuple) = point else { unreachable!() };
    assert_eq!((tuple.name(), tuple.field_names()), (Some("Point"), vec!["x", "y"]));
    assert_eq!(TupleType::default().name(), None);
    assert!(Type::Dynamic.is_dynamic() && !Type::String.is_dynamic());
}

#[test]
fn headers_encode_and_decode_every_field() {
    let header = Header {
        id: 0x0102_0304,
        size: 77,
        kind: MessageType::Event,
        flags: Flags(Flags::DYNAMIC_PAYLOAD.0 | Flags::RETURN_TYPE.0 | 0x80),
        address: Address::new(2, 1, 101),
    };
    let bytes = header.encode();
    assert_eq!(&bytes[..4], &[0x42, 0xde, 0xad, 0x42]);
    assert_eq!(&bytes[4..8], &[4, 3, 2, 1]);
    assert_eq!((bytes[14], bytes[15]), (5, 0x83));
    assert_eq!(Header::decode(&bytes, 77), Ok(header));
    assert!(header.flags.contains(Flags::DYNAMIC_PAYLOAD) && header.flags.contains(Flags::RETURN_TYPE));
    assert!(!Flags::NONE.contains(Flags::DYNAMIC_PAYLOAD));
    assert_eq!(header.address.to_string(), "2.1.101");
    for byte in 0..=8 {
        assert_eq!(MessageType::from_u8(byte).map(|kind| kind as u8), Some(byte));
    }
    assert_eq!(MessageType::from_u8(9), None);
}
