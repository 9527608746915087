//! The engine's unit tests, on NAO V6's body with ALMemory's slots as the DCM left them
//! at start-up (every actuator at 0).

use std::sync::Arc;

use naobroker_dcm::core::Request;
use naobroker_dcm::cycle::DcmSlots;
use naobroker_robot::device::{DeviceModel, RobotDescription};
use naobroker_rtslots::RtSlots;

use super::*;
use crate::fall::{ANGLE_KEYS, GYROSCOPE_KEYS};

fn nao() -> (Engine, Arc<Body>) {
    let (engine, body, _) = nao_with_slots();
    (engine, body)
}

/// Also ALMemory's slots, where a test plays the DCM.
pub(crate) fn nao_with_slots() -> (Engine, Arc<Body>, Arc<RtSlots>) {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let (layout, _) = DcmSlots::layout(&model);
    let slots = RtSlots::new(layout);
    let body = Arc::new(Body::new(&model).unwrap());
    let engine = Engine::new(Arc::clone(&body), &slots, 20, &FallManagerConfig::default()).unwrap();
    (engine, body, slots)
}

pub(crate) fn set_slot(slots: &RtSlots, key: &str, value: f64) {
    slots.set(slots.layout().index_of(key).unwrap(), value);
}

fn motor(body: &Body, joint: &str) -> usize {
    body.joints[body.expand(joint).unwrap()[0]].motor
}

fn track(motor: usize, channel: Channel, value: f64) -> TrackEntry {
    TrackEntry {
        motor,
        channel,
        track: Track::Keys { times: vec![0.1], values: vec![value] },
        relative: false,
    }
}

/// Run motion cycles from DCM time `from` ms until task `id` ends; every command the
/// engine holds and sends stays a finite number.
fn run_until_finished(engine: &mut Engine, from: i32, id: u64) -> Vec<FromEngine> {
    let mut output = EngineOutput::default();
    let mut request = Request::default();
    for time in (from..from + 1000).step_by(20) {
        request.clear();
        engine.cycle(time, &mut request, &mut output);
        for group in request.groups() {
            assert!(group.commands.iter().all(|c| c.value.is_finite()), "at {time}: {group:?}");
        }
        for motor in 0..engine.motors.len() {
            assert!(engine.position(motor).is_finite() && engine.stiffness(motor).is_finite(), "at {time}");
        }
        let reports = &output.reports;
        if reports.iter().any(|report| matches!(report, FromEngine::Finished { id: done, .. } if *done == id))
        {
            return output.reports;
        }
    }
    panic!("task {id} never finished: {:?}", output.reports);
}

#[test]
fn a_value_that_is_not_a_number_keeps_the_previous_command() {
    let (mut engine, body) = nao();
    let (yaw, pitch, wrist) = (motor(&body, "HeadYaw"), motor(&body, "HeadPitch"), motor(&body, "LWristYaw"));
    let tracks = vec![
        track(yaw, Channel::Position, f64::NAN),
        track(wrist, Channel::Position, f64::INFINITY),
        track(pitch, Channel::Stiffness, f64::NAN),
    ];
    engine.command(ToEngine::Start(Box::new(MotionTask { id: 1, tracks })), &mut EngineOutput::default());
    let reports = run_until_finished(&mut engine, 20, 1);
    assert!(reports.contains(&FromEngine::Finished { id: 1, completed: true }), "{reports:?}");
    assert_eq!((engine.position(yaw), engine.position(wrist), engine.stiffness(pitch)), (0.0, 0.0, 0.0));
    // The motion thread lives on: the next task moves the joint.
    let task = MotionTask { id: 2, tracks: vec![track(yaw, Channel::Position, 0.5)] };
    engine.command(ToEngine::Start(Box::new(task)), &mut EngineOutput::default());
    run_until_finished(&mut engine, 1000, 2);
    assert_eq!(engine.position(yaw), 0.5);
}

#[test]
fn the_cycle_a_fall_starts_reports_within_the_bound_the_motion_thread_reserves() {
    let (mut engine, body, slots) = nao_with_slots();
    // Upright: the fall manager arms.
    let mut output = EngineOutput::default();
    engine.cycle(20, &mut Request::default(), &mut output);
    assert!(output.reports.contains(&FromEngine::Upright), "{:?}", output.reports);
    // One task on every motor and channel, each running for a while.
    let long = |motor: usize, channel: Channel| TrackEntry {
        motor,
        channel,
        track: Track::Keys { times: vec![10.0], values: vec![0.0] },
        relative: false,
    };
    let pairs: Vec<(usize, Channel)> = (0..body.motors.len())
        .flat_map(|motor| [(motor, Channel::Position), (motor, Channel::Stiffness)])
        .collect();
    for (id, &(motor, channel)) in (1..).zip(&pairs) {
        engine.command(
            ToEngine::Start(Box::new(MotionTask { id, tracks: vec![long(motor, channel)] })),
            &mut output,
        );
    }
    engine.cycle(40, &mut Request::default(), &mut output);
    // The worst cycle: a full queue of new tasks, each replacing one, then a fall.
    let commands = 1024;
    let mut output = EngineOutput::with_capacity(engine.max_reports(commands));
    let buffers = (output.reports.as_ptr(), output.retired.as_ptr());
    for (id, &(motor, channel)) in (1000..).zip(pairs.iter().cycle().take(commands)) {
        engine.command(
            ToEngine::Start(Box::new(MotionTask { id, tracks: vec![long(motor, channel)] })),
            &mut output,
        );
    }
    set_slot(&slots, fall::ANGLE_KEYS[1], 1.0);
    engine.cycle(60, &mut Request::default(), &mut output);
    let events = &output.reports;
    assert!(events.iter().any(|event| matches!(event, FromEngine::Falling { .. })), "a fall");
    let ended = events.iter().filter(|event| matches!(event, FromEngine::Finished { .. })).count();
    assert_eq!(ended, pairs.len() + commands, "every task ended");
    assert_eq!(output.retired.len(), ended, "every ended task comes back whole");
    let grown = (output.reports.as_ptr(), output.retired.as_ptr());
    assert_eq!(grown, buffers, "{} reports and tasks fit without growing the buffers", ended);
}

