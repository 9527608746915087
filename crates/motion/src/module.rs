use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::os::unix::net::UnixDatagram;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm::cycle::Wakeups;
use naobroker_dcm::HookConnection;
use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext, Value};
use naobroker_rtslots::RtSlots;
use tokio::sync::oneshot;

use crate::body::Body;
use crate::engine::{Channel, FromEngine, ToEngine, TrackEntry};
use crate::runner::{MotionShared, MotionThread};
use crate::trajectory::Track;

mod joint_methods;
mod unapplied;

/// NAO's StandInit posture (radians), used by `wakeUp`.
const STAND_INIT: &[(&str, f64)] = &[
    ("HeadYaw", 0.0),
    ("HeadPitch", 0.0),
    ("LShoulderPitch", 1.40),
    ("LShoulderRoll", 0.30),
    ("LElbowYaw", -1.39),
    ("LElbowRoll", -1.00),
    ("LWristYaw", 0.0),
    ("LHand", 0.25),
    ("LHipYawPitch", 0.0),
    ("LHipRoll", 0.0),
    ("LHipPitch", -0.45),
    ("LKneePitch", 0.70),
    ("LAnklePitch", -0.35),
    ("LAnkleRoll", 0.0),
    ("RHipRoll", 0.0),
    ("RHipPitch", -0.45),
    ("RKneePitch", 0.70),
    ("RAnklePitch", -0.35),
    ("RAnkleRoll", 0.0),
    ("RShoulderPitch", 1.40),
    ("RShoulderRoll", -0.30),
    ("RElbowYaw", 1.39),
    ("RElbowRoll", 1.00),
    ("RWristYaw", 0.0),
    ("RHand", 0.25),
];

/// NAO's crouch, used by `rest` before stiffness goes off.
const CROUCH: &[(&str, f64)] = &[
    ("HeadYaw", 0.0),
    ("HeadPitch", 0.0),
    ("LShoulderPitch", 1.50),
    ("LShoulderRoll", 0.15),
    ("LElbowYaw", -1.20),
    ("LElbowRoll", -0.50),
    ("LWristYaw", 0.0),
    ("LHand", 0.25),
    ("LHipYawPitch", 0.0),
    ("LHipRoll", 0.0),
    ("LHipPitch", -0.87),
    ("LKneePitch", 2.09),
    ("LAnklePitch", -1.18),
    ("LAnkleRoll", 0.0),
    ("RHipRoll", 0.0),
    ("RHipPitch", -0.87),
    ("RKneePitch", 2.09),
    ("RAnklePitch", -1.18),
    ("RAnkleRoll", 0.0),
    ("RShoulderPitch", 1.50),
    ("RShoulderRoll", -0.15),
    ("RElbowYaw", 1.20),
    ("RElbowRoll", 0.50),
    ("RWristYaw", 0.0),
    ("RHand", 0.25),
];

struct TaskInfo {
    id: u64,
    name: &'static str,
    motors: u64,
}

/// The API side of ALMotion, shared by its methods and their futures.
struct Client {
    body: Arc<Body>,
    commands: RefCell<rtrb::Producer<ToEngine>>,
    shared: Arc<MotionShared>,
    tasks: RefCell<Vec<TaskInfo>>,
    waiters: RefCell<HashMap<u64, oneshot::Sender<bool>>>,
    next_id: Cell<u64>,
    awake: Cell<bool>,
    /// What the motion thread reported and the API has not read yet.
    reports: RefCell<rtrb::Consumer<FromEngine>>,
    /// ALMemory writes (cycle and fall events), performed in order by one task.
    cycle_events: tokio::sync::mpsc::UnboundedSender<crate::events::MemoryWrite>,
    unapplied: unapplied::Unapplied,
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
    fn send(&self, command: ToEngine) -> Result<(), CallError> {
        self.commands
            .borrow_mut()
            .push(command)
            .map_err(|_| CallError::new("the motion command queue is full"))?;
        self.unapplied.command_sent();
        Ok(())
    }

