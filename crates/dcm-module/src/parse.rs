//! NAOqi's arguments to the DCM's methods read into the DCM's types: the one place the
//! DCM's wire values are looked at. Where a value sits (which list, which command) is kept
//! as a few numbers, and put into words only when the value is wrong.

mod requests;
mod settings;

pub use requests::{create_alias, RequestError, RequestParser};
pub use settings::{
    calibration, preference_to_value, preference_value, CalibrationRequestError, PreferenceValueError,
};

use std::fmt;

use naobroker_dcm::time::DcmTime;
use naobroker_framework::Value;
use naobroker_protocol::value_excerpt;

/// One command of a command list: `list` is `None` for `set`'s only list, else the
/// `setAlias` list's number; both numbers count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandAt {
    pub list: Option<usize>,
    pub command: usize,
}

impl fmt::Display for CommandAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.list {
            None => write!(f, "the command list, command {}", self.command),
            Some(list) => write!(f, "command list {list}, command {}", self.command),
        }
    }
}

/// Where in a call's arguments a value sits, numbers counting from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// An argument or one of its named parts: "the set request", "the update type".
    Named(&'static str),
    /// A `setAlias` time-mixed command list.
    CommandList(usize),
    Command(CommandAt),
    CommandValue(CommandAt),
    CommandTime(CommandAt),
    /// A `setAlias` time-separate time, value list, and value of a list.
    Time(usize),
    ValueList(usize),
    ListValue {
        list: usize,
        value: usize,
    },
    AliasMember(usize),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Named(name) => f.write_str(name),
            Field::CommandList(list) => write!(f, "command list {list}"),
            Field::Command(at) => write!(f, "{at}"),
            Field::CommandValue(at) => write!(f, "{at}: the value"),
            Field::CommandTime(at) => write!(f, "{at}: the time"),
            Field::Time(time) => write!(f, "time {time}"),
            Field::ValueList(list) => write!(f, "value list {list}"),
            Field::ListValue { list, value } => write!(f, "value list {list}, value {value}"),
            Field::AliasMember(member) => write!(f, "alias member {member}"),
        }
    }
}

/// A value of the wrong shape; `got` is a short excerpt of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    #[error("{field} must be an array, got {got}")]
    NotAnArray { field: Field, got: String },
    #[error("{field} must be a string, got {got}")]
    NotAString { field: Field, got: String },
    #[error("{field} must be a number, got {got}")]
    NotANumber { field: Field, got: String },
    #[error("{field} is out of range")]
    OutOfRange { field: Field },
    #[error("{field} must be an integer DCM time in ms, got {got}")]
    NotATime { field: Field, got: String },
    #[error("{field} must be [value, time] or [value, time, importance]")]
    NotACommand { field: Field },
}

pub(crate) fn array(value: &Value, field: Field) -> Result<&[Value], ArgumentError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(ArgumentError::NotAnArray { field, got: value_excerpt(other) }),
    }
}

pub(crate) fn string(value: &Value, field: Field) -> Result<&str, ArgumentError> {
    value.as_str().ok_or_else(|| ArgumentError::NotAString { field, got: value_excerpt(value) })
}

/// A float from any MessagePack number.
pub(crate) fn number(value: &Value, field: Field) -> Result<f64, ArgumentError> {
    match value {
        Value::F64(x) => Ok(*x),
        Value::F32(x) => Ok(f64::from(*x)),
        Value::Integer(i) => i.as_f64().ok_or(ArgumentError::OutOfRange { field }),
        other => Err(ArgumentError::NotANumber { field, got: value_excerpt(other) }),
    }
}

/// DCM times are int32 and roll over: a client that adds an offset to a time near
/// the roll-over without wrapping (Python does) still means the wrapped time.
pub(crate) fn time(value: &Value, field: Field) -> Result<DcmTime, ArgumentError> {
    match value {
        Value::Integer(i) => i.as_i64().map(|t| t as DcmTime).ok_or(ArgumentError::OutOfRange { field }),
        Value::F64(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(*x as i64 as DcmTime),
        other => Err(ArgumentError::NotATime { field, got: value_excerpt(other) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_put_into_words_only_when_wrong() {
        let at = CommandAt { list: Some(2), command: 3 };
        let error = number(&Value::from("x"), Field::CommandValue(at)).unwrap_err();
        assert_eq!(error.to_string(), "command list 2, command 3: the value must be a number, got \"x\"");
        let first = CommandAt { list: None, command: 1 };
        let error = time(&Value::F64(0.5), Field::CommandTime(first)).unwrap_err();
        let expected = "the command list, command 1: the time must be an integer DCM time in ms, got 0.5";
        assert_eq!(error.to_string(), expected);
        assert_eq!(time(&Value::from(i64::from(i32::MAX) + 1), Field::Time(1)), Ok(i32::MIN), "wrapped");
        assert_eq!(time(&Value::F64(20.0), Field::Time(1)), Ok(20));
        assert_eq!(number(&Value::from(u64::MAX), Field::Time(1)), Ok(u64::MAX as f64));
        let long = Value::Array(vec![Value::from(1); 10_000]);
        let error = string(&long, Field::AliasMember(4)).unwrap_err().to_string();
        assert!(
            error.starts_with("alias member 4 must be a string, got [1, 1") && error.len() < 200,
            "{error}"
        );
    }
}
