//! Method parameter lists: decoding a call's argument array into a typed tuple, naming what
//! does not fit, and the typed signature a method's Rust types give.

use std::collections::{BTreeMap, HashMap};

use naobroker_protocol::{from_value, to_value, type_name_of, Value, ValueType};
use serde::de::DeserializeOwned;

use crate::error::ArgsError;

/// Turn a tuple of serde values into a call's argument array.
pub fn args_of<A: serde::Serialize>(args: A) -> Vec<Value> {
    match to_value(&args) {
        Value::Array(items) => items,
        Value::Nil => Vec::new(),
        single => vec![single],
    }
}

/// A type a method takes or answers, as the signature it is listed with says it: implemented
/// for the types module methods use; a module's own type implements it as
/// [`ValueType::Named`] (or as the type it serialises as).
pub trait Signature {
    fn value_type() -> ValueType;
}

macro_rules! signature_of {
    ($($rust:ty => $typed:expr),+ $(,)?) => {
        $(impl Signature for $rust {
            fn value_type() -> ValueType {
                $typed
            }
        })+
    };
}

signature_of! {
    () => ValueType::Void,
    bool => ValueType::Bool,
    i8 => ValueType::Int8,
    u8 => ValueType::UInt8,
    i16 => ValueType::Int16,
    u16 => ValueType::UInt16,
    i32 => ValueType::Int32,
    u32 => ValueType::UInt32,
    i64 => ValueType::Int64,
    u64 => ValueType::UInt64,
    usize => ValueType::UInt64,
    f32 => ValueType::Float32,
    f64 => ValueType::Float64,
    String => ValueType::String,
    &str => ValueType::String,
    Value => ValueType::Dynamic,
}

impl<T: Signature> Signature for Vec<T> {
    fn value_type() -> ValueType {
        ValueType::List(Box::new(T::value_type()))
    }
}

impl<T: Signature> Signature for Option<T> {
    fn value_type() -> ValueType {
        ValueType::Optional(Box::new(T::value_type()))
    }
}

/// A fixed-size array is sent as any array; its length is no part of a signature.
impl<T: Signature, const N: usize> Signature for [T; N] {
    fn value_type() -> ValueType {
        ValueType::List(Box::new(T::value_type()))
    }
}

impl<K: Signature, V: Signature> Signature for HashMap<K, V> {
    fn value_type() -> ValueType {
        ValueType::Named(format!("HashMap<{}, {}>", K::value_type(), V::value_type()))
    }
}

impl<K: Signature, V: Signature> Signature for BTreeMap<K, V> {
    fn value_type() -> ValueType {
        ValueType::Named(format!("BTreeMap<{}, {}>", K::value_type(), V::value_type()))
    }
}

/// A method's parameter list: a tuple of serde types decoded from the argument array.
///
/// Trailing `Option` parameters may be left out by the caller.
pub trait Args: Sized {
    /// The parameters' types, for signatures and error messages.
    fn types() -> Vec<ValueType>;
    /// Decode, naming the first argument that does not fit.
    fn decode(args: Vec<Value>) -> Result<Self, ArgsError>;
}

fn decode_one<T: DeserializeOwned + Signature>(
    index: usize,
    provided: usize,
    value: Value,
) -> Result<T, ArgsError> {
    let got = type_name_of(&value);
    from_value::<T>(value).map_err(|_| {
        let (position, expected) = (index + 1, T::value_type().to_string());
        if index >= provided {
            ArgsError::Missing { position, expected }
        } else {
            ArgsError::WrongType { position, expected, got }
        }
    })
}

impl Args for () {
    fn types() -> Vec<ValueType> {
        Vec::new()
    }
    fn decode(args: Vec<Value>) -> Result<Self, ArgsError> {
        if args.is_empty() {
            Ok(())
        } else {
            Err(ArgsError::NoneTaken { provided: args.len() })
        }
    }
}

macro_rules! impl_args {
    ($count:literal; $($name:ident $index:tt),+) => {
        impl<$($name: DeserializeOwned + Signature),+> Args for ($($name,)+) {
            fn types() -> Vec<ValueType> {
                vec![$($name::value_type()),+]
            }
            fn decode(args: Vec<Value>) -> Result<Self, ArgsError> {
                let provided = args.len();
                if provided > $count {
                    return Err(ArgsError::TooMany { taken: $count, provided });
                }
                let mut values = args.into_iter();
                Ok(($(decode_one::<$name>($index, provided, values.next().unwrap_or(Value::Nil))?,)+))
            }
        }
    };
}

impl_args!(1; A 0);
impl_args!(2; A 0, B 1);
impl_args!(3; A 0, B 1, C 2);
impl_args!(4; A 0, B 1, C 2, D 3);
impl_args!(5; A 0, B 1, C 2, D 3, E 4);
impl_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);

/// A result that is a tuple: an array of its members' types.
macro_rules! tuple_signature {
    ($($name:ident),+) => {
        impl<$($name: Signature),+> Signature for ($($name,)+) {
            fn value_type() -> ValueType {
                ValueType::Tuple(vec![$($name::value_type()),+])
            }
        }
    };
}

tuple_signature!(A);
tuple_signature!(A, B);
tuple_signature!(A, B, C);
tuple_signature!(A, B, C, D);
tuple_signature!(A, B, C, D, E);
tuple_signature!(A, B, C, D, E, F);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_rust_types() {
        assert_eq!(<Vec<Value>>::value_type(), ValueType::List(Box::new(ValueType::Dynamic)));
        assert_eq!(<Option<String>>::value_type().to_string(), "Option<String>");
        assert_eq!(<(String, Vec<(String, Value)>)>::types().len(), 2);
        assert_eq!(<[f64; 3]>::value_type().to_string(), "Vec<f64>");
        assert_eq!(<HashMap<String, f64>>::value_type().to_string(), "HashMap<String, f64>");
    }

    #[test]
    fn errors_name_the_argument_and_type() {
        let err = <(String, f64)>::decode(vec!["k".into(), "x".into()]).unwrap_err();
        assert_eq!(err.to_string(), "argument 2 must be f64, got string");
        let err = <(String, f64)>::decode(vec!["k".into()]).unwrap_err();
        assert_eq!(err.to_string(), "missing argument 2 (f64)");
        let err = <(String,)>::decode(vec!["k".into(), 1.into()]).unwrap_err();
        assert_eq!(err.to_string(), "takes 1 arguments, got 2");
        let err = <()>::decode(vec![1.into()]).unwrap_err();
        assert_eq!(err.to_string(), "takes no arguments, got 1");
        let ok = <(String, Option<i32>)>::decode(vec!["k".into()]).unwrap();
        assert_eq!(ok, ("k".to_owned(), None));
        let float_from_int = <(f64,)>::decode(vec![3.into()]).unwrap();
        assert_eq!(float_from_int, (3.0,));
    }
}
