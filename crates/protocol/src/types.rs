//! A method's typed signature: the types of its parameters and result, as its Rust types give
//! them, carried beside the readable text in `Register` so that a wire with typed values (the
//! qi wire) renders its own signatures from types, never from text.

use std::fmt;

use rmpv::Value;

use crate::excerpt::value_excerpt;
use crate::ProtocolError;

/// The type of one parameter or result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueType {
    /// No value: a method that answers nothing (`()`).
    Void,
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float32,
    Float64,
    String,
    /// Any value (NAOqi's ALValue, the SDK's `Value`).
    Dynamic,
    /// Any value of a type known by its name only (a map, a struct of the module's own).
    Named(std::string::String),
    /// An array of values of one type.
    List(Box<ValueType>),
    /// An array of values of these types, in this order.
    Tuple(Vec<ValueType>),
    /// A value that may be left out, when it is a trailing parameter, or nil.
    Optional(Box<ValueType>),
}

/// A method's parameters and result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodType {
    pub params: Vec<ValueType>,
    pub returns: ValueType,
}

const SCALARS: [(ValueType, &str); 14] = [
    (ValueType::Void, "()"),
    (ValueType::Bool, "bool"),
    (ValueType::Int8, "i8"),
    (ValueType::UInt8, "u8"),
    (ValueType::Int16, "i16"),
    (ValueType::UInt16, "u16"),
    (ValueType::Int32, "i32"),
    (ValueType::UInt32, "u32"),
    (ValueType::Int64, "i64"),
    (ValueType::UInt64, "u64"),
    (ValueType::Float32, "f32"),
    (ValueType::Float64, "f64"),
    (ValueType::String, "String"),
    (ValueType::Dynamic, "Value"),
];

impl ValueType {
    /// The scalar's name, as Rust spells the type; `None` for a composite.
    fn scalar_name(&self) -> Option<&'static str> {
        SCALARS.iter().find(|(scalar, _)| scalar == self).map(|(_, name)| *name)
    }

    /// On the wire: a scalar as its name (`"f64"`), a composite as `["Vec", T]`,
    /// `["Option", T]`, `["Tuple", [T, ...]]` or `["Named", name]`.
    pub fn to_value(&self) -> Value {
        if let Some(name) = self.scalar_name() {
            return Value::from(name);
        }
        let (tag, inner) = match self {
            ValueType::List(item) => ("Vec", item.to_value()),
            ValueType::Optional(item) => ("Option", item.to_value()),
            ValueType::Tuple(members) => {
                ("Tuple", Value::Array(members.iter().map(Self::to_value).collect()))
            }
            ValueType::Named(name) => ("Named", Value::from(name.as_str())),
            _ => unreachable!("every scalar has a name"),
        };
        Value::Array(vec![Value::from(tag), inner])
    }

    /// Read back what [`Self::to_value`] wrote; the frame's nesting limit bounds the recursion.
    pub fn from_value(value: &Value) -> Result<ValueType, ProtocolError> {
        let bad = || ProtocolError::NotAnEnvelope(format!("not a value type: {}", value_excerpt(value)));
        if let Some(name) = value.as_str() {
            let found = SCALARS.iter().find(|(_, scalar)| *scalar == name);
            return found.map(|(scalar, _)| scalar.clone()).ok_or_else(bad);
        }
        let Some([tag, inner]) = value.as_array().map(Vec::as_slice) else { return Err(bad()) };
        Ok(match (tag.as_str(), inner) {
            (Some("Vec"), item) => ValueType::List(Box::new(Self::from_value(item)?)),
            (Some("Option"), item) => ValueType::Optional(Box::new(Self::from_value(item)?)),
            (Some("Tuple"), Value::Array(members)) => {
                ValueType::Tuple(members.iter().map(Self::from_value).collect::<Result<_, _>>()?)
            }
            (Some("Named"), Value::String(name)) => {
                ValueType::Named(name.as_str().ok_or_else(bad)?.to_owned())
            }
            _ => return Err(bad()),
        })
    }
}

impl MethodType {
    /// On the wire: `[[param, ...], returns]`.
    pub fn to_value(&self) -> Value {
        let params = self.params.iter().map(ValueType::to_value).collect();
        Value::Array(vec![Value::Array(params), self.returns.to_value()])
    }

    pub fn from_value(value: &Value) -> Result<MethodType, ProtocolError> {
        match value.as_array().map(Vec::as_slice) {
            Some([Value::Array(params), returns]) => Ok(MethodType {
                params: params.iter().map(ValueType::from_value).collect::<Result<_, _>>()?,
                returns: ValueType::from_value(returns)?,
            }),
            _ => Err(ProtocolError::NotAnEnvelope(format!(
                "method types must be [[param, ...], returns], got {}",
                value_excerpt(value)
            ))),
        }
    }
}

/// As Rust spells the type: `Vec<(String, Value)>`, `Option<i64>`.
impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.scalar_name() {
            return f.write_str(name);
        }
        match self {
            ValueType::List(item) => write!(f, "Vec<{item}>"),
            ValueType::Optional(item) => write!(f, "Option<{item}>"),
            ValueType::Tuple(members) => write!(f, "({})", Joined(members)),
            ValueType::Named(name) => f.write_str(name),
            _ => unreachable!("every scalar has a name"),
        }
    }
}

/// The readable signature a method is listed with: `(String, Option<i64>) -> Vec<f64>`.
impl fmt::Display for MethodType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}) -> {}", Joined(&self.params), self.returns)
    }
}

struct Joined<'a>(&'a [ValueType]);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, item) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> MethodType {
        use ValueType::*;
        MethodType {
            params: vec![String, Optional(Box::new(Int64)), List(Box::new(Tuple(vec![String, Dynamic])))],
            returns: Tuple(vec![Bool, UInt8, Named("HashMap<String, f64>".into()), Float32, Void]),
        }
    }

    #[test]
    fn types_read_as_rust_spells_them() {
        assert_eq!(
            every_kind().to_string(),
            "(String, Option<i64>, Vec<(String, Value)>) -> (bool, u8, HashMap<String, f64>, f32, ())"
        );
    }

    #[test]
    fn types_cross_the_wire_and_nothing_else_reads_as_one() {
        let types = every_kind();
        assert_eq!(MethodType::from_value(&types.to_value()), Ok(types));
        for (scalar, _) in &SCALARS {
            assert_eq!(ValueType::from_value(&scalar.to_value()).as_ref(), Ok(scalar));
        }
        for wrong in [Value::from("f128"), Value::from(3), Value::Array(vec!["Vec".into()])] {
            assert!(ValueType::from_value(&wrong).is_err(), "{wrong}");
        }
        let tuple_of_nothing = Value::Array(vec!["Tuple".into(), "f64".into()]);
        assert!(ValueType::from_value(&tuple_of_nothing).is_err());
        assert!(MethodType::from_value(&Value::Array(vec![])).is_err());
    }
}
