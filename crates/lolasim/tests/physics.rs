//! The physical robot (`Options::physical`, the binary's `--physics`) served through LoLA to
//! a bare socket client, as a team framework would read it: the sensor maps come from the
//! body (crouching limp at first, then standing on its feet with its weight on the FSRs),
//! the same answers give byte-identical maps, pushes topple it, and what the body senses
//! cannot be scripted.

mod common;

use std::time::Duration;

use common::{socket_path, Client, PATIENCE};
use naobroker_lola::{ActuatorMap, SensorMap};
use naobroker_lolasim::{control::Command, LolaSim, Options, SimError, World};

/// LoLA's positions (its joint order) of NAOqi's StandInit, and both hands half open.
const STAND_INIT: [f32; 25] = [
    0.0, 0.0, 1.396, 0.1988, -1.396, -0.0349, 0.0, 0.0, 0.0, -0.4363, 0.6981, -0.3491, 0.0, 0.0, -0.4363,
    0.6981, -0.3491, 0.0, 1.396, -0.1988, 1.396, 0.0349, 0.0, 0.25, 0.25,
];

fn physical(name: &str, world: World) -> (LolaSim, Client) {
    let path = socket_path(name);
    let options =
        Options { late_after: Duration::from_secs(3600), ..Options::at(&path).stepped().physical(world) };
    let sim = LolaSim::start(options).expect("MuJoCo from the README's test command");
    let client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    (sim, client)
}

/// One cycle: a map read, `commands` answered.
fn cycle(sim: &LolaSim, client: &mut Client, commands: &ActuatorMap) -> (SensorMap, [u8; 896]) {
    sim.step().unwrap();
    let read = client.read_map();
    client.answer(commands);
    sim.wait_answer(PATIENCE).unwrap();
    read
}

/// From the first map's joint angles to StandInit in 2 s, stiff, then 1 s more; every map.
fn stand_up(sim: &LolaSim, client: &mut Client) -> Vec<[u8; 896]> {
    sim.step().unwrap();
    let (first, wire) = client.read_map();
    let mut maps = vec![wire];
    let mut commands =
        ActuatorMap { stiffness: [1.0; 25], position: first.position, ..ActuatorMap::default() };
    client.answer(&commands);
    sim.wait_answer(PATIENCE).unwrap();
    for step in 1..=250 {
        let along = (step as f32 / 167.0).min(1.0);
        for (joint, target) in STAND_INIT.iter().enumerate() {
            commands.position[joint] = first.position[joint] + (target - first.position[joint]) * along;
        }
        maps.push(cycle(sim, client, &commands).1);
    }
    maps
}

#[test]
fn a_bare_client_reads_a_robot_that_crouches_limp_then_stands_on_its_feet() {
    let (sim, mut client) = physical("physics-stand", World::Flat);
    sim.step().unwrap();
    let (first, _) = client.read_map();
    assert_eq!(first.stiffness, [0.0; 25], "LoLA starts limp");
    assert!((first.position[10] - 2.11).abs() < 0.05, "crouching: LKneePitch {}", first.position[10]);
    let weight: f32 = first.fsr.iter().sum();
    assert!((weight - 5.36).abs() < 0.27, "the FSRs carry the crouching robot: {weight} kg");
    assert!((first.accelerometer[2] + 9.81).abs() < 0.3, "upright: {:?}", first.accelerometer);
    client.answer(&ActuatorMap::default());
    sim.wait_answer(PATIENCE).unwrap();

    stand_up(&sim, &mut client);
    let (map, _) = cycle(&sim, &mut client, &ActuatorMap::default());
    let truth = sim.truth().unwrap();
    assert!(!truth.fallen && truth.torso[2] > 0.3, "standing: {truth:?}");
    assert!((map.position[10] - 0.6981).abs() < 0.02, "LKneePitch {}", map.position[10]);
    let (left, right): (f32, f32) = (map.fsr[..4].iter().sum(), map.fsr[4..].iter().sum());
    assert!(((left + right) - 5.36).abs() < 0.27, "FSRs {left} + {right} kg");
    assert!(left > 1.5 && right > 1.5, "both feet: {left} / {right} kg");
    assert!(map.current[10] > 0.0 && map.temperature[10] >= 30.0, "the knee works: {} A", map.current[10]);
    assert_eq!(sim.stats().missing, 0);
}

#[test]
fn the_same_answers_give_byte_identical_sensor_maps() {
    let run = |name: &str| {
        let (sim, mut client) = physical(name, World::Room);
        let maps = stand_up(&sim, &mut client);
        sim.push([0.0, 15.0, 0.0], Duration::from_millis(50)).unwrap();
        let mut commands =
            ActuatorMap { stiffness: [1.0; 25], position: STAND_INIT, ..ActuatorMap::default() };
        commands.sonar = [true, true];
        let more: Vec<[u8; 896]> = (0..50).map(|_| cycle(&sim, &mut client, &commands).1).collect();
        (maps, more, format!("{:?}", sim.truth().unwrap()))
    };
    let (first, second) = (run("physics-identical-1"), run("physics-identical-2"));
    assert!(first.0 == second.0 && first.1 == second.1, "sensor streams differ");
    assert_eq!(first.2, second.2);
}

#[test]
fn a_push_topples_the_standing_robot_and_the_inertial_unit_sees_it() {
    let (sim, mut client) = physical("physics-push", World::Flat);
    stand_up(&sim, &mut client);
    let reply = sim.apply(&Command::parse("push -40 0 0 100").unwrap()).unwrap();
    assert!(reply.to_string().starts_with("cycles="), "a push answers the counts: {reply}");
    let commands = ActuatorMap { stiffness: [1.0; 25], position: STAND_INIT, ..ActuatorMap::default() };
    let maps: Vec<SensorMap> = (0..250).map(|_| cycle(&sim, &mut client, &commands).0).collect();
    let truth = sim.apply(&Command::Truth).unwrap().to_string();
    assert!(truth.contains("\"fallen\": true"), "{truth}");
    assert!(maps.iter().any(|map| map.angles[1] < -1.0), "AngleY past -1 rad, backwards");
}

#[test]
fn what_the_body_senses_cannot_be_scripted_and_the_kinematic_robot_has_no_truth() {
    let (sim, _client) = physical("physics-script", World::Flat);
    assert!(matches!(sim.assign("FSR[0]=1"), Err(SimError::SensedByPhysics("FSR"))));
    assert!(matches!(sim.assign("Accelerometer=0,0,-9"), Err(SimError::SensedByPhysics("Accelerometer"))));
    sim.assign("Touch[1]=1").expect("buttons stay scripted");
    let kinematic = LolaSim::start(Options::at(socket_path("physics-none")).stepped()).unwrap();
    assert!(matches!(kinematic.truth(), Err(SimError::NoPhysics("truth"))));
    assert!(matches!(kinematic.push([1.0, 0.0, 0.0], Duration::ZERO), Err(SimError::NoPhysics("push"))));
}
