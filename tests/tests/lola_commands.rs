//! Commands over the wire reaching LoLA through the real broker, cycle by cycle on
//! lolasim's stepped cadence: a `DCM.set` ramp and a time-separate `setAlias` interpolated
//! as the seed's algorithm says at LoLA's 12 ms cycles, LEDs at their LoLA indices (eyes in
//! their angle orders, ears reversed on the right, skull, chest, feet), and the sonar's
//! modes enabling LoLA's sonar.

use naobroker_e2e::lola::{LolaBench, HOLD_NO_STALL};
use naobroker_framework::Value;
use naobroker_lola::ActuatorMap;
use naobroker_lolasim::Answer;

const YAW: &str = "HeadYaw/Position/Actuator/Value";
const PITCH: &str = "HeadPitch/Position/Actuator/Value";
/// A joint position reaches LoLA rounded to the description's 1/4096 rad, as a float32.
const POSITION_TOLERANCE: f64 = 0.5 / 4096.0 + 1e-6;

/// The seed's interpolation algorithm for one actuator (docs: DCM, "Timed command
/// interpolation algorithm"), written from its pseudo-code: the value the DCM computes at
/// each cycle, before rounding to the actuator's precision.
struct SeedActuator {
    commands: Vec<(i64, f64)>,
    send_double: f64,
    last_command: Option<(i64, f64)>,
    last_cycle: i64,
}

impl SeedActuator {
    /// An actuator sending `value`, whose last cycle ran at `time`, no command consumed.
    fn sending(value: f64, time: i64) -> SeedActuator {
        SeedActuator { commands: Vec::new(), send_double: value, last_command: None, last_cycle: time }
    }

    /// `ClearAll` with these `(time, value)` commands.
    fn clear_all(&mut self, commands: &[(i64, f64)]) {
        self.commands = commands.to_vec();
        self.commands.sort_by_key(|&(time, _)| time);
    }

    fn cycle(&mut self, now: i64) -> f64 {
        while let Some(&(time, value)) = self.commands.first() {
            if time <= now {
                self.send_double = value;
                self.last_command = Some((time, value));
                self.commands.remove(0);
                if time == now {
                    break;
                }
            } else {
                let (from_time, from_value) = match self.last_command {
                    Some((command_time, command_value)) if self.last_cycle < command_time => {
                        (command_time, command_value)
                    }
                    _ => (self.last_cycle, self.send_double),
                };
                let (dt1, dt2) = ((now - from_time) as f64, (time - from_time) as f64);
                self.send_double = (value - from_value) * dt1 / dt2 + from_value;
                break;
            }
        }
        self.last_cycle = now;
        self.send_double
    }
}

/// Where an answer holds the value of an actuator.
type LolaValue = fn(&Answer) -> f32;

fn head_yaw(answer: &Answer) -> f32 {
    answer.map.position[0]
}

fn head_pitch(answer: &Answer) -> f32 {
    answer.map.position[1]
}

/// Step until every command is past and two cycles more, checking each answer's value of
/// every `(seed, lola)` pair against the seed; the values seen, per pair.
fn follow(bench: &mut LolaBench, mut pairs: Vec<(SeedActuator, LolaValue)>) -> Vec<Vec<f64>> {
    let end = pairs.iter().flat_map(|(seed, _)| seed.commands.last()).map(|&(time, _)| time).max().unwrap();
    let mut seen = vec![Vec::new(); pairs.len()];
    while bench.time() <= end + 2 * naobroker_e2e::lola::CYCLE_MS {
        let answer = bench.step();
        let now = bench.time();
        for ((seed, lola), seen) in pairs.iter_mut().zip(&mut seen) {
            let (expected, got) = (seed.cycle(now), f64::from(lola(&answer)));
            assert!(
                (got - expected).abs() <= POSITION_TOLERANCE,
                "at DCM time {now}: LoLA got {got}, the seed's algorithm says {expected}"
            );
            seen.push(got);
        }
    }
    seen
}

#[test]
fn a_dcm_set_ramp_reaches_lolas_position_as_the_seed_interpolates_at_12_ms_cycles() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    let start = bench.steps(2);
    let now = bench.time();
    // Times off the 12 ms grid, so that no cycle falls on a command.
    let commands = [(now + 50, 0.5), (now + 130, -0.25), (now + 205, 0.8), (now + 301, 0.1)];
    let wire: Vec<(f64, i64)> = commands.iter().map(|&(time, value)| (value, time)).collect();
    bench.dcm_set(YAW, "ClearAll", &wire);
    let mut seed = SeedActuator::sending(f64::from(start.map.position[0]), now);
    seed.clear_all(&commands);
    let seen = follow(&mut bench, vec![(seed, head_yaw as LolaValue)]).remove(0);
    assert!(seen.len() >= 25, "{seen:?}");
    // The seed: with commands between cycles, their values are approached, never sent.
    let (low, high) = seen.iter().fold((f64::MAX, f64::MIN), |(low, high), &v| (low.min(v), high.max(v)));
    assert!(high > 0.75 && high < 0.8 && low < -0.2 && low > -0.25, "{seen:?}");
    assert!((seen.last().unwrap() - 0.1).abs() <= POSITION_TOLERANCE, "the last command holds: {seen:?}");
}

