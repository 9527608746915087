//! The stepped cadence against a raw client: exact 896-byte maps, one per step, answers
//! kept and counted, the body following them, scripted sensors reaching the map.

mod common;

use std::time::{Duration, Instant};

use common::{hold, socket_path, Client, PATIENCE};
use naobroker_lola::{ActuatorMap, ConfigText, SENSOR_MAP_BYTES};
use naobroker_lolasim::{simulated_robot_config, LolaSim, Options, SimError};

/// A stepped simulator with a connected client. An answer counts as late only after an hour:
/// whether a loaded machine answers within 12 ms is not for these tests to decide.
fn stepped(name: &str) -> (LolaSim, Client) {
    let path = socket_path(name);
    let options = Options { late_after: Duration::from_secs(3600), ..Options::at(&path).stepped() };
    let sim = LolaSim::start(options).unwrap();
    let client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    (sim, client)
}

#[test]
fn one_exact_map_per_step_and_the_answer_is_kept() {
    let (sim, mut client) = stepped("one-map-per-step");
    assert!(client.nothing_pending(), "nothing before the first step");
    assert_eq!(sim.step().unwrap(), 1);
    let (map, wire) = client.read_map();
    assert_eq!(wire.len(), SENSOR_MAP_BYTES);
    assert!(client.nothing_pending(), "one map per step");
    assert_eq!(map.robot_config, simulated_robot_config());
    assert_eq!(map.stiffness, [0.0; 25], "limp before any command");
    assert_eq!(map.accelerometer[2], -9.81, "upright, from the description's resting values");
    assert_eq!(map.battery[0], 1.0);

    let commands = hold(0.3);
    client.answer(&commands);
    let answer = sim.wait_answer(PATIENCE).unwrap();
    assert_eq!((answer.cycle, answer.late, answer.double), (1, false, false));
    assert_eq!(answer.map, commands);
    assert_eq!(sim.last_actuators(), commands);
    let stats = sim.stats();
    assert_eq!((stats.sent, stats.answers, stats.missing, stats.double), (1, 1, 0, 0));
}

#[test]
fn the_body_follows_position_and_stiffness() {
    let (sim, mut client) = stepped("body-follows");
    let mut commands = hold(0.0);
    commands.position[0] = 0.5; // HeadYaw
    commands.stiffness[1] = 0.0; // HeadPitch limp
    commands.position[1] = 0.4;
    for _ in 0..100 {
        sim.step().unwrap();
        client.read_map();
        client.answer(&commands);
        sim.wait_answer(PATIENCE).unwrap();
    }
    sim.step().unwrap();
    let (map, _) = client.read_map();
    assert!((map.position[0] - 0.5).abs() < 0.002, "HeadYaw at {}", map.position[0]);
    assert!(map.position[1].abs() < 0.002, "a limp HeadPitch stays");
    assert_eq!(map.stiffness[0], 1.0, "the applied stiffness is echoed");
    assert_eq!(map.stiffness[1], 0.0);
    assert_eq!(sim.stats().missing, 0);
    assert_eq!(sim.take_answers().len(), 100);
}

#[test]
fn missing_double_late_and_malformed_answers_are_counted() {
    let path = socket_path("counted");
    let options = Options { late_after: Duration::ZERO, ..Options::at(&path).stepped() };
    let sim = LolaSim::start(options).unwrap();
    let mut client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    sim.step().unwrap();
    client.read_map();
    sim.step().unwrap();
    client.read_map();
    assert_eq!(sim.stats().missing, 1, "the first map got no answer");
    client.answer(&hold(0.1));
    client.answer(&hold(0.2));
    let stats = sim.wait_until(PATIENCE, |stats| stats.answers == 2).unwrap();
    assert_eq!((stats.double, stats.late), (1, 1), "every answer is late after zero");
    let answers = sim.take_answers();
    assert_eq!(answers.iter().map(|a| (a.cycle, a.double)).collect::<Vec<_>>(), [(2, false), (2, true)]);
    assert_eq!(sim.last_actuators(), hold(0.2), "a double answer is applied too");

    std::io::Write::write_all(&mut client.stream, &[0xc1, 0x00]).unwrap();
    sim.wait_until(PATIENCE, |stats| stats.malformed == 1).unwrap();
    sim.step().unwrap();
    client.read_map();
    client.answer(&hold(0.3));
    sim.wait_answer(PATIENCE).unwrap();
    assert_eq!(sim.stats().answers, 3, "the link goes on after malformed bytes");
}

