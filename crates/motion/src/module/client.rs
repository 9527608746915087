//! The API side of ALMotion that its methods share: the command queue to the motion
//! thread, the running tasks and their waiters, and the tracks a call turns into.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_framework::{CallError, Value};
use tokio::sync::oneshot;

use super::moves::Moves;
use super::unapplied::Unapplied;
use crate::body::Body;
use crate::engine::walking::{Goal, MoveLimits, MoveOrder, MoveOutcome};
use crate::engine::{Channel, FromEngine, MotionTask, ToEngine, TrackEntry};
use crate::events::{MemoryWrite, MOVE_FAILED};
use crate::runner::MotionShared;
use crate::trajectory::Track;

pub(super) struct TaskInfo {
    pub(super) id: u64,
    pub(super) name: &'static str,
    pub(super) motors: u64,
    /// A blocking call's task, which waits for busy joints ([`Claim::WaitUntilFree`]).
    waits: bool,
}

/// How a task gets the joints it moves or stiffens, NAOqi's rule per method (docs/motion.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// Reactive calls (`setAngles`, `setStiffnesses`, ...) and the postures of `wakeUp` and
    /// `rest`: the task takes its joints from the tasks using them, at once.
    TakeOver,
    /// Blocking calls: the task is postponed until no running task uses its joints.
    WaitUntilFree,
}

/// Blocking calls' tasks under way or postponed at once, all clients together: the engine
/// keeps room for as many postponed tasks, allocated at start.
const WAITING_TASKS: usize = crate::engine::POSTPONED_TASKS;

/// The API side of ALMotion, shared by its methods and their futures.
pub(super) struct Client {
    pub(super) body: Arc<Body>,
    commands: RefCell<crate::runner::Commands>,
    pub(super) shared: Arc<MotionShared>,
    pub(super) tasks: RefCell<Vec<TaskInfo>>,
    waiters: RefCell<HashMap<u64, oneshot::Sender<bool>>>,
    next_id: Cell<u64>,
    pub(super) awake: Cell<bool>,
    /// What the motion thread reported and the API has not read yet.
    reports: RefCell<rtrb::Consumer<FromEngine>>,
    /// ALMemory writes (cycle and fall events), performed in order by one task.
    pub(super) cycle_events: tokio::sync::mpsc::UnboundedSender<MemoryWrite>,
    pub(super) unapplied: Unapplied,
    /// The moves sent to the walk and not ended yet, with who waits for each.
    pub(super) moves: Moves,
    /// What the breath calls set.
    pub(super) breath: super::breath::BreathSettings,
}

/// Kills its task if the waiting call goes away first (`stop` on a posted call).
struct KillOnDrop {
    client: Rc<Client>,
    id: u64,
    armed: bool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.client.send(ToEngine::Kill(self.id));
        }
    }
}

impl Client {
    pub(super) fn new(
        body: Arc<Body>,
        commands: crate::runner::Commands,
        shared: Arc<MotionShared>,
        reports: rtrb::Consumer<FromEngine>,
        cycle_events: tokio::sync::mpsc::UnboundedSender<MemoryWrite>,
    ) -> Client {
        let motors = body.motors.len();
        Client {
            body,
            commands: RefCell::new(commands),
            shared,
            tasks: RefCell::default(),
            waiters: RefCell::default(),
            next_id: Cell::new(0),
            awake: Cell::new(false),
            reports: RefCell::new(reports),
            cycle_events,
            unapplied: Unapplied::new(motors),
            moves: Moves::default(),
            breath: Default::default(),
        }
    }

    pub(super) fn send(&self, command: ToEngine) -> Result<(), CallError> {
        self.commands
            .borrow_mut()
            .push(command)
            .map_err(|_| CallError::refused("the motion command queue is full"))?;
        self.unapplied.command_sent();
        Ok(())
    }

    /// Start a reactive call's task: it takes its joints over at once.
    pub(super) fn start(
        &self,
        name: &'static str,
        tracks: Vec<TrackEntry>,
    ) -> Result<(u64, oneshot::Receiver<bool>), CallError> {
        self.start_claiming(name, tracks, Claim::TakeOver)
    }

    fn start_claiming(
        &self,
        name: &'static str,
        tracks: Vec<TrackEntry>,
        claim: Claim,
    ) -> Result<(u64, oneshot::Receiver<bool>), CallError> {
        let waits = claim == Claim::WaitUntilFree;
        if waits && self.tasks.borrow().iter().filter(|task| task.waits).count() >= WAITING_TASKS {
            return Err(CallError::refused(format!(
                "{WAITING_TASKS} blocking motion tasks are already under way or waiting \
                 for their joints (the limit); try again once one has ended"
            )));
        }
        let id = self.next_id.get() + 1;
        let motors = tracks.iter().fold(0u64, |mask, t| mask | 1 << t.motor);
        let task = Box::new(MotionTask { id, tracks });
        // Sent first: a task the queue refused is not listed, and its id is not used.
        self.send(if waits { ToEngine::StartWhenFree(task) } else { ToEngine::Start(task) })?;
        self.next_id.set(id);
        let (done, finished) = oneshot::channel();
        self.waiters.borrow_mut().insert(id, done);
        self.tasks.borrow_mut().push(TaskInfo { id, name, motors, waits });
        Ok((id, finished))
    }