#[test]
fn a_task_losing_a_joint_drives_the_others_and_comes_back_whole() {
    let (mut engine, body) = nao();
    let (yaw, pitch, wrist) = (motor(&body, "HeadYaw"), motor(&body, "HeadPitch"), motor(&body, "LWristYaw"));
    let tracks = vec![
        track(yaw, Channel::Position, 0.3),
        track(pitch, Channel::Position, 0.2),
        track(wrist, Channel::Position, 0.1),
    ];
    let mut output = EngineOutput::default();
    engine.command(ToEngine::Start(Box::new(MotionTask { id: 1, tracks })), &mut output);
    let newer = MotionTask { id: 2, tracks: vec![track(pitch, Channel::Position, -0.2)] };
    engine.command(ToEngine::Start(Box::new(newer)), &mut output);
    assert_eq!(engine.owner(yaw, Channel::Position), Some(0));
    assert_eq!(engine.owner(pitch, Channel::Position), Some(1), "taken by the newer task");
    assert_eq!(engine.owner(wrist, Channel::Position), Some(0));
    let mut request = Request::default();
    for time in (20..400).step_by(20) {
        request.clear();
        engine.cycle(time, &mut request, &mut output);
        if output.retired.len() == 2 {
            break;
        }
    }
    // As commanded when they arrived (no DCM here: the next cycle would read 0 back).
    assert_eq!((engine.position(yaw), engine.position(pitch), engine.position(wrist)), (0.3, -0.2, 0.1));
    let ended: Vec<u64> = output.retired.iter().map(|task| task.id).collect();
    assert_eq!(ended, [1, 2]);
    let kept: Vec<usize> = output.retired[0].tracks.iter().map(|entry| entry.motor).collect();
    assert_eq!(kept, [yaw, wrist, pitch], "the tracks left run in their order; the one taken stays");
}

fn engine_cycle(engine: &mut Engine, time: i32) -> Vec<FromEngine> {
    let mut output = EngineOutput::default();
    engine.cycle(time, &mut Request::default(), &mut output);
    output.reports
}

/// Whether `engine` takes a new task (the reports of a refusal, if not).
fn takes_a_task(engine: &mut Engine, id: u64) -> Vec<FromEngine> {
    let mut output = EngineOutput::default();
    engine.command(ToEngine::Start(Box::new(MotionTask { id, tracks: Vec::new() })), &mut output);
    output.reports
}

/// The engine as the motion thread runs it, on NAO V6 with ALMemory's slots as the DCM
/// left them at start-up: every stiffness 0.
#[test]
fn a_limp_robot_tilting_past_the_threshold_falls_and_tasks_wait_until_it_rests() {
    let (mut engine, _, slots) = nao_with_slots();
    assert!((0..engine.motors()).all(|motor| engine.stiffness(motor) == 0.0), "limp");
    let reports = engine_cycle(&mut engine, 20);
    assert!(reports.contains(&FromEngine::Upright), "{reports:?}");
    set_slot(&slots, ANGLE_KEYS[1], 0.9);
    set_slot(&slots, GYROSCOPE_KEYS[1], 3.0);
    let reports = engine_cycle(&mut engine, 40);
    assert!(reports.contains(&FromEngine::Falling { time: 40, direction: Direction::Front }), "{reports:?}");
    for time in (60..=200).step_by(20) {
        engine_cycle(&mut engine, time);
    }
    let refused = [FromEngine::Finished { id: 1, completed: false }];
    assert_eq!(takes_a_task(&mut engine, 1), refused, "still turning, limp");
    // On the ground: the fifth cycle at rest ends the fall.
    set_slot(&slots, GYROSCOPE_KEYS[1], 0.0);
    let fallen: Vec<FromEngine> = (220..=320)
        .step_by(20)
        .flat_map(|time| engine_cycle(&mut engine, time))
        .filter(|report| matches!(report, FromEngine::Fallen { .. }))
        .collect();
    assert_eq!(fallen, [FromEngine::Fallen { time: 300 }]);
    assert_eq!(takes_a_task(&mut engine, 2), [], "taken: the fall is over");
}
