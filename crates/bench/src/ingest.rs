//! `naobench ingest`: timed commands accepted per second through `setAlias` time-separate,
//! parsed and applied in-process, and sent over tcp from another process.

use std::time::Instant;

use naobroker_dcm::core::{Aliases, DcmCore};
use naobroker_dcm_module::parse::{create_alias, RequestParser};
use naobroker_framework::{ClientSession, Value};
use naobroker_robot::device::{DeviceKind, DeviceModel, RobotDescription};

use crate::helpers::{progress, start_broker};
use crate::stats::{print, Row};

const TIMES: usize = 25;

/// `setAlias` time-separate for every interpolated actuator, `TIMES` times each.
fn request(names: &[String], base: i64) -> Value {
    let times = Value::Array((1..=TIMES as i64).map(|i| Value::from(base + 10 * i)).collect());
    let values = Value::Array(
        names
            .iter()
            .enumerate()
            .map(|(a, _)| {
                Value::Array((0..TIMES).map(|i| Value::F64(((a + i) % 10) as f64 * 0.05)).collect())
            })
            .collect(),
    );
    Value::Array(vec!["All".into(), "ClearAll".into(), "time-separate".into(), 0.into(), times, values])
}

pub fn run(seconds: f64, json: bool) {
    let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
    let names: Vec<String> = model
        .actuators
        .iter()
        .filter(|a| a.kind == DeviceKind::Interpolated)
        .map(|a| a.name.clone())
        .collect();
    let alias =
        Value::Array(vec!["All".into(), Value::Array(names.iter().map(|n| n.as_str().into()).collect())]);
    let mut aliases = Aliases::default();
    create_alias(&mut aliases, &model, &alias).unwrap();
    let mut core = DcmCore::new(&model, 4096, 0);
    let template = request(&names, 0);
    let per_request = names.len() * TIMES;

    progress("ingest", format_args!("in-process parse + apply, {seconds} s"));
    let started = Instant::now();
    let mut accepted = 0usize;
    while started.elapsed().as_secs_f64() < seconds {
        let parsed = RequestParser { model: &model, aliases: &aliases }.set_alias(&template).unwrap();
        core.apply(&parsed, &model).unwrap();
        accepted += per_request;
    }
    let in_process = accepted as f64 / started.elapsed().as_secs_f64();

    let (_broker, tcp, _ipc) = start_broker();
    let system = actix_rt::System::new();
    let over_socket = system.block_on(async {
        let session = ClientSession::connect(&tcp, "naobench").await.unwrap();
        session.call("DCM", "createAlias", vec![alias.clone()], false).await.unwrap();
        let now = session.call("DCM", "getTime", vec![0.into()], false).await.unwrap().as_i64().unwrap();
        let request = request(&names, now + 60_000);
        progress("ingest", format_args!("DCM.setAlias over tcp, {seconds} s"));
        let started = Instant::now();
        let mut accepted = 0usize;
        while started.elapsed().as_secs_f64() < seconds {
            session.call("DCM", "setAlias", vec![request.clone()], false).await.unwrap();
            accepted += per_request;
        }
        accepted as f64 / started.elapsed().as_secs_f64()
    });
    let rows = vec![
        Row {
            name: format!("in-process: parse + apply, {} actuators × {TIMES} times", names.len()),
            fields: vec![("commands/s", in_process), ("target", 1_000_000.0)],
        },
        Row {
            name: "over tcp: DCM.setAlias from another process, one call at a time".into(),
            fields: vec![("commands/s", over_socket), ("target", f64::NAN)],
        },
    ];
    print("ingest", &rows, &[format!("in-process / target = {:.2}", in_process / 1e6)], json);
}
