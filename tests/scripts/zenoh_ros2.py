"""ROS 2's view of one robot over rmw_zenoh's keys (tests/tests/zenoh_ros2.rs), read with
eclipse-zenoh as an rmw_zenoh node would find it: naoqi_driver's node and publisher tokens,
the four topics' samples (CDR, 33-byte attachments), and /cmd_vel taken from a mover only.
Argument: JSON {"endpoint": e, "users": {name: password}}. Asks the test "step" (DCM cycles)
and waits for "done"; prints "passed" at the end."""

import json
import struct
import sys
import threading
import time

import zenoh

WAIT = 20.0
TOPICS = ["joint_states", "imu/torso", "tf", "odom"]


def session(user, password, endpoint):
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("connect/endpoints", json.dumps([endpoint]))
    config.insert_json5("listen/endpoints", "[]")
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("transport/auth/usrpwd/user", json.dumps(user))
    config.insert_json5("transport/auth/usrpwd/password", json.dumps(password))
    return zenoh.open(config)


def ask_test(line):
    print(line, flush=True)
    assert sys.stdin.readline().strip() == "done"


def stats(tool):
    for reply in tool.get("naobroker/nao-r/call/Zenoh/stats", payload="[]", timeout=5.0):
        return json.loads(reply.ok.payload.to_string())
    raise AssertionError("no stats")


def cmd_vel_count(tool):
    return stats(tool)["zenoh_cmd_vel_moves"]


def twist(x, y, turn):
    return bytes([0, 1, 0, 0]) + struct.pack("<6d", x, y, 0.0, 0.0, 0.0, turn)


def missing_tokens(tokens):
    """Which of naoqi_driver's node, four publishers and /cmd_vel subscriber have no token."""
    wanted = {
        "node": "/NN/%/%/naoqi_driver",
        "cmd_vel": "/MS/%/%/naoqi_driver/%cmd_vel/geometry_msgs::msg::dds_::Twist_/",
    }
    for topic in TOPICS:
        wanted[topic] = "/MP/%/%/naoqi_driver/%" + topic.replace("/", "%") + "/"
    return sorted(name for name, part in wanted.items() if not any(part in token for token in tokens))


def main():
    setup = json.loads(sys.argv[1])
    endpoint, users = setup["endpoint"], setup["users"]
    viewer = session("viewer", users["viewer"], endpoint)
    coach = session("coach", users["coach"], endpoint)

    # The robot's tokens reach a session that just connected a moment later, one by one: ask
    # again until all six are there.
    deadline = time.monotonic() + WAIT
    while True:
        tokens = [str(reply.ok.key_expr) for reply in viewer.liveliness().get("@ros2_lv/0/**", timeout=5.0)]
        if not missing_tokens(tokens) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not missing_tokens(tokens), (missing_tokens(tokens), tokens)

    lock, samples = threading.Lock(), {}

    def keep(sample):
        with lock:
            samples.setdefault(str(sample.key_expr).split("/")[1], []).append(sample)

    subscribers = [viewer.declare_subscriber(f"0/{topic}/*/*", keep) for topic in ["joint_states", "tf", "odom"]]
    subscribers.append(viewer.declare_subscriber("0/imu/torso/*/*", keep))
    # Until the four topics came (a subscription takes a moment to reach the robot), the
    # test steps the DCM.
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ask_test("step")
        with lock:
            if all(name in samples for name in ["joint_states", "imu", "tf", "odom"]):
                break
        time.sleep(0.2)
    with lock:
        assert all(name in samples for name in ["joint_states", "imu", "tf", "odom"]), sorted(samples)
        states = samples["joint_states"][-1]
    attachment = states.attachment.to_bytes()
    assert len(attachment) == 33 and attachment[16] == 16, attachment
    sequence, stamp_ns = struct.unpack_from("<qq", attachment)
    assert sequence >= 1 and stamp_ns > 1_600_000_000 * 10**9, (sequence, stamp_ns)
    payload = states.payload.to_bytes()
    assert payload[:4] == bytes([0, 1, 0, 0]), payload[:8]
    # Header: stamp (sec, nanosec), frame_id (length 1: the NUL), padding to 4; then the names.
    sec, nanosec, frame_length = struct.unpack_from("<iII", payload, 4)
    assert sec * 10**9 + nanosec == stamp_ns and frame_length == 1, (sec, nanosec, frame_length)
    names = struct.unpack_from("<I", payload, 20)[0]
    first = struct.unpack_from("<I", payload, 24)[0]
    assert names >= 20 and payload[28 : 28 + first - 1] == b"HeadYaw", (names, payload[24:40])

    # /cmd_vel: the viewer's Twist is dropped by the robot's access control, the coach's moves it.
    cmd_vel = [t for t in tokens if "/MS/" in t][0].split("/")
    key = "0/cmd_vel/" + "/".join(cmd_vel[-3:-1])
    viewer.put(key, twist(0.2, 0.0, 0.1))
    # The access control holds the exact key only: puts on wildcards that cover it pass it
    # and reach the robot's subscriber, which refuses them.
    wildcards = ["0/cmd_vel/**", "0/*/" + "/".join(cmd_vel[-3:-1])]
    for wildcard in wildcards:
        viewer.put(wildcard, twist(0.2, 0.0, 0.1))
    time.sleep(1.0)
    ask_test("step")
    assert cmd_vel_count(viewer) == 0
    assert stats(viewer)["zenoh_cmd_vel_refused"] == len(wildcards), stats(viewer)
    coach.put(key, twist(0.2, 0.0, 0.1))
    deadline = time.monotonic() + WAIT
    while cmd_vel_count(viewer) == 0 and time.monotonic() < deadline:
        ask_test("step")
        time.sleep(0.1)
    assert cmd_vel_count(viewer) == 1

    # A mover's calls run as the Zenoh peers' client, not as the broker's own code: the
    # broker's ownership checks hold (robotHasFallen is ALMotion's to write).
    insert = "naobroker/nao-r/call/ALMemory/insertData"
    answers = list(coach.get(insert, payload='["robotHasFallen", true]', timeout=5.0))
    assert len(answers) == 1 and answers[0].err is not None, answers
    refused = answers[0].err.payload.to_string()
    assert "belongs to module ALMotion" in refused, refused
    answers = list(coach.get(insert, payload='["Coach/Note", 1]', timeout=5.0))
    assert len(answers) == 1 and answers[0].ok is not None, answers[0].err.payload.to_string()

    for subscriber in subscribers:
        subscriber.undeclare()
    viewer.close()
    coach.close()
    print("passed", flush=True)


if __name__ == "__main__":
    main()