    /// List a task the engine runs outside the joint tasks (a whole-body path, `wbGoToBalance`)
    /// under a new id, with the motors it drives; the receiver tells its end. The caller
    /// sends its orders next, and [`Client::forget`]s it if they could not be sent. It never
    /// waits for busy joints: the whole body takes the legs at once, as the walk does.
    pub(super) fn register(&self, name: &'static str, motors: u64) -> (u64, oneshot::Receiver<bool>) {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        let (done, finished) = oneshot::channel();
        self.waiters.borrow_mut().insert(id, done);
        self.tasks.borrow_mut().push(TaskInfo { id, name, motors, waits: false });
        (id, finished)
    }

    /// A registered task whose orders never reached the engine.
    pub(super) fn forget(&self, id: u64) {
        self.waiters.borrow_mut().remove(&id);
        self.tasks.borrow_mut().retain(|task| task.id != id);
    }

    /// Wait for the end of task `id` (`Ok(false)`: killed or replaced); dropping the future
    /// first kills it (`stop` on a posted call).
    pub(super) fn wait_for_end(
        self: &Rc<Self>,
        id: u64,
        finished: oneshot::Receiver<bool>,
    ) -> impl std::future::Future<Output = Result<bool, CallError>> {
        let guard = KillOnDrop { client: Rc::clone(self), id, armed: true };
        async move {
            let mut guard = guard;
            let completed = finished.await.map_err(|_| CallError::new("ALMotion stopped"))?;
            guard.armed = false;
            Ok(completed)
        }
    }

    /// Start a blocking call's task (postponed while its joints are busy); the future waits
    /// for its end (`Ok(false)`: killed or replaced). Dropping the future first kills the
    /// task (`stop` on a posted call).
    pub(super) fn begin(
        self: &Rc<Self>,
        name: &'static str,
        tracks: Vec<TrackEntry>,
    ) -> Result<impl std::future::Future<Output = Result<bool, CallError>>, CallError> {
        self.begin_claiming(name, tracks, Claim::WaitUntilFree)
    }

    fn begin_claiming(
        self: &Rc<Self>,
        name: &'static str,
        tracks: Vec<TrackEntry>,
        claim: Claim,
    ) -> Result<impl std::future::Future<Output = Result<bool, CallError>>, CallError> {
        let (id, finished) = self.start_claiming(name, tracks, claim)?;
        let guard = KillOnDrop { client: Rc::clone(self), id, armed: true };
        Ok(async move {
            // The whole guard moves in (not just the field assigned below), to live as long.
            let mut guard = guard;
            let completed = finished.await.map_err(|_| CallError::new("ALMotion stopped"))?;
            guard.armed = false;
            Ok(completed)
        })
    }

    /// Start a task taking its joints over (the postures of `wakeUp` and `rest`) and wait for
    /// its end; `Ok(false)` when it was killed or replaced.
    pub(super) async fn run(
        self: Rc<Self>,
        name: &'static str,
        tracks: Vec<TrackEntry>,
    ) -> Result<bool, CallError> {
        self.begin_claiming(name, tracks, Claim::TakeOver)?.await
    }

    /// Kill the tasks `ends` picks, and forget them at once: `getTaskList` and
    /// `areResourcesAvailable` agree with the kill before the motion cycle performs it
    /// (their waiters hear of the end when it does).
    pub(super) fn kill(&self, command: ToEngine, ends: impl Fn(&TaskInfo) -> bool) -> Result<(), CallError> {
        self.send(command)?;
        self.tasks.borrow_mut().retain(|task| !ends(task));
        Ok(())
    }

    /// Joint names, for messages about the joints of a call.
    pub(super) fn names(&self, joints: &[usize]) -> Vec<&str> {
        joints.iter().map(|&joint| self.joint_name(joint)).collect()
    }

    /// A track of a joint (on its motor).
    pub(super) fn track(&self, joint: usize, channel: Channel, track: Track, relative: bool) -> TrackEntry {
        TrackEntry { motor: self.body.joints[joint].motor, channel, track, relative }
    }