#[test]
fn scripted_sensors_reach_the_map() {
    let (sim, mut client) = stepped("scripted");
    sim.assign("Touch[1]=1").unwrap();
    sim.assign("Accelerometer=0.5,-0.25,-9.5").unwrap();
    sim.assign("RobotConfig[0]=P0000073A03S83I00011").unwrap();
    sim.script(|script| {
        script.battery = [0.5, 64.0, -1.5, 35.0];
        script.fsr[7] = 2.5;
        script.status[3] = 2;
        script.sonar = Some([0.4, 0.6]);
    })
    .unwrap();
    sim.step().unwrap();
    let (map, _) = client.read_map();
    assert_eq!(map.touch[1], 1.0);
    assert_eq!(map.accelerometer, [0.5, -0.25, -9.5]);
    assert_eq!(map.robot_config.body_id.as_str(), "P0000073A03S83I00011");
    assert_eq!(map.battery, [0.5, 64.0, -1.5, 35.0]);
    assert_eq!((map.fsr[7], map.status[3], map.sonar), (2.5, 2, [0.4, 0.6]));

    let refused = sim.script(|script| script.robot_config.head_id = ConfigText::new("SHORT").unwrap());
    assert!(matches!(refused, Err(SimError::Unsendable(_))), "{refused:?}");
    assert!(matches!(sim.assign("Position[0]=1"), Err(SimError::Script(_))));
    assert!(matches!(sim.assign("Touch[14]=1"), Err(SimError::Script(_))));
    assert_eq!(sim.scripted().robot_config.head_id, simulated_robot_config().head_id);
}

#[test]
fn the_sonar_echoes_once_enabled() {
    let (sim, mut client) = stepped("sonar");
    sim.step().unwrap();
    let (map, _) = client.read_map();
    assert_eq!(map.sonar, [5.0, 5.0], "the description's resting value");
    client.answer(&ActuatorMap { sonar: [true, false], ..ActuatorMap::default() });
    sim.wait_answer(PATIENCE).unwrap();
    sim.step().unwrap();
    let (map, _) = client.read_map();
    assert_eq!(map.sonar, [0.8, 5.0], "the left side hears the room");
}

#[test]
fn step_needs_a_client_and_the_stepped_cadence() {
    let path = socket_path("needs-client");
    let sim = LolaSim::start(Options::at(&path).stepped()).unwrap();
    assert!(matches!(sim.step(), Err(SimError::NoClient(_))));
    assert_eq!(sim.stats().cycles, 0, "nothing moved");
    let real_time = LolaSim::start(Options::at(socket_path("not-stepped"))).unwrap();
    assert!(matches!(real_time.step(), Err(SimError::NotStepped)));
}

#[test]
fn answer_latencies_are_kept_for_first_answers_only() {
    let path = socket_path("latencies");
    let sim = LolaSim::start(Options { recorded_latencies: 3, ..Options::at(&path).stepped() }).unwrap();
    let mut client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    let mut exchanges = Vec::new();
    for _ in 0..4 {
        let before = Instant::now();
        sim.step().unwrap();
        client.read_map();
        client.answer(&hold(0.1));
        sim.wait_answer(PATIENCE).unwrap();
        exchanges.push(before.elapsed());
    }
    client.answer(&hold(0.2));
    sim.wait_until(PATIENCE, |stats| stats.double == 1).unwrap();
    sim.step().unwrap();
    client.read_map();
    sim.step().unwrap();
    client.read_map();
    assert_eq!(sim.stats().missing, 1);

    let latencies = sim.take_latencies();
    assert_eq!(latencies.len(), 3, "room for 3: the oldest went; double and missing answers have none");
    for (latency, exchange) in latencies.iter().zip(&exchanges[1..]) {
        assert!(latency <= exchange, "{latency:?} is within its map's whole exchange {exchange:?}");
    }
    assert!(sim.take_latencies().is_empty(), "taken once");

    let (unrecorded, mut client) = stepped("latencies-off");
    unrecorded.step().unwrap();
    client.read_map();
    client.answer(&hold(0.1));
    unrecorded.wait_answer(PATIENCE).unwrap();
    assert!(unrecorded.take_latencies().is_empty(), "none kept by default");
}
