//! ALMotion's everyday methods about the robot itself: `getSummary` (the joints' state and
//! the running tasks as text), `getRobotConfig` (what the body has), and `openHand`/
//! `closeHand` (a hand joint to 1.0 or 0.0, blocking).

use std::fmt::Write;
use std::future::Future;

use naobroker_framework::{excerpt, CallError, ModuleContext, Value};

use super::ALMotion;
use crate::body::BodyJoint;

/// The peak speed of `openHand`/`closeHand`, as a fraction of the hand's maximum: with
/// NAO's 4 units/s, a full stroke takes about 0.4 s, as long as NAOqi's.
const HAND_FRACTION: f64 = 0.9;

/// NAOqi's hardware version names: every part of a NAO V6 is version 6.0.
const NAO_V6_VERSION: &str = "VERSION_60";

/// NAOqi's summary: one line per joint (stiffness, commanded and sensed angle), then the
/// running tasks with their ids and joints.
pub(super) fn get_summary(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<String, CallError> {
    let client = &this.client;
    client.catch_up();
    let mut summary = String::new();
    let _ = writeln!(summary, "---------------------- Model ----------------------");
    let _ = writeln!(summary, "  {:<16}{:>10}{:>10}{:>10}", "Joint name", "Stiffness", "Command", "Sensor");
    for joint in &client.body.joints {
        let motor = joint.motor;
        let stiffness = client.unapplied.stiffness(motor, &client.shared);
        let command = client.shared.position(motor);
        let sensor = this.slots.layout().index_of(&client.body.motors[motor].sensor_key).map(|index| {
            let value = this.slots.get(index);
            format!("{value:>10.3}")
        });
        let sensor = sensor.unwrap_or_else(|| format!("{:>10}", "-"));
        let _ = writeln!(summary, "  {:<16}{stiffness:>10.3}{command:>10.3}{sensor}", joint.name);
    }
    let _ = writeln!(summary, "---------------------- Tasks ----------------------");
    let _ = writeln!(summary, "  {:<30}{:>6}  Joints", "Name", "ID");
    for task in client.tasks.borrow().iter() {
        let joints: Vec<&str> = client
            .body
            .motors
            .iter()
            .enumerate()
            .filter(|(motor, _)| task.motors & (1 << motor) != 0)
            .map(|(_, motor)| motor.name.as_str())
            .collect();
        let _ = writeln!(summary, "  {:<30}{:>6}  {}", task.name, task.id, joints.join(" "));
    }
    Ok(summary)
}

/// NAOqi's `[[names], [values]]`: the model type and versions, and which limbs the body
/// has, read from the robot description's joints.
pub(super) fn get_robot_config(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Value, CallError> {
    let joints = &this.client.body.joints;
    let count = |names: [&str; 2], of: fn(&BodyJoint) -> &str| {
        names.iter().filter(|name| joints.iter().any(|joint| of(joint) == **name)).count() as i64
    };
    let legs = count(["LLeg", "RLeg"], |joint| &joint.chain);
    let arms = count(["LArm", "RArm"], |joint| &joint.chain);
    let hands = count(["LHand", "RHand"], |joint| &joint.name);
    let extended_arms = joints.iter().any(|joint| joint.name.ends_with("WristYaw"));
    let model = match (legs, arms, hands) {
        (2, 2, 2) => "naoH25",
        (2, 2, _) => "naoH21",
        (0, 2, 2) => "naoT14",
        _ => "naoT2",
    };
    let names = [
        "Model Type",
        "Head Version",
        "Body Version",
        "Laser",
        "Legs",
        "Extended Arms",
        "Arms",
        "Hands",
        "Arm Version",
        "Number of Legs",
        "Number of Arms",
        "Number of Hands",
    ];
    let values: Vec<Value> = vec![
        model.into(),
        NAO_V6_VERSION.into(),
        NAO_V6_VERSION.into(),
        false.into(),
        (legs > 0).into(),
        extended_arms.into(),
        (arms > 0).into(),
        (hands > 0).into(),
        NAO_V6_VERSION.into(),
        legs.into(),
        arms.into(),
        hands.into(),
    ];
    Ok(Value::Array(vec![
        Value::Array(names.iter().map(|&name| name.into()).collect()),
        Value::Array(values),
    ]))
}

pub(super) fn open_hand(
    this: &mut ALMotion,
    _: &ModuleContext,
    (hand,): (String,),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    move_hand(this, "openHand", &hand, 1.0)
}

pub(super) fn close_hand(
    this: &mut ALMotion,
    _: &ModuleContext,
    (hand,): (String,),
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    move_hand(this, "closeHand", &hand, 0.0)
}

/// The hand joint to `target` with the smooth profile; the call ends when it is there.
fn move_hand(
    this: &ALMotion,
    task: &'static str,
    hand: &str,
    target: f64,
) -> Result<impl Future<Output = Result<(), CallError>>, CallError> {
    let client = &this.client;
    let joint = match hand {
        "LHand" | "RHand" => client.body.joints.iter().position(|joint| joint.name == hand),
        _ => None,
    }
    .ok_or_else(|| {
        CallError::bad_argument(format!(
            "{task}: handName must be \"LHand\" or \"RHand\" of this robot, got {}",
            excerpt(hand)
        ))
    })?;
    let finished = client.begin(task, client.with_speed(&[joint], &[target], HAND_FRACTION))?;
    Ok(async move { finished.await.map(|_| ()) })
}