    /// Read everything the motion thread reported. Queries call it first: under the
    /// manual clock the motion cycle has run when `DCM.step` returns, so what they
    /// answer is exact whatever the order in which wake-ups reach this thread.
    pub(super) fn catch_up(&self) {
        loop {
            let Ok(report) = self.reports.borrow_mut().pop() else { break };
            match report {
                FromEngine::Finished { id, completed } => {
                    self.tasks.borrow_mut().retain(|t| t.id != id);
                    if let Some(waiter) = self.waiters.borrow_mut().remove(&id) {
                        let _ = waiter.send(completed);
                    }
                }
                FromEngine::MoveEnded { id, outcome } => self.move_ended(id, outcome),
                report => crate::events::writes_for(report, &self.cycle_events),
            }
        }
    }

    /// The motion thread reported the end of move `id`: `ALMotion/MoveFailed` when the
    /// robot fell or a leg went limp.
    fn move_ended(&self, id: u64, outcome: MoveOutcome) {
        self.moves.ended(id, outcome);
        let reason = match outcome {
            MoveOutcome::Fell => "the robot fell",
            MoveOutcome::Limp => "a leg lost its stiffness",
            MoveOutcome::LeftTheGround => "the feet left the ground",
            MoveOutcome::Obstacle => "an obstacle is within the security distance",
            MoveOutcome::Arrived | MoveOutcome::Replaced | MoveOutcome::Killed => return,
        };
        self.move_failed(reason, 1);
    }

    /// `ALMotion/MoveFailed`: `[reason, status, [x, y, θ]]`, status 0 when the move never
    /// started and 1 when it stopped, with where the robot is.
    pub(super) fn move_failed(&self, reason: &str, status: i32) {
        tracing::warn!(reason, "ALMotion/MoveFailed");
        let [x, y, theta] = self.shared.walk.position(false);
        let position = Value::Array(vec![x.into(), y.into(), theta.into()]);
        let value = Value::Array(vec![reason.into(), status.into(), position]);
        let _ = self.cycle_events.send(MemoryWrite::Raise(MOVE_FAILED, value));
    }

    /// Send a move; the receiver tells how it ends.
    pub(super) fn send_move(
        &self,
        goal: Goal,
        limits: MoveLimits,
    ) -> Result<oneshot::Receiver<MoveOutcome>, CallError> {
        let id = self.moves.next_id();
        self.send(ToEngine::Move(MoveOrder { id, goal, limits }))?;
        self.moves.sent(id);
        Ok(self.moves.wait_for(id))
    }

    fn joint_name(&self, joint: usize) -> &str {
        &self.body.joints[joint].name
    }

    pub(super) fn clamp_angle(&self, joint: usize, angle: f64) -> f64 {
        let spec = &self.body.joints[joint].spec;
        let clamped = angle.clamp(spec.min, spec.max);
        if clamped != angle {
            tracing::info!(
                joint = %spec.name,
                requested = angle,
                clamped,
                "target out of the joint's range: clamped"
            );
        }
        clamped
    }

    /// Tracks moving `joints` to `targets` (clamped to their ranges) with the smooth
    /// profile, peak speed at most `fraction` of each joint's maximum; all joints arrive
    /// together.
    pub(super) fn with_speed(&self, joints: &[usize], targets: &[f64], fraction: f64) -> Vec<TrackEntry> {
        let targets: Vec<f64> =
            joints.iter().zip(targets).map(|(&joint, &target)| self.clamp_angle(joint, target)).collect();
        let duration = joints
            .iter()
            .zip(&targets)
            .map(|(&joint, &target)| {
                let motor = self.body.joints[joint].motor;
                // The smooth profile peaks at 1.5 × the mean speed.
                1.5 * (target - self.shared.position(motor)).abs()
                    / (fraction * self.body.joints[joint].spec.max_velocity)
            })
            .fold(0.02, f64::max);
        joints
            .iter()
            .zip(targets)
            .map(|(&joint, target)| TrackEntry {
                motor: self.body.joints[joint].motor,
                channel: Channel::Position,
                track: Track::Keys { times: vec![duration], values: vec![target] },
                relative: false,
            })
            .collect()
    }

    pub(super) fn posture(&self, posture: &[(&str, f64)]) -> Result<(Vec<usize>, Vec<f64>), CallError> {
        let mut joints = Vec::new();
        let mut targets = Vec::new();
        for (name, angle) in posture {
            if let Ok(found) = self.body.expand(name) {
                joints.extend(&found);
                targets.push(*angle);
            }
        }
        Ok((joints, targets))
    }

    pub(super) fn stiffness_tracks(
        &self,
        joints: &[usize],
        targets: &[f64],
        seconds: f64,
    ) -> Vec<TrackEntry> {
        joints
            .iter()
            .zip(targets)
            .map(|(&joint, &target)| TrackEntry {
                motor: self.body.joints[joint].motor,
                channel: Channel::Stiffness,
                track: Track::Keys { times: vec![seconds], values: vec![target.clamp(0.0, 1.0)] },
                relative: false,
            })
            .collect()
    }
}
