//! The ALMotion module: its state on the actor's thread (the motion thread's queues, the
//! DCM hook, the real-time slots) and its method table. The handlers live in `module/`,
//! grouped by what they do; `Client` is the part their futures share.

use std::os::unix::net::UnixDatagram;
use std::rc::Rc;
use std::sync::Arc;

use naobroker_dcm_module::HookConnection;
use naobroker_framework::{Broker, CallError, Methods, Module, ModuleContext, Value};
use naobroker_rt::Wakeups;
use naobroker_rtslots::RtSlots;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::body::Body;
use crate::events::MemoryWrite;
use crate::runner::MotionThread;
use client::Client;

mod breath;
mod cartesian_args;
mod cartesian_control;
mod cartesian_planning;
mod cartesian_queries;
mod cartesian_tracks;
mod client;
mod footsteps;
mod joint_methods;
mod locomotion;
mod move_config;
mod moves;
mod postures;
mod queries;
mod reflex_methods;
mod robot_info;
mod tasks;
mod unapplied;
mod whole_body;

/// The ALMotion module.
pub struct ALMotion {
    client: Rc<Client>,
    slots: Arc<RtSlots>,
    broker: Broker,
    period_ms: i32,
    /// Where Cartesian calls are planned, away from the broker's thread (from the first one).
    cartesian_planning: Option<cartesian_control::Planning>,
    /// What the whole-body calls set (`wbEnable`, `wbFootState`, `wbEnableEffectorControl`).
    whole_body: whole_body::Settings,
    /// The motion cycle's wake-ups and the ALMemory writes to perform, until `started`.
    signal: Option<(UnixDatagram, UnboundedReceiver<MemoryWrite>)>,
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
        let client =
            Rc::new(Client::new(body, started.commands, started.shared, started.reports, cycle_events));
        ALMotion {
            client,
            slots,
            broker,
            period_ms,
            cartesian_planning: None,
            whole_body: whole_body::Settings::default(),
            signal: Some((started.wake, to_raise)),
            _thread: started.thread,
            _hook: hook,
        }
    }

    /// The joints a call names: a joint, chain or group, or a list of them.
    fn joints(&self, names: &Value) -> Result<Vec<usize>, CallError> {
        Ok(self.client.body.resolve(names)?)
    }

    /// Once started: perform the ALMemory writes in order, and read what the motion thread
    /// reports after each of its cycles.
    fn follow(&mut self) {
        let Some((wake, to_raise)) = self.signal.take() else { return };
        let client = Rc::clone(&self.client);
        if client.shared.switches.fall_available() {
            crate::events::declare_fall_events(&client.cycle_events);
        }
        let _ = client.cycle_events.send(MemoryWrite::Declare(crate::events::MOVE_FAILED));
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
        m.add(
            "setAngles",
            "setAngles(names, angles, fractionMaxSpeed): move toward the angles, non-blocking (reactive).",
            joint_methods::set_angles,
        )
        .add(
            "changeAngles",
            "changeAngles(names, changes, fractionMaxSpeed): setAngles relative to the current command.",
            joint_methods::change_angles,
        )
        .add_async_checked(
            "angleInterpolation",
            "angleInterpolation(names, angleLists, timeLists, isAbsolute): smooth key frames (times in s); \
             blocks until done.",
            joint_methods::angle_interpolation,
        )
        .add_async_checked(
            "angleInterpolationWithSpeed",
            "angleInterpolationWithSpeed(names, targetAngles, fractionMaxSpeed): blocks until done.",
            joint_methods::angle_interpolation_with_speed,
        )
        .add_async_checked(
            "angleInterpolationBezier",
            "angleInterpolationBezier(names, times, controlPoints): control points \
             [angle, [type, dTime, dAngle], [type, dTime, dAngle]] (or a bare angle) per key.",
            joint_methods::angle_interpolation_bezier,
        )
        .add(
            "getAngles",
            "getAngles(names, useSensors): commanded angles, or measured ones.",
            queries::get_angles,
        )
        .add(
            "getBodyNames",
            "Joints of a chain (Head, LArm, LLeg, RLeg, RArm) or group (Body, Joints, Actuators, \
             JointActuators, Arms, Legs), or \"Chains\".",
            queries::get_body_names,
        )
        .add("getLimits", "[[min, max, maxVelocity, maxTorque], ...] of the joints.", queries::get_limits)
        .add("getSensorNames", "Joints that have a position sensor.", queries::get_sensor_names)
        .add("getMotionCycleTime", "Motion cycle period in ms.", queries::get_motion_cycle_time)
        .add(
            "setStiffnesses",
            "setStiffnesses(names, stiffnesses): at once (one value for all, or one each).",
            joint_methods::set_stiffnesses,
        )
        .add("getStiffnesses", "Commanded stiffness of the joints.", joint_methods::get_stiffnesses)
        .add_async_checked(
            "stiffnessInterpolation",
            "stiffnessInterpolation(names, stiffnessLists, timeLists): blocks until done.",
            joint_methods::stiffness_interpolation,
        )
        .add_async(
            "wakeUp",
            "Stiffness on, then the StandInit posture. Blocks until done.",
            postures::wake_up,
        )
        .add_async("rest", "The crouch posture, then stiffness off. Blocks until done.", postures::rest)
        .add("robotIsWakeUp", "True after wakeUp, until rest.", postures::robot_is_wake_up)
        .add("getTaskList", "[[name, id, [joints]], ...] of the running tasks.", tasks::get_task_list)
        .add("killTask", "Stops a task; true when it was running.", tasks::kill_task)
        .add("killAll", "Stops every task within one motion cycle.", tasks::kill_all)
        .add("areResourcesAvailable", "True when no task uses these joints.", tasks::are_resources_available)
        .add(
            "killTasksUsingResources",
            "Stops the tasks using these joints.",
            tasks::kill_tasks_using_resources,
        )
        .add(
            "getPosition",
            "getPosition(name, frame, useSensorValues): [x, y, z, wx, wy, wz] of a chain's end, \"Torso\", \
             a joint or a camera in FRAME_TORSO (0), FRAME_WORLD (1) or FRAME_ROBOT (2).",
            cartesian_queries::get_position,
        )
        .add(
            "getTransform",
            "getTransform(name, frame, useSensorValues): the same as a 4x4 matrix, row-major (16 floats).",
            cartesian_queries::get_transform,
        )
        .add(
            "getCOM",
            "getCOM(name, frame, useSensorValues): centre of mass of \"Body\", a chain, \"Torso\" or \
             a joint.",
            cartesian_queries::get_com,
        )
        .add(
            "getMass",
            "getMass(name): kg, of \"Body\", a chain, \"Torso\" or a joint.",
            cartesian_queries::get_mass,
        )
        .add_async_checked(
            "setPositions",
            "setPositions(effectorNames, frames, positions, fractionMaxSpeed, axisMasks): chain ends (Head, \
             LArm, RArm) toward Position6D targets through inverse kinematics, Torso, LLeg, RLeg through the \
             whole body; non-blocking.",
            whole_body::set_positions,
        )
        .add_async_checked(
            "setTransforms",
            "setTransforms(effectorNames, frames, transforms, fractionMaxSpeed, axisMasks): setPositions \
             with 4x4 matrices (16 floats).",
            whole_body::set_transforms,
        )
        .add_async_checked(
            "positionInterpolations",
            "positionInterpolations(effectorNames, frames, paths, axisMasks, relativeTimes): chain ends \
             along Position6D paths (straight between points); blocks until done.",
            whole_body::position_interpolations,
        )
        .add_async_checked(
            "transformInterpolations",
            "transformInterpolations(effectorNames, frames, paths, axisMasks, relativeTimes): with 4x4 \
             matrices; blocks until done.",
            whole_body::transform_interpolations,
        )
        .add_async_checked(
            "positionInterpolation",
            "positionInterpolation(chainName, space, path, axisMask, durations, isAbsolute): NAOqi 1.x; \
             blocks until done.",
            whole_body::position_interpolation,
        )
        .add(
            "getSummary",
            "The joints' stiffness, command and sensor, and the running tasks, as text.",
            robot_info::get_summary,
        )
        .add(
            "getRobotConfig",
            "[[names], [values]]: model type, versions, which limbs the body has.",
            robot_info::get_robot_config,
        )
        .add_async_checked(
            "openHand",
            "openHand(handName): \"LHand\" or \"RHand\" to 1.0; blocks until done.",
            robot_info::open_hand,
        )
        .add_async_checked(
            "closeHand",
            "closeHand(handName): \"LHand\" or \"RHand\" to 0.0; blocks until done.",
            robot_info::close_hand,
        )
        .add(
            "stats",
            "Motion cycles run, skipped (fell behind), requests the DCM refused, cycles an arm was held by \
             collision protection, reports the API fell too far behind to receive.",
            queries::stats,
        );
        whole_body::add_to(m);
        reflex_methods::add_to(m);
        breath::add_to(m);
        locomotion::add_to(m);
        footsteps::add_to(m);
    }

    fn started(&mut self, _context: &ModuleContext) {
        self.follow();
    }
}
