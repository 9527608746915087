//! The two worked tables of seed 000/003, replayed row by row through the core, as
//! given and shifted so that they cross the int32 roll-over.

use naobroker_dcm::core::{Aliases, DcmCore, Request, TimedCommand, UpdateType};
use naobroker_robot::device::{DeviceModel, RobotDescription};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    initial_value: f64,
    commands_before: Vec<(i64, f64)>,
    cycles_before: Vec<i64>,
    commands_at: Vec<(i64, f64)>,
    expect: Vec<(i64, f64)>,
}

/// One interpolated actuator with a fine precision, so rounding stays far below the
/// tables' 0.01 tolerance.
fn model(initial: f64) -> DeviceModel {
    let description = format!(
        "name = \"test\"\n[[device]]\nname = \"Test/Actuator/Value\"\nkind = \"interpolated\"\n\
         unit = \"deg\"\nmin = -1000.0\nmax = 1000.0\ngain = 10000.0\noffset = 0.0\ninitial = {initial:?}\n"
    );
    DeviceModel::new(RobotDescription::parse(&description).unwrap()).unwrap()
}

fn set(core: &mut DcmCore, model: &DeviceModel, commands: &[(i64, f64)], shift: i64) {
    let list = commands
        .iter()
        // DCM times are int32 and roll over, as a client's times past the roll-over do.
        .map(|&(time, value)| TimedCommand { time: (time + shift) as i32, value })
        .collect();
    let aliases = Aliases::default();
    let request = Request::set(model, &aliases, "Test/Actuator/Value", UpdateType::Merge, list).unwrap();
    core.apply(&request, model).unwrap();
}

fn replay(shift: i64) {
    let vectors: Vectors = toml::from_str(include_str!("interpolation-vectors.toml")).unwrap();
    assert_eq!(vectors.case.len(), 2);
    for case in vectors.case {
        let model = model(case.initial_value);
        let start = (case.cycles_before[0] - 10 + shift) as i32;
        let mut core = DcmCore::new(&model, 4096, start);
        set(&mut core, &model, &case.commands_before, shift);
        for &t in &case.cycles_before {
            core.cycle((t + shift) as i32);
        }
        set(&mut core, &model, &case.commands_at, shift);
        for &(t, expected) in &case.expect {
            let sent = core.cycle((t + shift) as i32)[0];
            assert!(
                (sent - expected).abs() < 0.01,
                "{} (shift {shift}): at t={t} sent {sent}, the seed says {expected}",
                case.name
            );
        }
    }
}

#[test]
fn seed_tables_row_by_row() {
    replay(0);
}

#[test]
fn seed_tables_across_the_int32_rollover() {
    // The first command lands 40 ms before the roll-over, the rest after it.
    replay(i64::from(i32::MAX) - 40);
}
