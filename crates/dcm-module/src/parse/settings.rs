//! `calibration` and `preferences` arguments as NAOqi sends them, read into the DCM's types,
//! and preference values shown back in ALMemory.

use naobroker_dcm::calibration::{Calibration, CalibrationError};
use naobroker_framework::Value;
use naobroker_protocol::value_excerpt;
use naobroker_robot::device::DeviceModel;
use naobroker_robot::preferences::PreferenceValue;

use super::{number, ArgumentError, Field};

/// The only calibration NAOqi's tools send.
const CALIBRATION_SHAPE: &str = "[name, \"Manual\", \"InPosition\", reference]";

/// Why a `calibration` request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationRequestError {
    #[error("a calibration request is {CALIBRATION_SHAPE}, got {0}")]
    Shape(String),
    #[error(
        "only the manual calibration in position is supported: {CALIBRATION_SHAPE}, got {mode} and {when}"
    )]
    Mode { mode: String, when: String },
    #[error("the name must be a string, got {0}")]
    Name(String),
    #[error(transparent)]
    Reference(#[from] ArgumentError),
    #[error(transparent)]
    Joint(#[from] CalibrationError),
}

/// `calibration([name, "Manual", "InPosition", reference])`, the name being the joint's
/// position actuator or sensor.
pub fn calibration(model: &DeviceModel, input: &Value) -> Result<Calibration, CalibrationRequestError> {
    let Some([name, mode, when, reference]) = input.as_array().map(Vec::as_slice) else {
        return Err(CalibrationRequestError::Shape(value_excerpt(input)));
    };
    if (mode.as_str(), when.as_str()) != (Some("Manual"), Some("InPosition")) {
        let (mode, when) = (value_excerpt(mode), value_excerpt(when));
        return Err(CalibrationRequestError::Mode { mode, when });
    }
    let name = name.as_str().ok_or_else(|| CalibrationRequestError::Name(value_excerpt(name)))?;
    let reference = number(reference, Field::Named("the reference angle"))?;
    Ok(Calibration::new(model, name, reference)?)
}

/// A preference value NAOqi's files cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreferenceValueError {
    #[error("the preference value is out of the int64 range")]
    OutOfRange,
    #[error("the preference value is not valid UTF-8")]
    NotUtf8,
    #[error("a preference value is a string, a number or a boolean, got {0}")]
    Unsupported(String),
}

/// A value sent by a client: a string, a number or a boolean.
pub fn preference_value(value: &Value) -> Result<PreferenceValue, PreferenceValueError> {
    match value {
        Value::Boolean(flag) => Ok(PreferenceValue::Bool(*flag)),
        Value::Integer(integer) => {
            integer.as_i64().map(PreferenceValue::Int).ok_or(PreferenceValueError::OutOfRange)
        }
        Value::F32(number) => Ok(PreferenceValue::Float(f64::from(*number))),
        Value::F64(number) => Ok(PreferenceValue::Float(*number)),
        Value::String(text) => text
            .as_str()
            .map(|text| PreferenceValue::Text(text.to_owned()))
            .ok_or(PreferenceValueError::NotUtf8),
        other => Err(PreferenceValueError::Unsupported(value_excerpt(other))),
    }
}

/// A preference as ALMemory shows it.
pub fn preference_to_value(value: &PreferenceValue) -> Value {
    match value {
        PreferenceValue::Bool(flag) => Value::Boolean(*flag),
        PreferenceValue::Int(integer) => Value::from(*integer),
        PreferenceValue::Float(number) => Value::F64(*number),
        PreferenceValue::Text(text) => Value::from(text.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use naobroker_robot::device::RobotDescription;

    use super::*;

    fn request(name: &str, mode: &str, reference: Value) -> Value {
        Value::Array(vec![name.into(), mode.into(), "InPosition".into(), reference])
    }

    #[test]
    fn a_calibration_is_read_then_checked_by_the_dcm() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let yaw = "HeadYaw/Position/Actuator/Value";
        let read = calibration(&model, &request(yaw, "Manual", Value::F64(0.1))).unwrap();
        assert_eq!(read, Calibration::new(&model, yaw, 0.1).unwrap());
        let refused = |input: Value| calibration(&model, &input).unwrap_err().to_string();
        assert!(refused(request(yaw, "Auto", Value::F64(0.1))).contains("only the manual"));
        assert!(refused(Value::from("HeadYaw")).starts_with("a calibration request is [name"));
        let reference = refused(request(yaw, "Manual", Value::from("zero")));
        assert_eq!(reference, "the reference angle must be a number, got \"zero\"");
        assert!(refused(request(yaw, "Manual", Value::F64(3.0))).contains("outside HeadYaw's range"));
        let name = Value::Array(vec![1.into(), "Manual".into(), "InPosition".into(), 0.into()]);
        assert_eq!(refused(name), "the name must be a string, got 1");
    }

    #[test]
    fn preference_values_cross_to_and_from_the_wire() {
        for value in [Value::Boolean(true), Value::from(3), Value::F64(0.5), Value::from("NAO")] {
            assert_eq!(preference_to_value(&preference_value(&value).unwrap()), value);
        }
        assert_eq!(preference_value(&Value::F32(0.5)).unwrap(), PreferenceValue::Float(0.5));
        assert_eq!(preference_value(&Value::from(u64::MAX)), Err(PreferenceValueError::OutOfRange));
        let error = preference_value(&Value::Array(vec![])).unwrap_err().to_string();
        assert!(error.contains("a string, a number"), "{error}");
    }
}
