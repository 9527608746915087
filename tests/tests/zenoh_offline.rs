//! A robot whose network is not there yet (docs/team.md): in client mode with its router
//! unreachable the broker starts and serves its own clients, and the robot comes on the
//! network once the router listens (Zenoh tries `connect` again until reached).

use std::process::Command;

use naobroker_e2e::{free_port, TestBroker};

#[test]
fn the_broker_starts_without_its_router_and_joins_it_later() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let zenoh = format!(
        "[zenoh]\nrobot = \"nao-o\"\nmode = \"client\"\nconnect = [\"{endpoint}\"]\nscouting = false\n"
    );
    let mut broker = TestBroker::start_with(&zenoh, "");
    assert_eq!(broker.call("Zenoh.robot", &[]), "nao-o");
    // The "router": a peer listening where the robot connects, that reads one of its keys.
    let script = r#"
import sys, time, zenoh
config = zenoh.Config()
config.insert_json5("mode", '"peer"')
config.insert_json5("listen/endpoints", '["' + sys.argv[1] + '"]')
config.insert_json5("scouting/multicast/enabled", "false")
session = zenoh.open(config)
deadline = time.monotonic() + 30.0
while time.monotonic() < deadline:
    if any(reply.ok is not None for reply in session.get("naobroker/nao-o/memory/DCM/Time", timeout=1.0)):
        print("joined", flush=True)
        break
    time.sleep(0.2)
"#;
    let output = Command::new("python3")
        .args(["-c", script, &endpoint])
        .output()
        .expect("python3 runs (with eclipse-zenoh: README's test command)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("joined"),
        "{stdout}\n{}\nbroker log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        broker.log()
    );
    assert!(broker.is_running());
}
