//! naobroker's [`Value`] (NAOqi's ALValue) to and from qi values: the dynamic mapping used
//! where a signature says `m`, and the conversion into a concrete signature
//! (`docs/qi.md`, "Values").

use naobroker_protocol::Value;

use crate::{ConvertError, Limits, Options, QiValue, Type, Typed};

/// The naobroker value a qi value stands for. Every width of integer becomes an integer,
/// `f` a 32-bit and `d` a 64-bit float, a string that is not UTF-8 binary, lists and tuples
/// arrays, dynamic values and optionals what they hold (nothing: nil). Object references
/// have no naobroker value.
pub fn to_value(value: &QiValue) -> Result<Value, ConvertError> {
    Ok(match value {
        QiValue::Void | QiValue::Dynamic(None) | QiValue::Optional(None) => Value::Nil,
        QiValue::Bool(b) => Value::Boolean(*b),
        QiValue::Int8(n) => Value::from(*n),
        QiValue::UInt8(n) => Value::from(*n),
        QiValue::Int16(n) => Value::from(*n),
        QiValue::UInt16(n) => Value::from(*n),
        QiValue::Int32(n) => Value::from(*n),
        QiValue::UInt32(n) => Value::from(*n),
        QiValue::Int64(n) => Value::from(*n),
        QiValue::UInt64(n) => Value::from(*n),
        QiValue::Float(x) => Value::F32(*x),
        QiValue::Double(x) => Value::F64(*x),
        QiValue::String(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Value::from(text),
            Err(_) => Value::Binary(bytes.clone()),
        },
        QiValue::Raw(bytes) => Value::Binary(bytes.clone()),
        QiValue::Dynamic(Some(typed)) => to_value(&typed.value)?,
        QiValue::Optional(Some(inner)) => to_value(inner)?,
        QiValue::List(items) | QiValue::Tuple(items) => {
            Value::Array(items.iter().map(to_value).collect::<Result<_, ConvertError>>()?)
        }
        QiValue::Map(pairs) => Value::Map(
            pairs
                .iter()
                .map(|(key, value)| Ok((to_value(key)?, to_value(value)?)))
                .collect::<Result<_, ConvertError>>()?,
        ),
        QiValue::Object(_) => return Err(ConvertError::NoValue("object reference")),
    })
}

/// Decode a whole payload of type `ty` into the naobroker value it stands for (a call's
/// parameters tuple gives an array of the arguments).
pub fn decode_value(ty: &Type, bytes: &[u8], options: &Options) -> Result<Value, ConvertError> {
    to_value(&QiValue::decode(ty, bytes, options)?)
}

/// Encode a naobroker value as type `ty` (a reply for a method's return signature, an event
/// for a signal's), appending to `out`.
pub fn encode_value(
    value: &Value,
    ty: &Type,
    out: &mut Vec<u8>,
    options: &Options,
) -> Result<(), ConvertError> {
    Ok(from_value(value, ty, &options.limits)?.encode(ty, out, options)?)
}

/// The dynamic value (`m`) a naobroker value becomes: nil `v`, bool `b`, an integer `i`
/// when it fits 32 bits (NAOqi's ALValue int), else `l`, else `L`; a 32-bit float `f`, a
/// 64-bit one `d`; string `s`; binary `r`; array `[m]`; map `{mm}`.
pub fn dynamic_of(value: &Value, limits: &Limits) -> Result<QiValue, ConvertError> {
    dynamic_at(value, limits, 0)
}

fn dynamic_at(value: &Value, limits: &Limits, depth: usize) -> Result<QiValue, ConvertError> {
    let inner = nested(limits, depth)?;
    let (ty, qi) = match value {
        Value::Nil => (Type::Void, QiValue::Void),
        Value::Boolean(b) => (Type::Bool, QiValue::Bool(*b)),
        Value::Integer(n) => match (n.as_i64(), n.as_u64()) {
            (Some(n), _) => match i32::try_from(n) {
                Ok(n) => (Type::Int32, QiValue::Int32(n)),
                Err(_) => (Type::Int64, QiValue::Int64(n)),
            },
            (None, Some(n)) => (Type::UInt64, QiValue::UInt64(n)),
            (None, None) => unreachable!("a MessagePack integer is an i64 or a u64"),
        },
        Value::F32(x) => (Type::Float, QiValue::Float(*x)),
        Value::F64(x) => (Type::Double, QiValue::Double(*x)),
        Value::String(text) => (Type::String, QiValue::String(text.as_bytes().to_vec())),
        Value::Binary(bytes) => (Type::Raw, QiValue::Raw(bytes.clone())),
        Value::Array(items) => {
            let element = nested(limits, inner)?;
            let items = items.iter().map(|item| dynamic_at(item, limits, element));
            (Type::List(Box::new(Type::Dynamic)), QiValue::List(items.collect::<Result<_, ConvertError>>()?))
        }
        Value::Map(pairs) => {
            let element = nested(limits, inner)?;
            let pairs = pairs.iter().map(|(key, value)| {
                Ok((dynamic_at(key, limits, element)?, dynamic_at(value, limits, element)?))
            });
            let ty = Type::Map(Box::new(Type::Dynamic), Box::new(Type::Dynamic));
            (ty, QiValue::Map(pairs.collect::<Result<_, ConvertError>>()?))
        }
        Value::Ext(..) => return Err(ConvertError::NoQiValue("MessagePack extension")),
    };
    Ok(QiValue::Dynamic(Some(Box::new(Typed { ty, value: qi }))))
}

