//! The engine's unit tests, on NAO V6's body with ALMemory's slots as the DCM left them
//! at start-up (every actuator at 0).

use std::sync::Arc;

use naobroker_dcm::core::Request;
use naobroker_dcm::cycle::DcmSlots;
use naobroker_dcm::device::{DeviceModel, RobotDescription};
use naobroker_memory::RtSlots;

use super::*;

fn nao() -> (Engine, Arc<Body>) {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let (layout, _) = DcmSlots::layout(&model);
    let slots = RtSlots::new(layout);
    let body = Arc::new(Body::new(&model).unwrap());
    let engine = Engine::new(Arc::clone(&body), &slots, 20, &FallManagerConfig::default()).unwrap();
    (engine, body)
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
    let mut reports = Vec::new();
    let mut request = Request::default();
    for time in (from..from + 1000).step_by(20) {
        request.clear();
        engine.cycle(time, &mut request, &mut reports);
        for group in request.groups() {
            assert!(group.commands.iter().all(|c| c.value.is_finite()), "at {time}: {group:?}");
        }
        for motor in 0..engine.motors.len() {
            assert!(engine.position(motor).is_finite() && engine.stiffness(motor).is_finite(), "at {time}");
        }
        if reports.iter().any(|report| matches!(report, FromEngine::Finished { id: done, .. } if *done == id))
        {
            return reports;
        }
    }
    panic!("task {id} never finished: {reports:?}");
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
    let mut reports = Vec::new();
    engine.command(ToEngine::Start(Box::new(MotionTask { id: 1, tracks })), &mut reports);
    let reports = run_until_finished(&mut engine, 20, 1);
    assert!(reports.contains(&FromEngine::Finished { id: 1, completed: true }), "{reports:?}");
    assert_eq!((engine.position(yaw), engine.position(wrist), engine.stiffness(pitch)), (0.0, 0.0, 0.0));
    // The motion thread lives on: the next task moves the joint.
    let task = MotionTask { id: 2, tracks: vec![track(yaw, Channel::Position, 0.5)] };
    engine.command(ToEngine::Start(Box::new(task)), &mut Vec::new());
    run_until_finished(&mut engine, 1000, 2);
    assert_eq!(engine.position(yaw), 0.5);
}
