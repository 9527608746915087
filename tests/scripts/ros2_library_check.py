"""ROS 2's view of one robot read by zenoh-ros2-sdk (PyPI), a ROS 2-on-Zenoh client library this
project did not write (tests/tests/zenoh_ros2_sdk.rs): its discovery lists naoqi_driver's
topics and types from our liveliness tokens; its subscribers, which compute the keys and type
hashes themselves, receive and decode /joint_states and /imu/torso; its publisher's /cmd_vel
reaches ALMotion. The message definitions come from rosbags' type store (offline: the library
would otherwise clone them from GitHub).
Argument: JSON {"endpoint": "tcp/host:port", "user": name, "password": p}. Asks the test "step"
(DCM cycles) and waits for "done"; prints "passed" at the end."""

import json
import os
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

WAIT = 20.0
TYPES = ["sensor_msgs/msg/JointState", "sensor_msgs/msg/Imu", "geometry_msgs/msg/Twist"]
SEPARATOR = "=" * 80 + "\n"


def write_message_files(directory):
    """Each type's .msg and its dependencies', as rosbags' store defines them."""
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    for typename in TYPES:
        text, _ = store.generate_msgdef(typename, ros_version=2)
        sections = text.split(SEPARATOR)
        named = [(typename, sections[0])]
        for section in sections[1:]:
            header, _, body = section.partition("\n")
            package, name = header.removeprefix("MSG: ").split("/")
            named.append((f"{package}/msg/{name}", body))
        for full_name, body in named:
            path = Path(directory, full_name + ".msg")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)


def ask_test(line):
    print(line, flush=True)
    assert sys.stdin.readline().strip() == "done"


def main():
    setup = json.loads(sys.argv[1])
    host, port = setup["endpoint"].removeprefix("tcp/").rsplit(":", 1)
    os.environ["ZENOH_CONFIG_OVERRIDE"] = (
        f'transport/auth/usrpwd/user="{setup["user"]}";'
        f'transport/auth/usrpwd/password="{setup["password"]}";'
        "scouting/multicast/enabled=false"
    )
    messages = tempfile.mkdtemp(prefix="ros2-msgs-")
    write_message_files(messages)

    from zenoh_ros2_sdk import ROS2Publisher, ROS2Subscriber, get_registry, get_topic_names_and_types

    get_registry(messages)
    address = {"router_ip": host, "router_port": int(port)}

    expected = {
        "/joint_states": "sensor_msgs/msg/JointState",
        "/imu/torso": "sensor_msgs/msg/Imu",
        "/tf": "tf2_msgs/msg/TFMessage",
        "/odom": "nav_msgs/msg/Odometry",
        "/cmd_vel": "geometry_msgs/msg/Twist",
    }

    def missing(topics):
        return [topic for topic, message in expected.items() if message not in topics.get(topic, [])]

    # The robot declares its tokens one by one as the adapter opens: a client that comes as
    # early as this one may see part of them; ask again until all are there.
    deadline = time.monotonic() + WAIT
    while True:
        topics = dict(get_topic_names_and_types(domain_id=0, timeout=2.0, **address))
        if not missing(topics) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not missing(topics), (missing(topics), topics)

    lock, received = threading.Lock(), {}

    def keeper(topic):
        def keep(message):
            with lock:
                received.setdefault(topic, []).append(message)

        return keep

    subscribers = [
        ROS2Subscriber("/joint_states", "sensor_msgs/msg/JointState", keeper("joint_states"), domain_id=0, **address),
        ROS2Subscriber("/imu/torso", "sensor_msgs/msg/Imu", keeper("imu"), domain_id=0, **address),
    ]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ask_test("step")
        with lock:
            if "joint_states" in received and "imu" in received:
                break
        time.sleep(0.2)
    with lock:
        assert "joint_states" in received and "imu" in received, sorted(received)
        states, imu = received["joint_states"][-1], received["imu"][-1]
    assert "HeadYaw" in states.name and len(states.position) == len(states.name), states
    assert imu.header.frame_id == "base_link", imu.header
    # Standing still: gravity along the torso's z, as the robot's accelerometer reads it.
    assert abs(imu.linear_acceleration.z) > 5.0, imu.linear_acceleration

    publisher = ROS2Publisher("/cmd_vel", "geometry_msgs/msg/Twist", domain_id=0, **address)
    vector = publisher.session_mgr.store.types["geometry_msgs/msg/Vector3"]
    publisher.publish(linear=vector(x=0.2, y=0.0, z=0.0), angular=vector(x=0.0, y=0.0, z=0.1))
    ask_test("moved")

    for subscriber in subscribers:
        subscriber.close()
    publisher.close()
    print("passed", flush=True)


if __name__ == "__main__":
    # The library's Zenoh session keeps threads that would hold the process after a failure.
    try:
        main()
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    os._exit(0)
