//! NAOqi's `DCM.calibration([name, "Manual", "InPosition", reference])`: the joint is held
//! at a known angle, `reference`; its position sensor is made to read it there, and its
//! position actuator is shifted by the same angle, so that a command reaches the angle the
//! sensor then reports.

use naobroker_robot::device::{Conversion, DeviceModel, SUBDEVICE_PREFIX};

/// A validated calibration request.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The joint's position actuator and sensor.
    pub actuator: usize,
    pub sensor: usize,
    /// The angle the joint is held at.
    pub reference: f64,
}

/// Why a joint cannot be calibrated as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("{0} is not a joint's position actuator or sensor")]
    NotAJointPosition(String),
    #[error("{0} has no position actuator and sensor to calibrate")]
    NoPositionDevices(String),
    #[error("the reference {reference} is outside {joint}'s range [{min}, {max}]")]
    OutsideRange { reference: f64, joint: String, min: f64, max: f64 },
}

impl Calibration {
    /// The joint `name` held at `reference`: the name is the joint's position actuator (as
    /// NAOqi's tools send it) or sensor, with or without the prefix; the reference lies
    /// within the sensor's range.
    pub fn new(model: &DeviceModel, name: &str, reference: f64) -> Result<Calibration, CalibrationError> {
        let short = name.strip_prefix(SUBDEVICE_PREFIX).unwrap_or(name);
        let joint = short
            .strip_suffix("/Position/Actuator/Value")
            .or_else(|| short.strip_suffix("/Position/Sensor/Value"))
            .ok_or_else(|| CalibrationError::NotAJointPosition(name.to_owned()))?;
        let device = |kind: &str| format!("{joint}/Position/{kind}/Value");
        let (Some(actuator), Some(sensor)) =
            (model.actuator(&device("Actuator")), model.sensor(&device("Sensor")))
        else {
            return Err(CalibrationError::NoPositionDevices(joint.to_owned()));
        };
        let spec = &model.sensors[sensor];
        if !(spec.min..=spec.max).contains(&reference) {
            let joint = joint.to_owned();
            return Err(CalibrationError::OutsideRange { reference, joint, min: spec.min, max: spec.max });
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
    use naobroker_robot::device::RobotDescription;

    fn model() -> DeviceModel {
        DeviceModel::new(RobotDescription::nao_v6()).unwrap()
    }

    #[test]
    fn the_joint_is_named_by_its_position_actuator_or_sensor() {
        let model = model();
        let yaw =
            Calibration::new(&model, "Device/SubDeviceList/HeadYaw/Position/Actuator/Value", 0.1).unwrap();
        assert_eq!(yaw.actuator, model.actuator("HeadYaw/Position/Actuator/Value").unwrap());
        assert_eq!(yaw.sensor, model.sensor("HeadYaw/Position/Sensor/Value").unwrap());
        assert_eq!(Calibration::new(&model, "HeadYaw/Position/Sensor/Value", 0.1).unwrap(), yaw);
        let refused = |name: &str, reference: f64| Calibration::new(&model, name, reference).unwrap_err();
        let stiffness = "HeadYaw/Hardness/Actuator/Value";
        assert_eq!(refused(stiffness, 0.1), CalibrationError::NotAJointPosition(stiffness.into()));
        assert_eq!(
            refused("Nope/Position/Actuator/Value", 0.1),
            CalibrationError::NoPositionDevices("Nope".into())
        );
        let outside = refused("HeadYaw/Position/Actuator/Value", 3.0).to_string();
        assert!(outside.contains("outside HeadYaw's range"), "{outside}");
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
