//! A qi value as its signature types it: the tree [`QiValue::decode`] builds from bytes and
//! [`QiValue::encode`] writes back, byte for byte.

use crate::object::ObjectRef;
use crate::reader::Reader;
use crate::{DecodeError, EncodeError, Options, Type};

mod decode;
mod encode;

pub(crate) use decode::Decoder;

/// A value of one of libqi's types. Which variant goes with which [`Type`]: `Void` with `v`,
/// `Bool` with `b`, each integer and float variant with its own letter, `String` with `s`
/// (bytes: libqi strings need not be UTF-8), `Raw` with `r`, `Dynamic` with `m`, `List` with
/// `[T]` and `#T`, `Map` with `{KV}`, `Tuple` with `(...)`, `Optional` with `+T`, `Object`
/// with `o`.
#[derive(Debug, Clone, PartialEq)]
pub enum QiValue {
    Void,
    Bool(bool),
    Int8(i8),
    UInt8(u8),
    Int16(i16),
    UInt16(u16),
    Int32(i32),
    UInt32(u32),
    Int64(i64),
    UInt64(u64),
    Float(f32),
    Double(f64),
    String(Vec<u8>),
    Raw(Vec<u8>),
    /// A value carrying its own type; `None` is the empty signature (an invalid value, no
    /// bytes after the signature).
    Dynamic(Option<Box<Typed>>),
    List(Vec<QiValue>),
    /// Pairs in wire order.
    Map(Vec<(QiValue, QiValue)>),
    Tuple(Vec<QiValue>),
    Optional(Option<Box<QiValue>>),
    Object(Box<ObjectRef>),
}

/// A value and its type: what a dynamic value holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    pub ty: Type,
    pub value: QiValue,
}

impl QiValue {
    /// A string value from text.
    pub fn string(text: &str) -> QiValue {
        QiValue::String(text.as_bytes().to_vec())
    }

    /// A dynamic value holding `value` of type `ty`.
    pub fn dynamic(ty: Type, value: QiValue) -> QiValue {
        QiValue::Dynamic(Some(Box::new(Typed { ty, value })))
    }

    /// The text of a `String` value when it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            QiValue::String(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// What a dynamic value holds (`None` for any other value, and for the empty signature).
    pub fn as_typed(&self) -> Option<&Typed> {
        match self {
            QiValue::Dynamic(Some(typed)) => Some(typed),
            _ => None,
        }
    }

    /// A short name of the variant, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            QiValue::Void => "void",
            QiValue::Bool(_) => "bool",
            QiValue::Int8(_) => "int8",
            QiValue::UInt8(_) => "uint8",
            QiValue::Int16(_) => "int16",
            QiValue::UInt16(_) => "uint16",
            QiValue::Int32(_) => "int32",
            QiValue::UInt32(_) => "uint32",
            QiValue::Int64(_) => "int64",
            QiValue::UInt64(_) => "uint64",
            QiValue::Float(_) => "float",
            QiValue::Double(_) => "double",
            QiValue::String(_) => "string",
            QiValue::Raw(_) => "raw buffer",
            QiValue::Dynamic(_) => "dynamic",
            QiValue::List(_) => "list",
            QiValue::Map(_) => "map",
            QiValue::Tuple(_) => "tuple",
            QiValue::Optional(_) => "optional",
            QiValue::Object(_) => "object",
        }
    }

    /// Decode a whole payload as one value of type `ty`; bytes left after it are refused.
    pub fn decode(ty: &Type, bytes: &[u8], options: &Options) -> Result<QiValue, DecodeError> {
        let mut reader = Reader::new(bytes);
        let value = Self::decode_from(ty, &mut reader, options)?;
        reader.finish()?;
        Ok(value)
    }

    /// Decode one value of type `ty` from `reader`, leaving what follows it.
    pub fn decode_from(
        ty: &Type,
        reader: &mut Reader<'_>,
        options: &Options,
    ) -> Result<QiValue, DecodeError> {
        decode::Decoder::new(reader, options).value(ty, 0)
    }

    /// Append this value, encoded as type `ty`, to `out`.
    pub fn encode(&self, ty: &Type, out: &mut Vec<u8>, options: &Options) -> Result<(), EncodeError> {
        encode::Encoder { out, options }.value(self, ty, 0)
    }

    /// This value encoded as type `ty`, in a fresh buffer.
    pub fn to_bytes(&self, ty: &Type, options: &Options) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode(ty, &mut out, options)?;
        Ok(out)
    }
}
