//! ROS 2's view of a robot (docs/ros2.md, docs/team.md): with `[zenoh.ros2]`, naoqi_driver2's
//! node, publishers and `/cmd_vel` subscription appear as rmw_zenoh's liveliness tokens, the
//! four topics carry CDR with rmw_zenoh's attachment, and `/cmd_vel` moves the robot for a
//! mover only (tests/scripts/zenoh_ros2.py, eclipse-zenoh). Not a real ROS 2 installation:
//! none is in reach here.

use naobroker_e2e::tool::run_tool;
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
    let outcome = run_tool("zenoh_ros2.py", &setup, |request| match request {
        "step" => {
            broker.step(5);
        }
        other => panic!("the tool asked {other:?}"),
    });
    if let Err(stderr) = outcome {
        panic!("the ROS 2 tool failed:\n{stderr}\nbroker log:\n{}", broker.log());
    }
    let _ = std::fs::remove_dir_all(dir);
}
