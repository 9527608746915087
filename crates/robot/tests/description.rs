//! The shipped NAO V6 description parsed once into every part its readers take, and a
//! `[physics]` step a simulator could not run refused when the description is read.

use naobroker_robot::device::{DescriptionError, RobotDescription, NAO_V6};

#[test]
fn the_shipped_description_has_every_part() {
    let robot = RobotDescription::nao_v6();
    assert_eq!(robot.joints.len(), 25);
    let kinematics = robot.kinematics.expect("[kinematics]");
    assert_eq!(kinematics.joints.len(), 26, "the 25 joints and RHipYawPitch");
    let physics = robot.physics.expect("[physics]");
    assert_eq!(physics.coupled.get("RHipYawPitch").map(String::as_str), Some("LHipYawPitch"));
    assert!(!physics.shapes.is_empty());
}

#[test]
fn a_physics_step_that_does_not_divide_the_lola_cycle_is_refused() {
    let text = NAO_V6.replace("timestep_s = 0.002", "timestep_s = 0.005");
    let error = RobotDescription::parse(&text).unwrap_err();
    assert!(matches!(error, DescriptionError::Timestep(_)), "{error}");
    assert_eq!(error.to_string(), "[physics] timestep_s 0.005 does not divide LoLA's 12 ms cycle");
    let text = NAO_V6.replace("timestep_s = 0.002", "timestep_s = 0.003");
    assert!(RobotDescription::parse(&text).is_ok(), "4 steps a cycle");
}
