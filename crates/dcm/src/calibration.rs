//! NAOqi's `DCM.calibration([name, "Manual", "InPosition", reference])`: the joint is held
//! at a known angle, `reference`; its position sensor is made to read it there, and its
//! position actuator is shifted by the same angle, so that a command reaches the angle the
//! sensor then reports.

use naobroker_framework::Value;

use crate::core::number;
use crate::device::{Conversion, DeviceModel};

/// A validated calibration request.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The joint's position actuator and sensor.
    pub actuator: usize,
    pub sensor: usize,
    /// The angle the joint is held at.
    pub reference: f64,
}

impl Calibration {
    /// `[name, "Manual", "InPosition", reference]`, the name being the joint's position
    /// actuator (as NAOqi's tools send it) or sensor, with or without the prefix.
    pub fn parse(model: &DeviceModel, input: &Value) -> Result<Calibration, String> {
        const SHAPE: &str = "[name, \"Manual\", \"InPosition\", reference]";
        let items = match input {
            Value::Array(items) if items.len() == 4 => items,
            _ => return Err(format!("a calibration request is {SHAPE}, got {input}")),
        };
        let text = |index: usize| items[index].as_str().unwrap_or_default();
        if (text(1), text(2)) != ("Manual", "InPosition") {
            return Err(format!(
                "only the manual calibration in position is supported: {SHAPE}, got {} and {}",
                items[1], items[2]
            ));
        }
        let name = items[0].as_str().ok_or_else(|| format!("the name must be a string, got {}", items[0]))?;
        let short = name.strip_prefix(crate::device::SUBDEVICE_PREFIX).unwrap_or(name);
        let joint = short
            .strip_suffix("/Position/Actuator/Value")
            .or_else(|| short.strip_suffix("/Position/Sensor/Value"))
            .ok_or_else(|| format!("{name} is not a joint's position actuator or sensor"))?;
        let device = |kind: &str| format!("{joint}/Position/{kind}/Value");
        let (Some(actuator), Some(sensor)) =
            (model.actuator(&device("Actuator")), model.sensor(&device("Sensor")))
        else {
            return Err(format!("{joint} has no position actuator and sensor to calibrate"));
        };
        let reference = number(&items[3], "the reference angle")?;
        let spec = &model.sensors[sensor];
        if !(spec.min..=spec.max).contains(&reference) {
            return Err(format!(
                "the reference {reference} is outside {joint}'s range [{}, {}]",
                spec.min, spec.max
            ));
        }
        Ok(Calibration { actuator, sensor, reference })
    }

    /// The sensor's and the actuator's new conversions, given what the sensor reads now
    /// (`sensor_value`) with its `sensor` conversion: both offsets move by `-Δ × gain`,
    /// `Δ = reference - sensor_value`. The sensor then reads `reference` where it read
    /// `sensor_value`, and a command `θ` drives the joint where `θ - Δ` drove it before.
    pub fn conversions(
        &self,
        sensor_value: f64,
        sensor: Conversion,
        actuator: Conversion,
    ) -> (Conversion, Conversion) {
        let shift = self.reference - sensor_value;
        let shifted = |conversion: Conversion| Conversion {
            gain: conversion.gain,
            offset: conversion.offset - shift * conversion.gain,
        };
        (shifted(sensor), shifted(actuator))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::RobotDescription;

    fn model() -> DeviceModel {
        DeviceModel::new(RobotDescription::nao_v6()).unwrap()
    }

    fn request(name: &str, mode: &str, reference: f64) -> Value {
        Value::Array(vec![name.into(), mode.into(), "InPosition".into(), Value::F64(reference)])
    }

    #[test]
    fn the_joint_is_named_by_its_position_actuator_or_sensor() {
        let model = model();
        let yaw = Calibration::parse(
            &model,
            &request("Device/SubDeviceList/HeadYaw/Position/Actuator/Value", "Manual", 0.1),
        )
        .unwrap();
        assert_eq!(yaw.actuator, model.actuator("HeadYaw/Position/Actuator/Value").unwrap());
        assert_eq!(yaw.sensor, model.sensor("HeadYaw/Position/Sensor/Value").unwrap());
        assert_eq!(
            Calibration::parse(&model, &request("HeadYaw/Position/Sensor/Value", "Manual", 0.1)).unwrap(),
            yaw
        );
        let refused = |input: Value| Calibration::parse(&model, &input).unwrap_err();
        assert!(refused(request("HeadYaw/Hardness/Actuator/Value", "Manual", 0.1))
            .contains("not a joint's position"));
        assert!(
            refused(request("Nope/Position/Actuator/Value", "Manual", 0.1)).contains("no position actuator")
        );
        assert!(refused(request("HeadYaw/Position/Actuator/Value", "Auto", 0.1)).contains("only the manual"));
        assert!(refused(request("HeadYaw/Position/Actuator/Value", "Manual", 3.0))
            .contains("outside HeadYaw's range"));
        assert!(refused(Value::from("HeadYaw")).contains("a calibration request is"));
    }

    #[test]
    fn both_offsets_shift_by_the_same_angle() {
        let calibration = Calibration { actuator: 0, sensor: 0, reference: 0.25 };
        let sensor = Conversion { gain: 1.0, offset: 0.0 };
        let actuator = Conversion { gain: 4096.0, offset: 0.0 };
        let (sensor, actuator) = calibration.conversions(0.05, sensor, actuator);
        // The reading that gave 0.05 now gives the reference.
        assert!((sensor.sensor_value(0.05) - 0.25).abs() < 1e-12);
        // A command of 0.25 now sends what 0.05 sent before: where the joint is.
        assert_eq!(actuator.to_hardware(0.25), (0.05f64 * 4096.0).round() as i64);
    }
}
