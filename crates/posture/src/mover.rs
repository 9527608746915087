//! Moving the robot to a posture through ALMotion: stiffness on first (as `wakeUp` does),
//! then per step of the path its transition's stand-up motion if it has one (one
//! `angleInterpolation` task), one `angleInterpolationWithSpeed` task per key pose and one to
//! the posture, each step followed by a look at the sensors that raises
//! `PostureChanged`/`PostureFamilyChanged` when they change. A step that lies the robot down or
//! gets it up pauses ALMotion's fall manager while it runs.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use naobroker_framework::{Broker, CallError, ModuleContext, Proxy, Value, MEMORY_MODULE};

use crate::graph;
use crate::library::Posture;
use crate::recognise::Reading;
use crate::transitions::{self, KeyFrame, Transition, STRAIGHT};

/// The torso angles the recogniser reads.
const INCLINATION_KEYS: [&str; 2] = [
    "Device/SubDeviceList/InertialSensor/AngleX/Sensor/Value",
    "Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value",
];
/// How long the stiffness takes to come on before the first move, as `wakeUp`'s.
const STIFFEN_S: f64 = 0.5;
/// How long a posture the sensors do not yet recognise at the end of its step is held before
/// they are read again: a body under load may still be swinging into it.
const SETTLE_S: f64 = 0.5;
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
    /// The move (its generation) that paused the reflexes and switches them back on.
    fall_manager_paused_by: Cell<Option<u64>>,
    /// Which reflexes that move switched off: the fall manager, the arms' collision protection.
    paused: Cell<[bool; 2]>,
}