/// The qi value of type `ty` a naobroker value becomes (a reply or an event for a concrete
/// signature). `m` takes any value ([`dynamic_of`]); integers convert to any integer width
/// they fit and to floats; floats to `f` or `d`; strings and binary to `s` or `r`; arrays to
/// lists and to tuples of their length; maps to maps; nil to `v` and to an empty `+T`.
pub fn from_value(value: &Value, ty: &Type, limits: &Limits) -> Result<QiValue, ConvertError> {
    from_value_at(value, ty, limits, 0)
}

fn from_value_at(value: &Value, ty: &Type, limits: &Limits, depth: usize) -> Result<QiValue, ConvertError> {
    let mismatch = || ConvertError::Mismatch {
        expected: ty.to_string(),
        found: naobroker_protocol::type_name_of(value),
    };
    let out_of_range = || ConvertError::OutOfRange { value: value.to_string(), ty: ty.to_string() };
    let integer = || match value {
        Value::Integer(n) => n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)).ok_or_else(mismatch),
        _ => Err(mismatch()),
    };
    macro_rules! int {
        ($variant:ident) => {
            QiValue::$variant(integer()?.try_into().map_err(|_| out_of_range())?)
        };
    }
    let float = || match value {
        Value::F32(x) => Ok(f64::from(*x)),
        Value::F64(x) => Ok(*x),
        Value::Integer(_) => Ok(integer()? as f64),
        _ => Err(mismatch()),
    };
    let bytes = || match value {
        Value::String(text) => Ok(text.as_bytes().to_vec()),
        Value::Binary(bytes) => Ok(bytes.clone()),
        _ => Err(mismatch()),
    };
    Ok(match ty {
        Type::Dynamic => dynamic_at(value, limits, depth)?,
        Type::Void => match value {
            Value::Nil => QiValue::Void,
            _ => return Err(mismatch()),
        },
        Type::Bool => match value {
            Value::Boolean(b) => QiValue::Bool(*b),
            _ => return Err(mismatch()),
        },
        Type::Int8 => int!(Int8),
        Type::UInt8 => int!(UInt8),
        Type::Int16 => int!(Int16),
        Type::UInt16 => int!(UInt16),
        Type::Int32 => int!(Int32),
        Type::UInt32 => int!(UInt32),
        Type::Int64 => int!(Int64),
        Type::UInt64 => int!(UInt64),
        Type::Float => QiValue::Float(float()? as f32),
        Type::Double => QiValue::Double(float()?),
        Type::String => QiValue::String(bytes()?),
        Type::Raw => QiValue::Raw(bytes()?),
        Type::List(element) | Type::VarArgs(element) => {
            let inner = nested(limits, depth)?;
            let Value::Array(items) = value else { return Err(mismatch()) };
            QiValue::List(
                items
                    .iter()
                    .map(|item| from_value_at(item, element, limits, inner))
                    .collect::<Result<_, ConvertError>>()?,
            )
        }
        Type::Map(key_ty, value_ty) => {
            let inner = nested(limits, depth)?;
            let Value::Map(pairs) = value else { return Err(mismatch()) };
            QiValue::Map(
                pairs
                    .iter()
                    .map(|(key, value)| {
                        Ok((
                            from_value_at(key, key_ty, limits, inner)?,
                            from_value_at(value, value_ty, limits, inner)?,
                        ))
                    })
                    .collect::<Result<_, ConvertError>>()?,
            )
        }
        Type::Tuple(tuple) => {
            let inner = nested(limits, depth)?;
            let Value::Array(items) = value else { return Err(mismatch()) };
            if items.len() != tuple.members.len() {
                return Err(ConvertError::Arity { expected: tuple.members.len(), found: items.len() });
            }
            QiValue::Tuple(
                items
                    .iter()
                    .zip(&tuple.members)
                    .map(|(item, member)| from_value_at(item, member, limits, inner))
                    .collect::<Result<_, ConvertError>>()?,
            )
        }
        Type::Optional(inner_ty) => {
            let inner = nested(limits, depth)?;
            match value {
                Value::Nil => QiValue::Optional(None),
                value => QiValue::Optional(Some(Box::new(from_value_at(value, inner_ty, limits, inner)?))),
            }
        }
        Type::Object | Type::Unknown | Type::None | Type::KwArgs(_) => return Err(mismatch()),
    })
}

fn nested(limits: &Limits, depth: usize) -> Result<usize, ConvertError> {
    if depth >= limits.max_depth {
        return Err(ConvertError::TooDeep { limit: limits.max_depth });
    }
    Ok(depth + 1)
}
