//! ALMotion's methods over its tasks (running, or postponed until their joints are free):
//! list them, kill one, all, or those using some joints, and ask whether joints are free.
//! A kill is answered as done: the queries after it agree with it at once.

use naobroker_framework::{CallError, ModuleContext, Value};

use super::ALMotion;
use crate::engine::ToEngine;

/// `[name, id, [joints]]` of each running task.
pub(super) fn get_task_list(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<Vec<Value>, CallError> {
    let client = &this.client;
    client.catch_up();
    let tasks = client.tasks.borrow();
    Ok(tasks
        .iter()
        .map(|task| {
            let joints: Vec<Value> = client
                .body
                .motors
                .iter()
                .enumerate()
                .filter(|(motor, _)| task.motors & (1 << motor) != 0)
                .map(|(_, motor)| motor.name.as_str().into())
                .collect();
            Value::Array(vec![task.name.into(), task.id.into(), Value::Array(joints)])
        })
        .collect())
}

/// Stops the task `id`; true when it was running.
pub(super) fn kill_task(this: &mut ALMotion, _: &ModuleContext, (id,): (u64,)) -> Result<bool, CallError> {
    this.client.catch_up();
    let running = this.client.tasks.borrow().iter().any(|task| task.id == id);
    if running {
        this.client.kill(ToEngine::Kill(id), |task| task.id == id)?;
    }
    Ok(running)
}

pub(super) fn kill_all(this: &mut ALMotion, _: &ModuleContext, (): ()) -> Result<(), CallError> {
    this.client.kill(ToEngine::KillAll, |_| true)
}

pub(super) fn are_resources_available(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names,): (Value,),
) -> Result<bool, CallError> {
    this.client.catch_up();
    let joints = this.joints(&names)?;
    let mask = this.client.body.motor_mask(&joints);
    Ok(!this.client.tasks.borrow().iter().any(|task| task.motors & mask != 0))
}

pub(super) fn kill_tasks_using_resources(
    this: &mut ALMotion,
    _: &ModuleContext,
    (names,): (Value,),
) -> Result<(), CallError> {
    let joints = this.joints(&names)?;
    let mask = this.client.body.motor_mask(&joints);
    this.client.kill(ToEngine::KillMotors(mask), |task| task.motors & mask != 0)
}