impl Mover {
    pub(crate) fn new(broker: Broker) -> Mover {
        Mover {
            broker,
            generation: Cell::new(0),
            task: Cell::new(None),
            max_tries: Cell::new(DEFAULT_TRIES),
            announced: RefCell::new((String::new(), String::new())),
            fall_manager_paused_by: Cell::new(None),
            paused: Cell::new([false; 2]),
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
            let Some(steps) = steps(&reading, target, route) else {
                tracing::warn!(posture = target.name, "the robot lies on a side: no path to a posture");
                return Ok(false);
            };
            for (from, to) in steps {
                if !current() {
                    return Ok(false);
                }
                let transition = match (route, from) {
                    (Route::Safe, Some(from)) => transitions::between(from, to),
                    _ => &STRAIGHT,
                };
                let torso = from.map_or(reading.torso(), |from| Some(from.torso));
                let pause = match torso {
                    Some(torso) if transitions::lies_down_or_gets_up(torso, to.torso) => {
                        self.pause_reflexes(&context, generation).await?
                    }
                    _ => None,
                };
                if !self.step(&motion, &names, transition, to, speed, &current).await? {
                    return Ok(false);
                }
                reading = self.look(&context).await?;
                if reading.posture() != Some(to) && current() {
                    let (joints, angles) = table(&names, to.joints);
                    self.run(&motion, "angleInterpolation", (joints, angles, SETTLE_S, true)).await?;
                    reading = self.look(&context).await?;
                }
                drop(pause);
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

    /// One step of a path: the transition's key poses, then `to`; false when a newer move
    /// or `stopMove` ended it.
    async fn step(
        &self,
        motion: &Proxy,
        names: &[String],
        transition: &Transition,
        to: &Posture,
        speed: f64,
        current: &impl Fn() -> bool,
    ) -> Result<bool, CallError> {
        if !transition.motion.is_empty() {
            if !current() {
                return Ok(false);
            }
            let (joints, angles, times) = key_frames(names, transition.motion);
            self.run(motion, "angleInterpolation", (joints, angles, times, true)).await?;
        }
        let poses = transition.via.iter().map(|key| (&key.joints[..], key.speed));
        for (joints, pace) in poses.chain([(to.joints, transition.speed)]) {
            if !current() {
                return Ok(false);
            }
            let (joints, angles) = table(names, joints);
            self.run(motion, "angleInterpolationWithSpeed", (joints, angles, pace.for_move(speed))).await?;
        }
        Ok(true)
    }

    /// Switch the fall manager and the arms' collision protection off for the move
    /// `generation` (lying down and getting up: the robot tips over on purpose, and its arms
    /// push against the ground behind and beside the body), each unless it is off already
    /// (the user's choice, left alone) or a move before it switched it off (this move takes
    /// that over). The answer switches them back on when dropped: at the end of the step, or
    /// when the move ends in any other way.
    async fn pause_reflexes(
        self: &Rc<Self>,
        context: &ModuleContext,
        generation: u64,
    ) -> Result<Option<ReflexPause>, CallError> {
        if self.fall_manager_paused_by.get().is_none() {
            let motion = context.proxy("ALMotion");
            let mut paused = [false; 2];
            if motion.call_as::<bool, _>("getFallManagerEnabled", ()).await? {
                motion.call("setFallManagerEnabled", (false,)).await?;
                paused[0] = true;
            }
            let arms = async {
                let protected = motion.call_as::<bool, _>("getCollisionProtectionEnabled", ("Arms",)).await?;
                if protected {
                    motion.call("setCollisionProtectionEnabled", ("Arms", false)).await?;
                }
                Ok::<_, CallError>(protected)
            };
            match arms.await {
                Ok(protected) => paused[1] = protected,
                Err(error) => {
                    // Nothing records this pause yet: switch the fall manager back on here.
                    if paused[0] {
                        motion.call("setFallManagerEnabled", (true,)).await?;
                    }
                    return Err(error);
                }
            }
            if paused == [false; 2] {
                return Ok(None);
            }
            self.paused.set(paused);
        }
        self.fall_manager_paused_by.set(Some(generation));
        Ok(Some(ReflexPause { mover: Rc::clone(self), context: context.clone(), generation }))
    }
}

/// The reflexes switched off by a move, switched back on when this is dropped, unless a
/// newer move took the pause over.
struct ReflexPause {
    mover: Rc<Mover>,
    context: ModuleContext,
    generation: u64,
}

impl Drop for ReflexPause {
    fn drop(&mut self) {
        if self.mover.fall_manager_paused_by.get() != Some(self.generation) {
            return;
        }
        self.mover.fall_manager_paused_by.set(None);
        let [fall_manager, collision] = self.mover.paused.take();
        let motion = self.context.proxy("ALMotion");
        actix_rt::spawn(async move {
            if fall_manager {
                if let Err(error) = motion.call("setFallManagerEnabled", (true,)).await {
                    tracing::warn!(%error, "cannot switch the fall manager back on");
                }
            }
            if collision {
                if let Err(error) = motion.call("setCollisionProtectionEnabled", ("Arms", true)).await {
                    tracing::warn!(%error, "cannot switch the arms' collision protection back on");
                }
            }
        });
    }
}

/// The joints of `pose` the robot has (`names`), and their angles.
fn table<'a>(names: &[String], pose: &[(&'a str, f64)]) -> (Vec<&'a str>, Vec<f64>) {
    pose.iter().filter(|(joint, _)| names.iter().any(|name| name == joint)).copied().unzip()
}

/// The joints of a stand-up motion the robot has (`names`), and per joint its angle and
/// time at every key frame: `angleInterpolation`'s arguments.
fn key_frames(names: &[String], motion: &[KeyFrame]) -> (Vec<&'static str>, Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let times: Vec<f64> = motion.iter().map(|frame| frame.at_s).collect();
    let joints: Vec<&'static str> = motion[0]
        .joints
        .iter()
        .map(|(joint, _)| *joint)
        .filter(|joint| names.iter().any(|name| name == joint))
        .collect();
    let angles = joints
        .iter()
        .map(|joint| {
            let angle =
                |frame: &KeyFrame| frame.joints.iter().find(|(name, _)| name == joint).map(|(_, a)| *a);
            motion.iter().filter_map(angle).collect()
        })
        .collect();
    (joints.clone(), angles, vec![times; joints.len()])
}

