//! Proof that the motion thread does not allocate (nor free) while tasks start, replace one
//! another, arrive and are killed, smart stiffness lowers idle joints and gives them back,
//! the robot falls, comes to rest and stands up again, and walks (moves replaced, stopped,
//! killed by a task on a leg), and balances with the whole body (the centre of mass to one
//! foot, paths of the other foot and of the torso, replaced and killed), while every cycle
//! updates and
//! publishes the Cartesian data (forward kinematics of the sensed and commanded angles): the
//! motion cycle runs on its real-time thread, in lockstep with a manual-clock DCM on the
//! simulated NAO, counted from its first cycle.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use naobroker_alloc_counter::{counted, start_counting, Counting};
use naobroker_backend_sim::SimRobot;
use naobroker_balance::{FootState, Side};
use naobroker_dcm::cycle::{
    ClockMode, CycleConfig, CycleThread, DcmSlots, Phase, RequestChannel, StartedCycle,
};
use naobroker_kinematics::Pose;
use naobroker_kinematics::Transform;
use naobroker_motion::body::Body;
use naobroker_motion::cartesian::Source;
use naobroker_motion::engine::walking::{Goal, MoveLimits, MoveOrder, MoveOutcome};
use naobroker_motion::engine::whole_body::{Effector, Order};
use naobroker_motion::engine::{Channel, Engine, FromEngine, MotionTask, ToEngine, TrackEntry};
use naobroker_motion::fall::FallManagerConfig;
use naobroker_motion::runner::{self, MotionPorts};
use naobroker_motion::trajectory::Track;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rt::{Cycle, RtThread, Tick};
use naobroker_rtslots::RtSlots;
use naobroker_walk::{Step, WalkParameters};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The motion thread's count, copied out after each of its cycles.
static MOTION_THREAD_COUNT: AtomicU64 = AtomicU64::new(0);

/// A cycle counting its thread's allocations from its first run on, into `count`.
struct Counted<C> {
    cycle: C,
    count: &'static AtomicU64,
}

impl<C: Cycle> Cycle for Counted<C> {
    fn run(&mut self, tick: Tick) {
        start_counting();
        self.cycle.run(tick);
        self.count.store(counted(), Ordering::SeqCst);
    }
}

/// What the motion thread reported, tallied.
#[derive(Debug, Default)]
struct Seen {
    completed: u64,
    killed: u64,
    falls: u64,
    fallen: u64,
    upright: u64,
    moves: Vec<MoveOutcome>,
}

/// A manual-clock DCM, the motion thread following it (every 2nd DCM cycle), and a channel
/// to force the DCM's sensors.
struct Bench {
    dcm: CycleThread,
    forcing: RequestChannel,
    ports: MotionPorts,
    model: Arc<DeviceModel>,
    body: Arc<Body>,
    seen: Seen,
    next_id: u64,
    // Dropped last: the hook's channel, then the thread.
    _hooks: RequestChannel,
    _motion: RtThread,
}

impl Bench {
    fn start() -> Bench {
        let model = Arc::new(DeviceModel::new(RobotDescription::nao_v6()).unwrap());
        let (layout, dcm_slots) = DcmSlots::layout(&model);
        let slots = RtSlots::new(layout);
        let config = CycleConfig {
            priority: 0,
            clock: ClockMode::Manual,
            start_time_ms: 0,
            producers: &["DCM", "ALMotion", "forcing"],
            ..CycleConfig::default()
        };
        let hardware = Box::new(SimRobot::new(&model));
        let StartedCycle { thread: dcm, mut channels, reports: _reports, wake: _wake } =
            CycleThread::start(Arc::clone(&model), hardware, Arc::clone(&slots), dcm_slots, &config).unwrap();
        let forcing = channels.take("forcing").unwrap();
        let motion = channels.take("ALMotion").unwrap();
        let mut hooks = channels.take("DCM").unwrap();
        let body = Arc::new(Body::new(&model).unwrap());
        let engine = Engine::new(Arc::clone(&body), &slots, 20, &FallManagerConfig::default()).unwrap();
        let (cycle, ports) = runner::prepare(engine, motion).unwrap();
        let thread = runner::spawn(Counted { cycle, count: &MOTION_THREAD_COUNT }, None).unwrap();
        let hook = ports.dcm_hook(Arc::clone(thread.pace()), 2, true);
        hooks.add_hook(Phase::Post, "ALMotion", Box::new(hook)).unwrap();
        Bench {
            dcm,
            forcing,
            ports,
            model,
            body,
            seen: Seen::default(),
            next_id: 0,
            _hooks: hooks,
            _motion: thread,
        }
    }

