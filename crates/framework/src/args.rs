//! Method parameter lists: decoding a call's argument array into a typed tuple, naming what does not fit.

use naobroker_protocol::{from_value, to_value, type_name_of, Value};
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

/// A method's parameter list: a tuple of serde types decoded from the argument array.
///
/// Trailing `Option` parameters may be left out by the caller.
pub trait Args: Sized {
    /// Short type names of the parameters, for signatures and error messages.
    fn type_names() -> Vec<String>;
    /// Decode, naming the first argument that does not fit.
    fn decode(args: Vec<Value>) -> Result<Self, ArgsError>;
}

/// `alloc::vec::Vec<rmpv::Value>` → `Vec<Value>`.
pub(crate) fn short_type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut word = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
        } else {
            out.push_str(word.rsplit("::").next().unwrap_or(""));
            word.clear();
            out.push(c);
        }
    }
    out.push_str(word.rsplit("::").next().unwrap_or(""));
    out
}

fn decode_one<T: DeserializeOwned>(index: usize, provided: usize, value: Value) -> Result<T, ArgsError> {
    let got = type_name_of(&value);
    from_value::<T>(value).map_err(|_| {
        let (position, expected) = (index + 1, short_type_name::<T>());
        if index >= provided {
            ArgsError::Missing { position, expected }
        } else {
            ArgsError::WrongType { position, expected, got }
        }
    })
}

impl Args for () {
    fn type_names() -> Vec<String> {
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
        impl<$($name: DeserializeOwned),+> Args for ($($name,)+) {
            fn type_names() -> Vec<String> {
                vec![$(short_type_name::<$name>()),+]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short() {
        assert_eq!(short_type_name::<Vec<Value>>(), "Vec<Value>");
        assert_eq!(short_type_name::<Option<String>>(), "Option<String>");
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