/// The steps from where the robot is to `target`, each with the posture it starts from
/// (`None`: from no posture, straight to the nearest one); `None` when the robot lies on a
/// side or between upright and lying.
fn steps(
    reading: &Reading,
    target: &'static Posture,
    route: Route,
) -> Option<Vec<(Option<&'static Posture>, &'static Posture)>> {
    let start = reading.posture();
    Some(match (route, start) {
        (Route::Safe, Some(start)) if start != target => {
            graph::path(start, target).windows(2).map(|pair| (Some(pair[0]), pair[1])).collect()
        }
        (Route::Direct, _) | (Route::Safe, Some(_)) => vec![(start, target)],
        (Route::Safe, None) => {
            let path = graph::path(reading.nearest()?, target);
            let first = (None, path[0]);
            std::iter::once(first).chain(path.windows(2).map(|pair| (Some(pair[0]), pair[1]))).collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::{CROUCH, LYING_BACK, SIT, STAND, STAND_INIT};

    fn reading(posture: &Posture, angle_y: f64) -> Reading {
        let joints = posture.joints.iter().map(|(name, angle)| (name.to_string(), *angle)).collect();
        Reading { joints, angle_x: 0.0, angle_y }
    }

    fn names(steps: &[(Option<&Posture>, &Posture)]) -> Vec<(Option<&'static str>, &'static str)> {
        steps.iter().map(|(from, to)| (from.map(|from| from.name), to.name)).collect()
    }

    #[test]
    fn each_step_of_a_path_starts_from_the_posture_before_it() {
        let path = steps(&reading(&SIT, 0.0), &STAND, Route::Safe).unwrap();
        assert_eq!(
            names(&path),
            [(Some("Sit"), "Crouch"), (Some("Crouch"), "StandInit"), (Some("StandInit"), "Stand")]
        );
        let again = steps(&reading(&CROUCH, 0.0), &CROUCH, Route::Safe).unwrap();
        assert_eq!(names(&again), [(Some("Crouch"), "Crouch")], "the posture taken again");
        let direct = steps(&reading(&SIT, 0.0), &STAND, Route::Direct).unwrap();
        assert_eq!(names(&direct), [(Some("Sit"), "Stand")], "applyPosture: one straight step");
    }

    #[test]
    fn from_no_posture_the_first_step_goes_straight_to_the_nearest_one() {
        let mut bent = reading(&STAND_INIT, 0.0);
        bent.joints.iter_mut().filter(|(name, _)| name == "LKneePitch").for_each(|(_, angle)| *angle += 0.4);
        let path = steps(&bent, &CROUCH, Route::Safe).unwrap();
        assert_eq!(names(&path), [(None, "StandInit"), (Some("StandInit"), "Crouch")]);
        let lying = steps(&reading(&SIT, -1.4), &SIT, Route::Safe).unwrap();
        assert_eq!(names(&lying), [(None, "LyingBack"), (Some("LyingBack"), "Sit")]);
        let mut on_a_side = reading(&LYING_BACK, 0.0);
        on_a_side.angle_x = 1.4;
        assert_eq!(steps(&on_a_side, &SIT, Route::Safe), None);
    }

    #[test]
    fn key_frames_give_each_joint_the_robot_has_its_angles_and_the_frames_times() {
        let names = ["HeadPitch".to_string(), "LKneePitch".to_string()];
        let motion = transitions::between(&LYING_BACK, &SIT).motion;
        let (joints, angles, times) = key_frames(&names, motion);
        assert_eq!(joints, ["HeadPitch", "LKneePitch"]);
        assert_eq!(angles[1].len(), motion.len());
        assert_eq!(angles[1][1], 1.85, "the bridge's knees");
        assert_eq!(times[0], motion.iter().map(|frame| frame.at_s).collect::<Vec<_>>());
        assert_eq!(times[0], times[1]);
    }

    #[test]
    fn a_table_keeps_the_joints_the_robot_has_in_its_order() {
        let names = ["RHand".to_string(), "HeadYaw".to_string()];
        let (joints, angles) = table(&names, STAND.joints);
        assert_eq!(joints, ["HeadYaw", "RHand"]);
        assert_eq!(angles, [0.0, 0.300000012]);
    }
}
