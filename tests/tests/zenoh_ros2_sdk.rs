//! ROS 2's view of a robot checked by a ROS 2-on-Zenoh library this project did not write:
//! zenoh-ros2-sdk from PyPI (tests/scripts/ros2_library_check.py) finds naoqi_driver's topics and
//! their types from our liveliness tokens, receives and decodes /joint_states and /imu/torso
//! on the keys and type hashes it computes itself, and its /cmd_vel publisher's Twist becomes
//! one `ALMotion.move`. Not a real ROS 2 installation: none is in reach here (docs/ros2.md).

use naobroker_e2e::tool::run_tool;
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
    let outcome = run_tool("ros2_library_check.py", &setup, |request| match request {
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
        other => panic!("the tool asked {other:?}"),
    });
    if let Err(stderr) = outcome {
        panic!("the ROS 2 library's tool failed:\n{stderr}\nbroker log:\n{}", broker.log());
    }
    let _ = std::fs::remove_dir_all(dir);
}