#[test]
fn a_time_separate_set_alias_drives_both_head_joints_as_the_seed_interpolates() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    let start = bench.steps(3);
    let alias = Value::Array(vec!["Head".into(), Value::Array(vec![YAW.into(), PITCH.into()])]);
    bench.call("DCM", "createAlias", vec![alias]);
    let now = bench.time();
    let times = [now + 30, now + 97, now + 160];
    let (yaw, pitch) = ([0.4, -0.3, 0.0], [0.2, 0.35, -0.1]);
    let values = |list: [f64; 3]| Value::Array(list.into_iter().map(Value::from).collect());
    let request = Value::Array(vec![
        "Head".into(),
        "ClearAll".into(),
        "time-separate".into(),
        0.into(),
        Value::Array(times.into_iter().map(Value::from).collect()),
        Value::Array(vec![values(yaw), values(pitch)]),
    ]);
    bench.call("DCM", "setAlias", vec![request]);
    let seeds = [(0, yaw), (1, pitch)].map(|(joint, list)| {
        let mut seed = SeedActuator::sending(f64::from(start.map.position[joint]), now);
        seed.clear_all(&[(times[0], list[0]), (times[1], list[1]), (times[2], list[2])]);
        seed
    });
    let [yaw_seed, pitch_seed] = seeds;
    let seen = follow(&mut bench, vec![(yaw_seed, head_yaw as LolaValue), (pitch_seed, head_pitch)]);
    assert!(seen[1].iter().any(|&value| value > 0.34), "HeadPitch went up to 0.35: {:?}", seen[1]);
}

/// An actuator map's LED array by its LoLA key.
fn leds<'a>(map: &'a mut ActuatorMap, key: &str) -> &'a mut [f32] {
    match key {
        "LEye" => &mut map.l_eye,
        "REye" => &mut map.r_eye,
        "LEar" => &mut map.l_ear,
        "REar" => &mut map.r_ear,
        "Skull" => &mut map.skull,
        "Chest" => &mut map.chest,
        "LFoot" => &mut map.l_foot,
        "RFoot" => &mut map.r_foot,
        _ => panic!("{key} is no LED key"),
    }
}

/// A few rows of each LED family: the device and its LoLA key and index (lola.md B.3).
const LED_ROWS: [(&str, &str, usize); 22] = [
    ("Face/Led/Red/Left/45Deg", "LEye", 0),
    ("Face/Led/Red/Left/0Deg", "LEye", 1),
    ("Face/Led/Red/Left/315Deg", "LEye", 2),
    ("Face/Led/Green/Left/90Deg", "LEye", 15),
    ("Face/Led/Blue/Left/270Deg", "LEye", 19),
    ("Face/Led/Red/Right/0Deg", "REye", 0),
    ("Face/Led/Red/Right/90Deg", "REye", 2),
    ("Face/Led/Green/Right/315Deg", "REye", 15),
    ("Face/Led/Blue/Right/45Deg", "REye", 17),
    ("Ears/Led/Left/0Deg", "LEar", 0),
    ("Ears/Led/Left/324Deg", "LEar", 9),
    ("Ears/Led/Right/324Deg", "REar", 0),
    ("Ears/Led/Right/288Deg", "REar", 1),
    ("Ears/Led/Right/0Deg", "REar", 9),
    ("Head/Led/Front/Left/1", "Skull", 0),
    ("Head/Led/Rear/Left/2", "Skull", 5),
    ("Head/Led/Rear/Right/2", "Skull", 6),
    ("Head/Led/Front/Right/1", "Skull", 11),
    ("ChestBoard/Led/Red", "Chest", 0),
    ("ChestBoard/Led/Blue", "Chest", 2),
    ("LFoot/Led/Green", "LFoot", 1),
    ("RFoot/Led/Blue", "RFoot", 2),
];

#[test]
fn each_led_reaches_its_lola_index_and_nothing_else_changes() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    let before = bench.steps(2);
    let now = bench.time();
    let mut expected = before.map;
    for (row, &(device, key, index)) in LED_ROWS.iter().enumerate() {
        // Whole steps of the LEDs' 1/255 precision reach LoLA exactly.
        let value = (row + 3) as f64 / 255.0;
        bench.dcm_set(&format!("{device}/Actuator/Value"), "ClearAll", &[(value, now)]);
        leds(&mut expected, key)[index] = value as f32;
    }
    let after = bench.step();
    let mut got = after.map;
    for &(device, key, index) in &LED_ROWS {
        assert_eq!(leds(&mut got, key)[index], leds(&mut expected, key)[index], "{device}: {key}[{index}]");
    }
    assert_eq!(after.map, expected, "the rows set and nothing else");
}

#[test]
fn sonar_modes_enable_lolas_sonar_once_or_continuously_and_its_echo_reaches_almemory() {
    let mut bench = LolaBench::start(HOLD_NO_STALL);
    assert_eq!(bench.steps(2).map.sonar, [false, false], "no mode asked: no measurement");
    // Modes 0-15 measure once: enabled in the cycle the command applies.
    let now = bench.time();
    bench.dcm_set("US/Actuator/Value", "Merge", &[(4.0, now + 2 * naobroker_e2e::lola::CYCLE_MS)]);
    let once: Vec<[bool; 2]> = (0..4).map(|_| bench.step().map.sonar).collect();
    assert_eq!(once, [[false, false], [true, true], [false, false], [false, false]]);
    // 64 and above: every cycle.
    let now = bench.time();
    bench.dcm_set("US/Actuator/Value", "Merge", &[(68.0, now)]);
    let continuous: Vec<[bool; 2]> = (0..4).map(|_| bench.step().map.sonar).collect();
    assert_eq!(continuous, [[true, true]; 4]);
    // The simulated room's echo on both sides, in ALMemory.
    let echo = bench.sim.last_sensors().sonar;
    assert!(echo[0] < 5.0 && echo[1] < 5.0, "an echo, not the resting 5 m: {echo:?}");
    for (side, value) in ["Left", "Right"].into_iter().zip(echo) {
        let key = format!("Device/SubDeviceList/US/{side}/Sensor/Value");
        assert_eq!(bench.number(&key), f64::from(value), "{key}");
    }
}
