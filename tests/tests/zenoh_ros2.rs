//! ROS 2's view of a robot (docs/ros2.md, docs/team.md): with `[zenoh.ros2]`, naoqi_driver2's
//! node, publishers and `/cmd_vel` subscription appear as rmw_zenoh's liveliness tokens, the
//! four topics carry CDR with rmw_zenoh's attachment, and `/cmd_vel` moves the robot for a
//! mover only (tests/scripts/zenoh_ros2.py, eclipse-zenoh). Not a real ROS 2 installation:
//! none is in reach here.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use naobroker_e2e::{free_port, scratch_dir, TestBroker};
use serde_json::json;

#[test]
fn ros2_sees_naoqi_driver_topics_and_only_a_mover_drives() {
    let dir = scratch_dir("zenoh-ros2");
    let dictionary = dir.join("users.txt");
    std::fs::write(&dictionary, "nao-r:nao-r-pw\nviewer:viewer-pw\ncoach:coach-pw\n").unwrap();
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let zenoh = format!(
        "[zenoh]\nrobot = \"nao-r\"\nlisten = [\"{endpoint}\"]\nscouting = false\n\
         calls = [\"Zenoh.stats\"]\nmoves = [\"ALMemory.insertData\"]\n\
         [zenoh.auth]\ndictionary_file = \"{}\"\nmovers = [\"coach\"]\n\
         [zenoh.ros2]\ncmd_vel = true\n",
        dictionary.display()
    );
    let broker = TestBroker::start_with(&zenoh, "");
    let setup = json!({"endpoint": endpoint, "users": {"viewer": "viewer-pw", "coach": "coach-pw"}});
    let mut tool = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/zenoh_ros2.py"))
        .arg(setup.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (with eclipse-zenoh: README's test command)");
    let mut asks = BufReader::new(tool.stdout.take().unwrap()).lines();
    let mut answers = tool.stdin.take().unwrap();
    let mut passed = false;
    while let Some(Ok(line)) = asks.next() {
        match line.as_str() {
            "step" => {
                broker.step(5);
            }
            "passed" => {
                passed = true;
                continue;
            }
            other => panic!("the tool asked {other:?}"),
        }
        writeln!(answers, "done").unwrap();
    }
    let output = tool.wait_with_output().unwrap();
    assert!(
        passed && output.status.success(),
        "the ROS 2 tool failed:\n{}\nbroker log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        broker.log()
    );
    let _ = std::fs::remove_dir_all(dir);
}