    fn start(
        &self,
        name: &'static str,
        tracks: Vec<TrackEntry>,
    ) -> Result<(u64, oneshot::Receiver<bool>), CallError> {
        let id = self.next_id.get() + 1;
        let motors = tracks.iter().fold(0u64, |mask, t| mask | 1 << t.motor);
        // Sent first: a task the queue refused is not listed, and its id is not used.
        self.send(ToEngine::Start(Box::new(crate::engine::MotionTask { id, tracks })))?;
        self.next_id.set(id);
        let (done, finished) = oneshot::channel();
        self.waiters.borrow_mut().insert(id, done);
        self.tasks.borrow_mut().push(TaskInfo { id, name, motors });
        Ok((id, finished))
    }

    /// Start a task now; the future waits for its end (`Ok(false)`: killed or replaced).
    /// Dropping the future first kills the task (`stop` on a posted call).
    fn begin(
        self: &Rc<Self>,
        name: &'static str,
        tracks: Vec<TrackEntry>,
    ) -> Result<impl std::future::Future<Output = Result<bool, CallError>>, CallError> {
        let (id, finished) = self.start(name, tracks)?;
        let guard = KillOnDrop { client: Rc::clone(self), id, armed: true };
        Ok(async move {
            // The whole guard moves in (not just the field assigned below), to live as long.
            let mut guard = guard;
            let completed = finished.await.map_err(|_| CallError::new("ALMotion stopped"))?;
            guard.armed = false;
            Ok(completed)
        })
    }

    /// Start a task and wait for its end; `Ok(false)` when it was killed or replaced.
    async fn run(self: Rc<Self>, name: &'static str, tracks: Vec<TrackEntry>) -> Result<bool, CallError> {
        self.begin(name, tracks)?.await
    }

    /// Joint names, for messages about the joints of a call.
    fn names(&self, joints: &[usize]) -> Vec<&str> {
        joints.iter().map(|&joint| self.joint_name(joint)).collect()
    }

    /// A track of a joint (on its motor).
    fn track(&self, joint: usize, channel: Channel, track: Track, relative: bool) -> TrackEntry {
        TrackEntry { motor: self.body.joints[joint].motor, channel, track, relative }
    }

    /// Read everything the motion thread reported. Queries call it first: under the
    /// manual clock the motion cycle has run when `DCM.step` returns, so what they
    /// answer is exact whatever the order in which wake-ups reach this thread.
    fn catch_up(&self) {
        loop {
            let Ok(report) = self.reports.borrow_mut().pop() else { break };
            match report {
                FromEngine::Finished { id, completed } => {
                    self.tasks.borrow_mut().retain(|t| t.id != id);
                    if let Some(waiter) = self.waiters.borrow_mut().remove(&id) {
                        let _ = waiter.send(completed);
                    }
                }
                report => crate::events::writes_for(report, &self.cycle_events),
            }
        }
    }

    fn joint_name(&self, joint: usize) -> &str {
        &self.body.joints[joint].name
    }

    fn clamp_angle(&self, joint: usize, angle: f64) -> f64 {
        let spec = &self.body.joints[joint].spec;
        let clamped = angle.clamp(spec.min, spec.max);
        if clamped != angle {
            tracing::info!(joint = %spec.name, requested = angle, clamped, "target out of the joint's range: clamped");
        }
        clamped
    }

