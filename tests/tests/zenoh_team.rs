//! A team on one machine (docs/team.md): three brokers, three simulated robots on Zenoh,
//! and a tool written with eclipse-zenoh (tests/scripts/zenoh_team.py) that sees all three
//! robots' keys and events, calls a method on one, is refused a move it has no right to,
//! and sees a robot leave when its broker is killed. Loopback endpoints and explicit
//! `connect`: multicast scouting is off, as it must be on a machine running other tests.

use std::collections::BTreeMap;

use naobroker_e2e::tool::run_tool;
use naobroker_e2e::{free_port, scratch_dir, TestBroker};
use serde_json::json;

const ROBOTS: [&str; 3] = ["nao-a", "nao-b", "nao-c"];

/// Each robot's broker, listening on its own port and connecting to the ones before it.
fn team(dictionary: &std::path::Path) -> (Vec<TestBroker>, BTreeMap<String, String>) {
    let ports: Vec<u16> = ROBOTS.iter().map(|_| free_port()).collect();
    let endpoint = |port: u16| format!("tcp/127.0.0.1:{port}");
    let mut brokers = Vec::new();
    for (index, robot) in ROBOTS.iter().enumerate() {
        let connect: Vec<String> = ports[..index].iter().map(|port| endpoint(*port)).collect();
        let zenoh = format!(
            "[zenoh]\nrobot = \"{robot}\"\nlisten = [\"{}\"]\nconnect = {}\nscouting = false\n\
             events = [\"TeamTest/Hello\"]\nmoves = [\"ALMotion.setMoveArmsEnabled\"]\n\
             [zenoh.auth]\ndictionary_file = \"{}\"\nmovers = [\"coach\"]\n",
            endpoint(ports[index]),
            json!(connect),
            dictionary.display()
        );
        brokers.push(TestBroker::start_with(&zenoh, ""));
    }
    let endpoints = ROBOTS.iter().zip(&ports).map(|(robot, port)| (robot.to_string(), endpoint(*port)));
    (brokers, endpoints.collect())
}

#[test]
fn a_tool_sees_the_team_calls_one_robot_and_sees_one_leave() {
    let dir = scratch_dir("zenoh-team");
    let dictionary = dir.join("users.txt");
    let users = json!({"viewer": "viewer-pw", "coach": "coach-pw"});
    let mut lines: Vec<String> = ROBOTS.iter().map(|robot| format!("{robot}:{robot}-pw")).collect();
    lines.extend(["viewer:viewer-pw".to_owned(), "coach:coach-pw".to_owned()]);
    std::fs::write(&dictionary, lines.join("\n")).unwrap();
    let (mut brokers, endpoints) = team(&dictionary);
    let setup = json!({"robots": endpoints, "users": users});
    let outcome = run_tool("zenoh_team.py", &setup, |request| match request {
        "step" => {
            for (broker, robot) in brokers.iter().zip(ROBOTS) {
                broker.step(1);
                broker.call("ALMemory.raiseEvent", &["TeamTest/Hello", &format!("\"hi from {robot}\"")]);
            }
        }
        "kill nao-c" => brokers[2].kill(),
        other => panic!("the tool asked {other:?}"),
    });
    if let Err(stderr) = outcome {
        let logs: Vec<String> = brokers.iter().map(TestBroker::log).collect();
        panic!("the team tool failed:\n{stderr}\nbroker logs:\n{}", logs.join("\n---\n"));
    }
    for broker in &mut brokers[..2] {
        assert!(broker.is_running());
    }
    let stats = brokers[0].call("Zenoh.stats", &[]);
    assert!(stats["zenoh_calls"].as_u64().unwrap() >= 3, "{stats}");
    assert!(stats["zenoh_queries_refused"].as_u64().unwrap() >= 1, "{stats}");
    let _ = std::fs::remove_dir_all(dir);
}