    /// The published commanded pose is the forward kinematics of the commanded angles.
    fn assert_cartesian_data_follow_the_commands(&self) {
        let shared = &self.ports.shared;
        let kinematics = self.body.kinematics.as_ref().expect("NAO V6 has a kinematic model");
        let model = &kinematics.model;
        let mut angles = vec![0.0; model.joint_names().len()];
        kinematics.angles_from_motors(|motor| shared.position(motor), &mut angles);
        let mut pose = Pose::new(model);
        pose.update(model, &angles);
        let published = shared.cartesian.as_ref().expect("Cartesian data are published");
        for effector in ["Head", "LArm", "RArm", "LLeg", "RLeg"] {
            let slot = kinematics.frame_slot(effector).unwrap();
            let expected = pose.transform(model.frame(effector).unwrap());
            assert_eq!(published.read(|snapshot| snapshot.transform(Source::Commanded, slot)), expected);
        }
    }

    fn motor(&self, joint: &str) -> usize {
        self.body.motors.iter().position(|motor| motor.name == joint).unwrap()
    }

    fn command(&mut self, command: ToEngine) {
        self.ports.commands.push(command).unwrap();
    }

    fn start_task(&mut self, tracks: Vec<TrackEntry>) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.command(ToEngine::Start(Box::new(MotionTask { id, tracks })));
        id
    }

    /// A blocking call's task: postponed while its joints are busy.
    fn start_when_free(&mut self, tracks: Vec<TrackEntry>) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.command(ToEngine::StartWhenFree(Box::new(MotionTask { id, tracks })));
        id
    }

    /// Every motor's `channel` to `value` in `seconds`.
    fn everywhere(&mut self, channel: Channel, seconds: f64, value: f64) -> u64 {
        let tracks = (0..self.body.motors.len()).map(|motor| keys(motor, channel, seconds, value)).collect();
        self.start_task(tracks)
    }

    fn force(&mut self, sensor: &str, value: f64) {
        let index = self.model.sensor(&format!("{sensor}/Sensor/Value")).unwrap();
        self.forcing.force_sensor(index, Some(value)).unwrap();
    }

    /// Run `n` DCM cycles (the motion cycles they request run within them), and tally what
    /// the motion thread reported.
    fn step(&mut self, n: u64) {
        let shared = Arc::clone(self.dcm.shared());
        assert!(shared.step_blocking(n, Duration::from_secs(20)), "the DCM stopped at {}", shared.cycles());
        while let Ok(report) = self.ports.reports.queue.pop() {
            match report {
                FromEngine::Finished { completed: true, .. } => self.seen.completed += 1,
                FromEngine::Finished { completed: false, .. } => self.seen.killed += 1,
                FromEngine::Falling { .. } => self.seen.falls += 1,
                FromEngine::Fallen { .. } => self.seen.fallen += 1,
                FromEngine::Upright => self.seen.upright += 1,
                FromEngine::MoveEnded { outcome, .. } => self.seen.moves.push(outcome),
                FromEngine::PreProcess { .. } | FromEngine::Cycle { .. } => {}
            }
        }
    }
}

fn move_order(id: u64, goal: Goal) -> MoveOrder {
    MoveOrder { id, goal, limits: MoveLimits::of(&WalkParameters::default()) }
}

