//! Preferences over the shipped NAO V6's devices: a gain or offset key overrides its
//! device's conversion, within the bounds a calibration may go to.

use naobroker_robot::device::{Conversion, DeviceModel, DeviceSpec, RobotDescription};
use naobroker_robot::preferences::{check_conversion, PreferenceLimit, PreferenceValue, Preferences, Target};

#[test]
fn gain_and_offset_keys_override_the_device() {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let yaw = &model.actuators[model.actuator("HeadYaw/Position/Actuator/Value").unwrap()];
    let mut preferences = Preferences::default();
    assert_eq!(preferences.conversion(yaw), yaw.conversion());
    let key = "Device/SubDeviceList/HeadYaw/Position/Actuator/Offset";
    preferences.insert(Target::Head, key, PreferenceValue::Float(-12.5)).unwrap();
    assert_eq!(preferences.conversion(yaw), Conversion { gain: yaw.gain, offset: -12.5 });
}

fn device(name: &str) -> DeviceSpec {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let actuator = model.actuator(name).map(|index| model.actuators[index].clone());
    actuator.unwrap_or_else(|| model.sensors[model.sensor(name).unwrap()].clone())
}

#[test]
fn a_gain_keeps_its_sign_and_stays_within_half_to_twice_the_description() {
    let sensor = device("HeadYaw/Position/Sensor/Value");
    for gain in [0.5, 1.0, 1.05] {
        assert_eq!(check_conversion(&sensor, Conversion { gain, offset: 0.0 }), Ok(()), "{gain}");
    }
    for gain in [-1.0, 0.49, 2.01, 1e-310, f64::NAN, f64::INFINITY] {
        let error = check_conversion(&sensor, Conversion { gain, offset: 0.0 }).unwrap_err();
        assert!(matches!(error, PreferenceLimit::Gain { .. }), "{gain}: {error}");
        assert!(error.to_string().contains("0.5× to 2× the description's 1.0"), "{error}");
    }
}

#[test]
fn an_offset_keeps_the_range_within_a_tenth_of_it_beyond_the_description() {
    let actuator = device("HeadYaw/Position/Actuator/Value");
    let range = actuator.max - actuator.min;
    let shifted = |radians: f64| Conversion { gain: 4096.0, offset: -radians * 4096.0 };
    for radians in [0.2, -0.2, 0.099 * range, -0.099 * range] {
        assert_eq!(check_conversion(&actuator, shifted(radians)), Ok(()), "{radians}");
    }
    for radians in [0.101 * range, -0.101 * range, 100.0, f64::NAN] {
        let error = check_conversion(&actuator, shifted(radians)).unwrap_err();
        assert!(matches!(error, PreferenceLimit::Range { .. }), "{radians}: {error}");
    }
    // Twice the gain sends HeadYaw's limits twice as far: refused too.
    let error = check_conversion(&actuator, Conversion { gain: 8192.0, offset: 0.0 }).unwrap_err();
    let expected = "HeadYaw/Position/Actuator/Value: gain 8192.0, offset 0.0 map its range to \
        [-17086.0544, 17086.0544], beyond [-10251.6326, 10251.6326], the description's widened by \
        10% of the range each side";
    assert_eq!(error.to_string(), expected);
    let led = device("ChestBoard/Led/Red/Actuator/Value");
    assert_eq!(check_conversion(&led, Conversion { gain: led.gain * 1.05, offset: 0.0 }), Ok(()));
}
