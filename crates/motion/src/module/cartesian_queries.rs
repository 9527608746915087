//! ALMotion's Cartesian queries: `getPosition`, `getTransform`, `getCOM`, `getMass`, read
//! from the Cartesian data the motion thread published last (docs/motion.md, "Cartesian
//! data").

use naobroker_framework::{excerpt, CallError, ModuleContext, Value};
use naobroker_kinematics::Transform;
use naobroker_protocol::value_excerpt;

use super::ALMotion;
use crate::cartesian::{Kinematics, Published, Source, Space};

/// The robot's model and the motion thread's published data, or why there are none.
pub(super) fn cartesian(this: &ALMotion) -> Result<(&Kinematics, &Published), CallError> {
    let kinematics = this.client.body.kinematics.as_deref();
    match (kinematics, this.client.shared.cartesian.as_ref()) {
        (Some(kinematics), Some(published)) => Ok((kinematics, published)),
        _ => Err(CallError::new("the robot description has no kinematic model ([kinematics])")),
    }
}

/// NAOqi's frame argument: `FRAME_TORSO` (0), `FRAME_WORLD` (1) or `FRAME_ROBOT` (2).
pub(super) fn space(argument: &str, value: &Value) -> Result<Space, CallError> {
    let code = value.as_i64().or_else(|| value.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64));
    code.and_then(Space::from_code).ok_or_else(|| {
        CallError::bad_argument(format!(
            "{argument}: expected FRAME_TORSO (0), FRAME_WORLD (1) or FRAME_ROBOT (2), got {}",
            value_excerpt(value)
        ))
    })
}

fn source(use_sensors: bool) -> Source {
    if use_sensors {
        Source::Sensed
    } else {
        Source::Commanded
    }
}

/// The frame of a name `getPosition` accepts: a chain's end, "Torso", a joint, a camera.
fn frame_slot(kinematics: &Kinematics, name: &str) -> Result<usize, CallError> {
    kinematics.frame_slot(name).ok_or_else(|| {
        CallError::bad_argument(format!(
            "unknown effector {:?}: expected Head, LArm, RArm, LLeg, RLeg, Torso, a joint or a camera",
            excerpt(name)
        ))
    })
}

/// FRAME_ROBOT in FRAME_WORLD: where the walk's odometry has taken the robot (from its
/// executed steps, or with the gyroscope's heading), on the ground (docs/walk.md).
pub(super) fn robot_in_world(this: &ALMotion, use_sensors: bool) -> Transform {
    let [x, y, theta] = this.client.shared.walk.position(use_sensors);
    Transform::from_position6d([x, y, 0.0, 0.0, 0.0, theta])
}

/// FRAME_TORSO in `space`, given FRAME_TORSO in FRAME_ROBOT.
pub(super) fn torso_in_space(
    this: &ALMotion,
    space: Space,
    torso_in_robot: Transform,
    source: Source,
) -> Transform {
    match space {
        Space::Torso => Transform::IDENTITY,
        Space::Robot => torso_in_robot,
        Space::World => robot_in_world(this, source == Source::Sensed).then(&torso_in_robot),
    }
}

/// The frame's transform in `space`, from the last published cycle.
fn transform_in(
    this: &ALMotion,
    published: &Published,
    slot: usize,
    space: Space,
    source: Source,
) -> Transform {
    let (in_torso, torso_in_robot) =
        published.read(|snapshot| (snapshot.transform(source, slot), snapshot.torso_in_robot(source)));
    torso_in_space(this, space, torso_in_robot, source).then(&in_torso)
}

/// The transform of `name`'s frame in `frame`: what `getPosition` and `getTransform` answer,
/// each in its own form.
pub(super) fn named_transform(
    this: &ALMotion,
    name: &str,
    frame: &Value,
    use_sensors: bool,
) -> Result<Transform, CallError> {
    let (kinematics, published) = cartesian(this)?;
    let slot = frame_slot(kinematics, name)?;
    let space = space("frame", frame)?;
    Ok(transform_in(this, published, slot, space, source(use_sensors)))
}

/// `getPosition(name, frame, useSensorValues)`: Position6D `[x, y, z, wx, wy, wz]`.
pub(super) fn get_position(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, frame, use_sensors): (String, Value, bool),
) -> Result<Vec<f64>, CallError> {
    Ok(named_transform(this, &name, &frame, use_sensors)?.to_position6d().to_vec())
}

/// `getTransform(name, frame, useSensorValues)`: the 4x4 matrix, row-major, 16 floats.
pub(super) fn get_transform(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, frame, use_sensors): (String, Value, bool),
) -> Result<Vec<f64>, CallError> {
    Ok(named_transform(this, &name, &frame, use_sensors)?.to_matrix16().to_vec())
}

/// `getCOM(name, frame, useSensorValues)`: the centre of mass of "Body", a chain, "Torso"
/// or a joint's link.
pub(super) fn get_com(
    this: &mut ALMotion,
    _: &ModuleContext,
    (name, frame, use_sensors): (String, Value, bool),
) -> Result<Vec<f64>, CallError> {
    let (kinematics, published) = cartesian(this)?;
    let slot = part_slot(kinematics, &name)?;
    let space = space("frame", &frame)?;
    let source = source(use_sensors);
    let (com, torso_in_robot) =
        published.read(|snapshot| (snapshot.com(source, slot), snapshot.torso_in_robot(source)));
    Ok(torso_in_space(this, space, torso_in_robot, source).apply(com).to_vec())
}

/// `getMass(name)`: kg, of "Body", a chain, "Torso" or a joint's link.
pub(super) fn get_mass(this: &mut ALMotion, _: &ModuleContext, (name,): (String,)) -> Result<f64, CallError> {
    let (kinematics, _) = cartesian(this)?;
    part_slot(kinematics, &name)?;
    kinematics
        .model
        .mass(&name)
        .ok_or_else(|| CallError::bad_argument(format!("unknown part {:?}", excerpt(&name))))
}

fn part_slot(kinematics: &Kinematics, name: &str) -> Result<usize, CallError> {
    kinematics.part_slot(name).ok_or_else(|| {
        CallError::bad_argument(format!(
            "unknown part {:?}: expected Body, Torso, a chain (Head, LArm, RArm, LLeg, RLeg) or a joint",
            excerpt(name)
        ))
    })
}