    /// Tracks moving `joints` to `targets` (clamped to their ranges) with the smooth
    /// profile, peak speed at most `fraction` of each joint's maximum; all joints arrive
    /// together.
    fn with_speed(&self, joints: &[usize], targets: &[f64], fraction: f64) -> Vec<TrackEntry> {
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

    fn posture(&self, posture: &[(&str, f64)]) -> Result<(Vec<usize>, Vec<f64>), CallError> {
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

    fn stiffness_tracks(&self, joints: &[usize], targets: &[f64], seconds: f64) -> Vec<TrackEntry> {
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

/// The ALMotion module.
pub struct ALMotion {
    client: Rc<Client>,
    slots: Arc<RtSlots>,
    broker: Broker,
    period_ms: i32,
    signal: Option<(UnixDatagram, tokio::sync::mpsc::UnboundedReceiver<crate::events::MemoryWrite>)>,
    _thread: MotionThread,
    _hook: HookConnection,
}

impl ALMotion {
    pub(crate) fn new(
        body: Arc<Body>,
        started: crate::runner::Started,
        hook: HookConnection,
        slots: Arc<RtSlots>,
        broker: Broker,
        period_ms: i32,
    ) -> ALMotion {
        let (cycle_events, to_raise) = tokio::sync::mpsc::unbounded_channel();
        let motors = body.motors.len();
        let client = Rc::new(Client {
            body,
            commands: RefCell::new(started.commands),
            shared: started.shared,
            tasks: RefCell::default(),
            waiters: RefCell::default(),
            next_id: Cell::new(0),
            awake: Cell::new(false),
            reports: RefCell::new(started.reports),
            cycle_events,
            unapplied: unapplied::Unapplied::new(motors),
        });
        ALMotion {
            client,
            slots,
            broker,
            period_ms,
            signal: Some((started.wake, to_raise)),
            _thread: started.thread,
            _hook: hook,
        }
    }

    fn joints(&self, names: &Value) -> Result<Vec<usize>, CallError> {
        Ok(self.client.body.resolve(names)?)
    }

    fn follow(&mut self) {
        let Some((wake, to_raise)) = self.signal.take() else { return };
        let client = Rc::clone(&self.client);
        if client.shared.switches.fall_available() {
            crate::events::declare_fall_events(&client.cycle_events);
        }
        actix_rt::spawn(crate::events::write_all(self.broker.clone(), to_raise));
        actix_rt::spawn(async move {
            let wakeups = match Wakeups::new(wake) {
                Ok(wakeups) => wakeups,
                Err(error) => {
                    tracing::error!(%error, "cannot follow the motion cycle");
                    return;
                }
            };
            while wakeups.next().await {
                client.catch_up();
            }
        });
    }
}

impl Module for ALMotion {
    fn name(&self) -> String {
        "ALMotion".into()
    }

    fn description(&self) -> String {
        "Joint motion: angles, stiffness, tasks, on a 20 ms cycle driving the DCM.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("setAngles", "setAngles(names, angles, fractionMaxSpeed): move toward the angles, non-blocking (reactive).",
            joint_methods::set_angles)
        .add("changeAngles", "changeAngles(names, changes, fractionMaxSpeed): setAngles relative to the current command.",
            joint_methods::change_angles)
        .add_async_checked("angleInterpolation", "angleInterpolation(names, angleLists, timeLists, isAbsolute): smooth key frames (times in s); blocks until done.",
            joint_methods::angle_interpolation)
        .add_async_checked("angleInterpolationWithSpeed", "angleInterpolationWithSpeed(names, targetAngles, fractionMaxSpeed): blocks until done.",
            joint_methods::angle_interpolation_with_speed)
        .add_async_checked("angleInterpolationBezier", "angleInterpolationBezier(names, times, controlPoints): control points [angle, [type, dTime, dAngle], [type, dTime, dAngle]] (or a bare angle) per key.",
            joint_methods::angle_interpolation_bezier)
        .add("getAngles", "getAngles(names, useSensors): commanded angles, or measured ones.",
            |this, _, (names, sensors): (Value, bool)| {
                this.joints(&names)?.iter().map(|&j| {
                    let motor = &this.client.body.motors[this.client.body.joints[j].motor];
                    Ok(if sensors {
                        let index = this.slots.layout().index_of(&motor.sensor_key).ok_or_else(|| CallError::new("no position sensor"))?;
                        this.slots.get(index)
                    } else {
                        this.client.shared.position(this.client.body.joints[j].motor)
                    })
                }).collect::<Result<Vec<f64>, CallError>>()
            })
        .add("getBodyNames", "Joints of a chain (Head, LArm, LLeg, RLeg, RArm) or group (Body, Joints, Actuators, JointActuators, Arms, Legs), or \"Chains\".",
            |this, _, (name,): (String,)| Ok(this.client.body.body_names(&name)?))
        .add("getLimits", "[[min, max, maxVelocity, maxTorque], ...] of the joints.", |this, _, (names,): (Value,)| {
            Ok(this.joints(&names)?.iter().map(|&j| {
                let s = &this.client.body.joints[j].spec;
                vec![s.min, s.max, s.max_velocity, s.max_torque]
            }).collect::<Vec<_>>())
        })
        .add("getSensorNames", "Joints that have a position sensor.", |this, _, ()| {
            Ok(this.client.body.joints.iter().map(|j| j.name.clone()).collect::<Vec<_>>())
        })
        .add("getMotionCycleTime", "Motion cycle period in ms.", |this, _, ()| Ok(this.period_ms))
        .add("setStiffnesses", "setStiffnesses(names, stiffnesses): at once (one value for all, or one each).",
            joint_methods::set_stiffnesses)
        .add("getStiffnesses", "Commanded stiffness of the joints.", joint_methods::get_stiffnesses)
        .add_async_checked("stiffnessInterpolation", "stiffnessInterpolation(names, stiffnessLists, timeLists): blocks until done.",
            joint_methods::stiffness_interpolation)
        .add_async("wakeUp", "Stiffness on, then the StandInit posture. Blocks until done.", |this, _, ()| {
            let client = Rc::clone(&this.client);
            async move {
                let all: Vec<usize> = (0..client.body.joints.len()).collect();
                let ones = vec![1.0; all.len()];
                client.clone().run("wakeUp", client.stiffness_tracks(&all, &ones, 0.5)).await?;
                let (joints, targets) = client.posture(STAND_INIT)?;
                let completed = client.clone().run("wakeUp", client.with_speed(&joints, &targets, 0.3)).await?;
                client.awake.set(completed);
                Ok(())
            }
        })
        .add_async("rest", "The crouch posture, then stiffness off. Blocks until done.", |this, _, ()| {
            let client = Rc::clone(&this.client);
            async move {
                let (joints, targets) = client.posture(CROUCH)?;
                client.clone().run("rest", client.with_speed(&joints, &targets, 0.3)).await?;
                let all: Vec<usize> = (0..client.body.joints.len()).collect();
                let zeros = vec![0.0; all.len()];
                client.clone().run("rest", client.stiffness_tracks(&all, &zeros, 0.5)).await?;
                client.awake.set(false);
                Ok(())
            }
        })
        .add("robotIsWakeUp", "True after wakeUp, until rest.", |this, _, ()| Ok(this.client.awake.get()))
        .add("getTaskList", "[[name, id, [joints]], ...] of the running tasks.", |this, _, ()| {
            this.client.catch_up();
            Ok(this.client.tasks.borrow().iter().map(|task| {
                let joints: Vec<Value> = this.client.body.motors.iter().enumerate().filter(|(m, _)| task.motors & (1 << m) != 0).map(|(_, motor)| motor.name.as_str().into()).collect();
                Value::Array(vec![task.name.into(), task.id.into(), Value::Array(joints)])
            }).collect::<Vec<_>>())
        })
        .add("killTask", "Stops a task; true when it was running.", |this, _, (id,): (u64,)| {
            this.client.catch_up();
            let running = this.client.tasks.borrow().iter().any(|t| t.id == id);
            if running {
                this.client.send(ToEngine::Kill(id))?;
            }
            Ok(running)
        })
        .add("killAll", "Stops every task within one motion cycle.", |this, _, ()| this.client.send(ToEngine::KillAll))
        .add("areResourcesAvailable", "True when no task uses these joints.", |this, _, (names,): (Value,)| {
            this.client.catch_up();
            let joints = this.joints(&names)?;
            let mask = this.client.body.motor_mask(&joints);
            Ok(!this.client.tasks.borrow().iter().any(|t| t.motors & mask != 0))
        })
        .add("killTasksUsingResources", "Stops the tasks using these joints.", |this, _, (names,): (Value,)| {
            let joints = this.joints(&names)?;
            this.client.send(ToEngine::KillMotors(this.client.body.motor_mask(&joints)))
        })
        .add("stats", "Motion cycles run, skipped (fell behind), requests the DCM refused, cycles an arm was held by collision protection, reports the API fell too far behind to receive.", |this, _, ()| {
            let load = |c: &std::sync::atomic::AtomicU64| Value::from(c.load(std::sync::atomic::Ordering::Relaxed));
            Ok(Value::Map(vec![
                ("cycles".into(), load(&this.client.shared.cycles)),
                ("skipped".into(), load(&this.client.shared.skipped)),
                ("refused".into(), load(&this.client.shared.refused)),
                ("collision_stops".into(), load(&this.client.shared.collision_stops)),
                ("reports_dropped".into(), load(&this.client.shared.reports_dropped)),
            ]))
        });
        crate::reflexes::methods(m, |this| &this.client.shared);
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.follow();
    }
}
