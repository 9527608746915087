//! ROS 2's view of a robot checked by a ROS 2-on-Zenoh library this project did not write:
//! zenoh-ros2-sdk from PyPI (tests/scripts/ros2_library_check.py) finds naoqi_driver's topics and
//! their types from our liveliness tokens, receives and decodes /joint_states and /imu/torso
//! on the keys and type hashes it computes itself, and its /cmd_vel publisher's Twist becomes
//! one `ALMotion.move`. Not a real ROS 2 installation: none is in reach here (docs/ros2.md).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use naobroker_e2e::{free_port, scratch_dir, TestBroker};
use serde_json::json;

#[test]
fn a_ros2_on_zenoh_library_reads_the_topics_and_drives_through_cmd_vel() {
    let dir = scratch_dir("zenoh-ros2-sdk");
    let dictionary = dir.join("users.txt");
    std::fs::write(&dictionary, "nao-s:nao-s-pw\ncoach:coach-pw\n").unwrap();
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let zenoh = format!(
        "[zenoh]\nrobot = \"nao-s\"\nlisten = [\"{endpoint}\"]\nscouting = false\n\
         [zenoh.auth]\ndictionary_file = \"{}\"\nmovers = [\"coach\"]\n[zenoh.ros2]\ncmd_vel = true\n",
        dictionary.display()
    );
    let broker = TestBroker::start_with(&zenoh, "");
    let setup = json!({"endpoint": endpoint, "user": "coach", "password": "coach-pw"});
    let mut tool = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ros2_library_check.py"))
        .arg(setup.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (with zenoh-ros2-sdk: README's test command)");
    let mut asks = BufReader::new(tool.stdout.take().unwrap()).lines();
    let mut answers = tool.stdin.take().unwrap();
    let mut passed = false;
    while let Some(Ok(line)) = asks.next() {
        match line.as_str() {
            "step" => {
                broker.step(5);
            }
            "moved" => {
                // The Twist crosses to the broker's thread: step until ALMotion.move was called.
                let moved = (0..200).any(|_| {
                    broker.step(1);
                    broker.call("Zenoh.stats", &[])["zenoh_cmd_vel_moves"] == json!(1)
                });
                assert!(moved, "no ALMotion.move from /cmd_vel: {}", broker.call("Zenoh.stats", &[]));
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
        "the ROS 2 library's tool failed:\n{}\nbroker log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        broker.log()
    );
    let _ = std::fs::remove_dir_all(dir);
}