fn keys(motor: usize, channel: Channel, seconds: f64, value: f64) -> TrackEntry {
    TrackEntry {
        motor,
        channel,
        track: Track::Keys { times: vec![seconds], values: vec![value] },
        relative: false,
    }
}

fn toward(motor: usize, target: f64) -> TrackEntry {
    TrackEntry {
        motor,
        channel: Channel::Position,
        track: Track::Toward { target, speed: 0.5 },
        relative: false,
    }
}

#[test]
fn the_motion_thread_does_not_allocate() {
    let mut bench = Bench::start();
    let (head_yaw, shoulder, elbow) =
        (bench.motor("HeadYaw"), bench.motor("LShoulderPitch"), bench.motor("RElbowYaw"));
    // Stiff and upright: the fall manager arms.
    bench.everywhere(Channel::Stiffness, 0.1, 1.0);
    bench.step(20);
    let mut lowered = false;
    for round in 0..4 {
        let target = if round % 2 == 0 { 0.2 } else { -0.2 };
        // Every joint moves; newer tasks take joints from it, one is killed by id, one by
        // its motors, and it arrives with what it kept.
        bench.everywhere(Channel::Position, 0.2, target);
        bench.start_task(vec![toward(head_yaw, -target)]);
        let arm = bench.start_when_free(vec![keys(shoulder, Channel::Position, 5.0, 1.0)]);
        bench.start_when_free(vec![keys(elbow, Channel::Position, 5.0, 1.0), toward(head_yaw, target)]);
        // Blocking calls on joints those two blocking calls' tasks use are postponed: one
        // starts once `arm` is killed, one is killed with the elbow's tasks.
        bench.start_when_free(vec![keys(shoulder, Channel::Position, 0.1, 0.5)]);
        bench.start_when_free(vec![keys(elbow, Channel::Position, 0.1, 0.5)]);
        bench.step(6);
        bench.command(ToEngine::Kill(arm));
        bench.command(ToEngine::KillMotors(1 << elbow));
        bench.step(40);
        // Idle past 25 motion cycles: smart stiffness lowers the joints; the next round's
        // move gives them their stiffness back.
        bench.step(60);
        lowered |= (0..bench.body.motors.len()).any(|motor| bench.ports.shared.stiffness(motor) < 1.0);
        if round == 2 {
            // A fall: the running task is killed, the protective posture driven, every
            // stiffness sent off while the body still turns; at rest, the fall is over;
            // then upright, and stiff again.
            bench.everywhere(Channel::Position, 10.0, 0.0);
            bench.step(4);
            bench.force("InertialSensor/AngleY", 1.0);
            bench.force("InertialSensor/GyroscopeY", 3.0);
            bench.step(20);
            bench.force("InertialSensor/GyroscopeY", 0.0);
            bench.step(20);
            bench.force("InertialSensor/AngleY", 0.0);
            bench.step(4);
            bench.everywhere(Channel::Stiffness, 0.1, 1.0);
            bench.step(20);
        }
    }
    // Breathing: every breath joint sways; a task takes a shoulder and gives it back; off,
    // each joint finishes its breath.
    bench.command(ToEngine::BreathConfig { bpm: 30.0, amplitude: 0.0 });
    bench.command(ToEngine::Breath { motors: u64::MAX, on: true });
    bench.step(100);
    bench.start_task(vec![keys(shoulder, Channel::Position, 0.2, 0.5)]);
    bench.step(100);
    bench.command(ToEngine::Breath { motors: u64::MAX, on: false });
    bench.step(250);
    // Walking: a move at a velocity replaced by one to a place, stopped on the way; then one
    // a task on a leg kills.
    bench.everywhere(Channel::Stiffness, 0.1, 1.0);
    bench.step(20);
    let step = Step { forward: 0.04, left: 0.01, turn: 0.1 };
    bench.command(ToEngine::MoveArms([true, false]));
    bench.command(ToEngine::Move(move_order(1, Goal::Steps(step))));
    bench.step(200);
    bench.command(ToEngine::Move(move_order(2, Goal::Place([0.5, 0.2, 1.0]))));
    bench.step(100);
    bench.command(ToEngine::StopMove);
    bench.step(300);
    bench.command(ToEngine::Move(move_order(3, Goal::Steps(step))));
    bench.step(100);
    bench.start_task(vec![keys(bench.motor("LKneePitch"), Channel::Position, 0.5, 1.0)]);
    bench.step(60);
    assert_eq!(bench.seen.moves, [MoveOutcome::Replaced, MoveOutcome::Arrived, MoveOutcome::Killed]);
    // The whole body: the centre of mass to the left foot, the right foot free along a path,
    // a torso path replaced by another, which is killed; then off.
    let whole_body = |order| ToEngine::WholeBody(order);
    bench.command(whole_body(Order::Enable(true)));
    bench.command(whole_body(Order::Balance { enable: true, feet: [true, true] }));
    bench.command(whole_body(Order::GoToBalance { id: 100, foot: Some(Side::Left), duration: 0.5 }));
    bench.step(60);
    bench.command(whole_body(Order::FootState { state: FootState::Free, feet: [false, true] }));
    for (first, time, z) in [(true, 0.2, 0.02), (false, 0.4, 0.0)] {
        let target = Transform::translation([0.0, -0.05, -0.3 + z]);
        bench.command(whole_body(Order::Key { effector: Effector::RLeg, first, time, target }));
    }
    let path = |id, effector| Order::Path { id, effector, axis_mask: 63, borrowed: false };
    bench.command(whole_body(path(101, Effector::RLeg)));
    for id in [102, 103] {
        let target = Transform::translation([0.01, 0.0, -0.01]);
        bench.command(whole_body(Order::Key { effector: Effector::Torso, first: true, time: 1.0, target }));
        bench.command(whole_body(path(id, Effector::Torso)));
    }
    bench.step(4);
    bench.command(ToEngine::Kill(103));
    bench.step(40);
    bench.command(whole_body(Order::Enable(false)));
    bench.step(4);
    bench.everywhere(Channel::Position, 10.0, 0.0);
    bench.step(4);
    bench.command(ToEngine::KillAll);
    bench.step(4);
    let seen = &bench.seen;
    // Per round, the whole-body task and the postponed shoulder's arrive and four are killed
    // or replaced; the first stiffness task, the one after the fall, the shoulder's while
    // breathing, the one before the walk and the leg's task arrive, the fall and `KillAll`
    // kill one each; wbGoToBalance and the foot's path arrive, the torso's paths are replaced
    // and killed.
    assert_eq!(
        (seen.completed, seen.killed),
        (4 * 2 + 5 + 2, 4 * 4 + 2 + 2),
        "tasks ended both ways: {seen:?}"
    );
    assert_eq!((seen.falls, seen.fallen, seen.upright), (1, 1, 2), "{seen:?}");
    assert!(lowered, "smart stiffness lowered idle joints");
    assert!(bench.ports.shared.cycles() > 200, "{} motion cycles", bench.ports.shared.cycles());
    assert_eq!(bench.ports.shared.refused(), 0, "the DCM took every request");
    bench.assert_cartesian_data_follow_the_commands();
    assert_eq!(MOTION_THREAD_COUNT.load(Ordering::SeqCst), 0, "allocations or frees on the motion thread");
}

/// The probe must see an allocation made on the motion thread, or the test above could not
/// fail.
#[test]
fn the_probe_sees_an_allocation_on_the_motion_thread() {
    static PROBED: AtomicU64 = AtomicU64::new(0);
    struct Allocating;
    impl Cycle for Allocating {
        fn run(&mut self, _tick: Tick) {
            drop(std::hint::black_box(Box::new([1u8; 64])));
        }
    }
    let thread = runner::spawn(Counted { cycle: Allocating, count: &PROBED }, None).unwrap();
    thread.pace().request(1);
    thread.pace().wait_for(1);
    assert!(PROBED.load(Ordering::SeqCst) >= 2);
}
