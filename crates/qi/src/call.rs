//! A call's or post's arguments as naobroker values, whatever form the caller chose: the
//! method's parameters tuple, a dynamic value under `DynamicPayload`, and a forced return
//! signature after it under `ReturnType` (libqi's `remoteobject.cpp` and `boundobject.cpp`).

use naobroker_protocol::Value;

use crate::reader::Reader;
use crate::{to_value, ConvertError, DecodeError, Flags, Message, Options, QiValue, Type};

/// What a `Call` or `Post` carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Arguments {
    /// One value per parameter.
    pub values: Vec<Value>,
    /// Under `ReturnType`: the signature the caller wants the reply converted to (libqi
    /// answers it, when the caller shares `MessageFlags`, as a dynamic value of that type
    /// with `DynamicPayload` set).
    pub return_signature: Option<String>,
}

/// Decode `message`'s payload as the arguments of a method whose parameters signature is
/// `parameters` (a tuple such as `(s)`).
pub fn decode_arguments(
    message: &Message,
    parameters: &Type,
    options: &Options,
) -> Result<Arguments, ConvertError> {
    let mut reader = Reader::new(&message.payload);
    let dynamic = message.flags.contains(Flags::DYNAMIC_PAYLOAD);
    let payload_type = if dynamic { &Type::Dynamic } else { parameters };
    let value = QiValue::decode_from(payload_type, &mut reader, options)?;
    let return_signature = match message.flags.contains(Flags::RETURN_TYPE) {
        true => Some(reader.read_string("return signature")?),
        false => None,
    };
    reader.finish()?;
    // A dynamic payload is the argument pack as a tuple of its own type.
    let members = match &value {
        QiValue::Tuple(members) => members,
        QiValue::Dynamic(Some(typed)) => match &typed.value {
            QiValue::Tuple(members) => members,
            _ => return Err(not_a_tuple(typed.ty.to_string())),
        },
        other => return Err(not_a_tuple(other.kind_name().to_owned())),
    };
    let values = members.iter().map(to_value).collect::<Result<_, _>>()?;
    Ok(Arguments { values, return_signature })
}

fn not_a_tuple(found: String) -> ConvertError {
    DecodeError::Unexpected { expected: "a tuple of arguments", found }.into()
}
