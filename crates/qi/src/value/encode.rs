//! Writing a value as a type: the value's variant must be the one the type names, lengths
//! must fit the wire's 32 bits, nesting is bounded as when decoding.

use std::fmt::Write as _;

use super::QiValue;
use crate::reader::{put_bytes, put_len};
use crate::{EncodeError, Options, Type};

pub(super) struct Encoder<'o> {
    pub(super) out: &'o mut Vec<u8>,
    pub(super) options: &'o Options,
}

impl Encoder<'_> {
    pub(super) fn value(&mut self, value: &QiValue, ty: &Type, depth: usize) -> Result<(), EncodeError> {
        let out = &mut *self.out;
        match (ty, value) {
            (Type::Void, QiValue::Void) => {}
            (Type::Bool, QiValue::Bool(b)) => out.push(*b as u8),
            (Type::Int8, QiValue::Int8(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::UInt8, QiValue::UInt8(n)) => out.push(*n),
            (Type::Int16, QiValue::Int16(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::UInt16, QiValue::UInt16(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::Int32, QiValue::Int32(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::UInt32, QiValue::UInt32(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::Int64, QiValue::Int64(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::UInt64, QiValue::UInt64(n)) => out.extend_from_slice(&n.to_le_bytes()),
            (Type::Float, QiValue::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Type::Double, QiValue::Double(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Type::String, QiValue::String(bytes)) | (Type::Raw, QiValue::Raw(bytes)) => {
                put_bytes(out, bytes)?
            }
            (Type::Dynamic, QiValue::Dynamic(content)) => {
                let inner = self.nested(depth)?;
                match content {
                    None => put_len(self.out, "signature", 0)?,
                    Some(typed) => {
                        let mut signature = String::new();
                        write!(signature, "{}", typed.ty).expect("writing to a String cannot fail");
                        put_bytes(self.out, signature.as_bytes())?;
                        self.value(&typed.value, &typed.ty, inner)?;
                    }
                }
            }
            (Type::Object, QiValue::Object(object)) => object.encode(self.out, self.options)?,
            (Type::List(element) | Type::VarArgs(element), QiValue::List(items)) => {
                let inner = self.nested(depth)?;
                put_len(self.out, "list", items.len())?;
                for item in items {
                    self.value(item, element, inner)?;
                }
            }
            (Type::Map(key_ty, value_ty), QiValue::Map(pairs)) => {
                let inner = self.nested(depth)?;
                put_len(self.out, "map", pairs.len())?;
                for (key, value) in pairs {
                    self.value(key, key_ty, inner)?;
                    self.value(value, value_ty, inner)?;
                }
            }
            (Type::Tuple(tuple), QiValue::Tuple(members)) => {
                let inner = self.nested(depth)?;
                if tuple.members.len() != members.len() {
                    return Err(EncodeError::Arity { expected: tuple.members.len(), found: members.len() });
                }
                for (member, member_ty) in members.iter().zip(&tuple.members) {
                    self.value(member, member_ty, inner)?;
                }
            }
            (Type::Optional(inner_ty), QiValue::Optional(content)) => {
                let inner = self.nested(depth)?;
                match content {
                    None => self.out.push(0),
                    Some(content) => {
                        self.out.push(1);
                        self.value(content, inner_ty, inner)?;
                    }
                }
            }
            (Type::Unknown | Type::None | Type::KwArgs(_), _) => {
                return Err(EncodeError::NotEncodable(ty.to_string()));
            }
            (_, value) => {
                return Err(EncodeError::Mismatch { expected: ty.to_string(), found: value.kind_name() });
            }
        }
        Ok(())
    }

    fn nested(&self, depth: usize) -> Result<usize, EncodeError> {
        let limit = self.options.limits.max_depth;
        if depth >= limit {
            return Err(EncodeError::TooDeep { limit });
        }
        Ok(depth + 1)
    }
}
