//! Reading a value according to its type: every count checked against the bytes left, every
//! value and signature element taken from one budget, nesting bounded.

use super::{QiValue, Typed};
use crate::object::ObjectRef;
use crate::reader::Reader;
use crate::{DecodeError, Options, Type};

pub(crate) struct Decoder<'r, 'a> {
    reader: &'r mut Reader<'a>,
    options: &'r Options,
    /// Values and signature elements this decode may still build.
    budget: usize,
}

impl<'r, 'a> Decoder<'r, 'a> {
    pub(crate) fn new(reader: &'r mut Reader<'a>, options: &'r Options) -> Self {
        Decoder { reader, options, budget: options.limits.max_values }
    }

    /// The cursor, to read what is not a typed value (a name before a dynamic value).
    pub(crate) fn reader(&mut self) -> &mut Reader<'a> {
        self.reader
    }

    fn take_one(&mut self) -> Result<(), DecodeError> {
        if self.budget == 0 {
            return Err(DecodeError::TooManyValues { limit: self.options.limits.max_values });
        }
        self.budget -= 1;
        Ok(())
    }

    pub(crate) fn value(&mut self, ty: &Type, depth: usize) -> Result<QiValue, DecodeError> {
        self.take_one()?;
        let reader = &mut *self.reader;
        Ok(match ty {
            Type::Void => QiValue::Void,
            Type::Bool => QiValue::Bool(reader.read_bool()?),
            Type::Int8 => QiValue::Int8(reader.read_u8()? as i8),
            Type::UInt8 => QiValue::UInt8(reader.read_u8()?),
            Type::Int16 => QiValue::Int16(reader.read_u16()? as i16),
            Type::UInt16 => QiValue::UInt16(reader.read_u16()?),
            Type::Int32 => QiValue::Int32(reader.read_u32()? as i32),
            Type::UInt32 => QiValue::UInt32(reader.read_u32()?),
            Type::Int64 => QiValue::Int64(reader.read_u64()? as i64),
            Type::UInt64 => QiValue::UInt64(reader.read_u64()?),
            Type::Float => QiValue::Float(reader.read_f32()?),
            Type::Double => QiValue::Double(reader.read_f64()?),
            Type::String => QiValue::String(reader.read_len_bytes()?.to_vec()),
            Type::Raw => QiValue::Raw(reader.read_len_bytes()?.to_vec()),
            Type::Dynamic => self.dynamic(depth)?,
            Type::Object => {
                let object = ObjectRef::decode_from(self.reader, self.options)?;
                QiValue::Object(Box::new(object))
            }
            Type::List(element) | Type::VarArgs(element) => {
                let inner = self.nested(depth)?;
                let count = self.reader.read_count(min_bytes(element))?;
                let mut items = Vec::with_capacity(self.capacity(count));
                for _ in 0..count {
                    items.push(self.value(element, inner)?);
                }
                QiValue::List(items)
            }
            Type::Map(key, value) => {
                let inner = self.nested(depth)?;
                let count = self.reader.read_count(min_bytes(key).saturating_add(min_bytes(value)))?;
                let mut pairs = Vec::with_capacity(self.capacity(count));
                for _ in 0..count {
                    let key = self.value(key, inner)?;
                    pairs.push((key, self.value(value, inner)?));
                }
                QiValue::Map(pairs)
            }
            Type::Tuple(tuple) => {
                let inner = self.nested(depth)?;
                let mut members = Vec::with_capacity(tuple.members.len());
                for member in &tuple.members {
                    members.push(self.value(member, inner)?);
                }
                QiValue::Tuple(members)
            }
            Type::Optional(inner_ty) => {
                let inner = self.nested(depth)?;
                match self.reader.read_bool()? {
                    false => QiValue::Optional(None),
                    true => QiValue::Optional(Some(Box::new(self.value(inner_ty, inner)?))),
                }
            }
            Type::Unknown | Type::None | Type::KwArgs(_) => {
                return Err(DecodeError::NotDecodable(ty.to_string()));
            }
        })
    }

    /// The depth of what a container holds, refused past the limit.
    fn nested(&self, depth: usize) -> Result<usize, DecodeError> {
        let limit = self.options.limits.max_depth;
        if depth >= limit {
            return Err(DecodeError::TooDeep { limit });
        }
        Ok(depth + 1)
    }

    /// Room reserved for `count` elements: never more than the budget allows.
    fn capacity(&self, count: u32) -> usize {
        (count as usize).min(self.budget).min(self.reader.remaining())
    }

    fn dynamic(&mut self, depth: usize) -> Result<QiValue, DecodeError> {
        let inner = self.nested(depth)?;
        let signature = self.reader.read_len_bytes()?;
        if signature.is_empty() {
            return Ok(QiValue::Dynamic(None));
        }
        let ty = Type::parse_bytes(signature, &self.options.limits, &mut self.budget)?;
        let value = self.value(&ty, inner)?;
        Ok(QiValue::Dynamic(Some(Box::new(Typed { ty, value }))))
    }
}

/// The fewest bytes a value of `ty` takes on the wire (0 for what never decodes).
pub(crate) fn min_bytes(ty: &Type) -> usize {
    match ty {
        Type::Void | Type::Unknown | Type::None | Type::KwArgs(_) => 0,
        Type::Bool | Type::Int8 | Type::UInt8 | Type::Optional(_) => 1,
        Type::Int16 | Type::UInt16 => 2,
        Type::Int32 | Type::UInt32 | Type::Float => 4,
        Type::Int64 | Type::UInt64 | Type::Double => 8,
        Type::String | Type::Raw | Type::Dynamic | Type::List(_) | Type::VarArgs(_) | Type::Map(..) => 4,
        // A meta-object (three empty maps and an empty string), a service id and an object id.
        Type::Object => 24,
        Type::Tuple(tuple) => {
            tuple.members.iter().fold(0usize, |sum, member| sum.saturating_add(min_bytes(member)))
        }
    }
}
