//! Moving the robot to a posture through ALMotion: stiffness on first (as `wakeUp` does),
//! then one `angleInterpolationWithSpeed` task per step of the path, each followed by a
//! look at the sensors that raises `PostureChanged`/`PostureFamilyChanged` when they change.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use naobroker_framework::{Broker, CallError, ModuleContext, Proxy, Value, MEMORY_MODULE};

use crate::graph;
use crate::library::Posture;
use crate::recognise::Reading;

/// The torso angles the recogniser reads.
const INCLINATION_KEYS: [&str; 2] = [
    "Device/SubDeviceList/InertialSensor/AngleX/Sensor/Value",
    "Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value",
];
/// How long the stiffness takes to come on before the first move, as `wakeUp`'s.
const STIFFEN_S: f64 = 0.5;
/// NAOqi's default number of tries (`setMaxTryNumber`).
pub(crate) const DEFAULT_TRIES: u32 = 3;

pub(crate) const POSTURE_CHANGED: &str = "PostureChanged";
pub(crate) const FAMILY_CHANGED: &str = "PostureFamilyChanged";
/// What `getPosture`/`getPostureFamily` answer, and the events carry, for no posture.
pub(crate) const UNKNOWN: &str = "Unknown";

/// How a move goes to its posture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// `goToPosture`: through the safe intermediate postures.
    Safe,
    /// `applyPosture`: straight to it.
    Direct,
}

/// The state moves share: which move is the current one, its ALMotion task, the tries, and
/// the posture and family last announced.
pub(crate) struct Mover {
    broker: Broker,
    /// Bumped by every new move and by `stopMove`: an older move stops at its next step.
    generation: Cell<u64>,
    /// The ALMotion task (posted) the current move waits for.
    task: Cell<Option<u64>>,
    pub(crate) max_tries: Cell<u32>,
    announced: RefCell<(String, String)>,
}

impl Mover {
    pub(crate) fn new(broker: Broker) -> Mover {
        Mover {
            broker,
            generation: Cell::new(0),
            task: Cell::new(None),
            max_tries: Cell::new(DEFAULT_TRIES),
            announced: RefCell::new((String::new(), String::new())),
        }
    }

    /// Read the sensors, and raise the events when the posture or its family changed.
    pub(crate) async fn look(&self, context: &ModuleContext) -> Result<Reading, CallError> {
        let motion = context.proxy("ALMotion");
        let names: Vec<String> = motion.call_as("getBodyNames", ("Body",)).await?;
        let angles: Vec<f64> = motion.call_as("getAngles", ("Body", true)).await?;
        let inclination: Vec<Value> =
            context.proxy(MEMORY_MODULE).call_as("getListData", (INCLINATION_KEYS,)).await?;
        // A robot without an inertial unit counts as upright.
        let angle = |index: usize| inclination.get(index).and_then(Value::as_f64).unwrap_or(0.0);
        let reading =
            Reading { joints: names.into_iter().zip(angles).collect(), angle_x: angle(0), angle_y: angle(1) };
        self.announce(&reading);
        Ok(reading)
    }

    fn announce(&self, reading: &Reading) {
        let posture = reading.posture().map_or(UNKNOWN, |posture| posture.name);
        let family = reading.family().map_or(UNKNOWN, |family| family.name());
        let mut announced = self.announced.borrow_mut();
        let (last_posture, last_family) = &mut *announced;
        for (event, now, before) in
            [(POSTURE_CHANGED, posture, last_posture), (FAMILY_CHANGED, family, last_family)]
        {
            if before != now {
                *before = now.to_owned();
                if let Err(error) = self.broker.raise_event(event, now.into()) {
                    tracing::warn!(event, %error, "cannot raise a posture event");
                }
            }
        }
    }

    /// `stopMove`: the current move stops, its ALMotion task with it.
    pub(crate) async fn stop(&self, context: &ModuleContext) -> Result<(), CallError> {
        self.generation.set(self.generation.get() + 1);
        if let Some(task) = self.task.take() {
            context.proxy("ALMotion").call("stop", (task,)).await?;
        }
        Ok(())
    }

    /// Post an ALMotion method and wait for its end; `stop` ends it early.
    async fn run<A: serde::Serialize>(&self, motion: &Proxy, method: &str, args: A) -> Result<(), CallError> {
        let task = motion.post(method, args).await?;
        self.task.set(Some(task));
        let ended = motion.call("wait", (task, 0)).await;
        if self.task.get() == Some(task) {
            self.task.set(None);
        }
        ended.map(drop)
    }

    /// Go to `target` at `speed` (a fraction of the joints' top speed), up to the tries;
    /// true when the sensors then say the robot is in it.
    pub(crate) async fn go(
        self: Rc<Self>,
        context: ModuleContext,
        target: &'static Posture,
        speed: f64,
        route: Route,
    ) -> Result<bool, CallError> {
        self.stop(&context).await?;
        let generation = self.generation.get();
        let current = || self.generation.get() == generation;
        let motion = context.proxy("ALMotion");
        let stiffnesses: Vec<f64> = motion.call_as("getStiffnesses", ("Body",)).await?;
        if stiffnesses.iter().any(|&stiffness| stiffness < 1.0) {
            self.run(&motion, "stiffnessInterpolation", ("Body", 1.0, STIFFEN_S)).await?;
        }
        let names: Vec<String> = motion.call_as("getBodyNames", ("Body",)).await?;
        for _ in 0..self.max_tries.get() {
            let mut reading = self.look(&context).await?;
            let steps = match (route, reading.posture()) {
                (Route::Safe, Some(start)) if start != target => graph::path(start, target).split_off(1),
                (Route::Direct, _) | (Route::Safe, Some(_)) => vec![target],
                (Route::Safe, None) => match reading.nearest() {
                    Some(nearest) => graph::path(nearest, target),
                    None => {
                        tracing::warn!(
                            posture = target.name,
                            "the robot lies on a side: no path to a posture"
                        );
                        return Ok(false);
                    }
                },
            };
            for step in steps {
                if !current() {
                    return Ok(false);
                }
                let (joints, angles): (Vec<&str>, Vec<f64>) = step
                    .joints
                    .iter()
                    .filter(|(joint, _)| names.iter().any(|name| name == joint))
                    .copied()
                    .unzip();
                self.run(&motion, "angleInterpolationWithSpeed", (joints, angles, speed)).await?;
                reading = self.look(&context).await?;
            }
            if !current() {
                return Ok(false);
            }
            if reading.posture() == Some(target) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
