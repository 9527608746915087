"""A team tool on Zenoh (tests/tests/zenoh_team.rs): watches three robots' brokers with
eclipse-zenoh, calls a method on one, is refused a move it has no right to, sees a robot
leave. Argument: JSON {"robots": {name: endpoint}, "users": {name: password}}. It asks the
test for what only the test can do on a line of stdout ("step", "kill nao-c") and waits for
"done" on stdin; prints "passed" at the end. Discovery is explicit (connect to each
broker's loopback endpoint): multicast scouting is off, as on a machine running other tests."""

import json
import sys
import threading
import time

import zenoh

WAIT = 20.0


def session(user, password, endpoints):
    config = zenoh.Config()
    # A peer that connects to each robot and listens nowhere: each broker authenticates it.
    config.insert_json5("mode", '"peer"')
    config.insert_json5("connect/endpoints", json.dumps(endpoints))
    config.insert_json5("listen/endpoints", "[]")
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("transport/auth/usrpwd/user", json.dumps(user))
    config.insert_json5("transport/auth/usrpwd/password", json.dumps(password))
    return zenoh.open(config)


def ask_test(line):
    print(line, flush=True)
    answer = sys.stdin.readline().strip()
    assert answer == "done", answer


class Seen:
    """Samples by key, filled by subscriber callbacks."""

    def __init__(self):
        self.lock = threading.Lock()
        self.samples = {}

    def __call__(self, sample):
        with self.lock:
            self.samples.setdefault(str(sample.key_expr), []).append(sample)

    def wait_for(self, keys, what):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            with self.lock:
                if all(key in self.samples for key in keys):
                    return {key: self.samples[key] for key in keys}
            time.sleep(0.05)
        with self.lock:
            raise AssertionError(f"{what}: saw only {sorted(self.samples)}")


def replies(session_, selector, payload=None, timeout=5.0):
    """(ok: {key: value}, errors: [text]) of a get."""
    ok, errors = {}, []
    for reply in session_.get(selector, payload=payload, timeout=timeout):
        if reply.ok is not None:
            ok[str(reply.ok.key_expr)] = json.loads(reply.ok.payload.to_string())
        else:
            errors.append(reply.err.payload.to_string())
    return ok, errors


def call(session_, robot, target, args, timeout=5.0):
    module, method = target.split(".")
    return replies(session_, f"naobroker/{robot}/call/{module}/{method}", json.dumps(args), timeout)


def main():
    setup = json.loads(sys.argv[1])
    robots, users = setup["robots"], setup["users"]
    endpoints = list(robots.values())
    viewer = session("viewer", users["viewer"], endpoints)
    coach = session("coach", users["coach"], [robots["nao-a"]])

    # Every robot, and each robot's modules, is seen present.
    presence = Seen()
    robots_watch = viewer.liveliness().declare_subscriber("naobroker/*", presence, history=True)
    presence.wait_for([f"naobroker/{name}" for name in robots], "the robots' liveliness tokens")
    # A robot's module tokens come after its own, one by one: ask again until all are there.
    for name in robots:
        deadline = time.monotonic() + WAIT
        while True:
            tokens = viewer.liveliness().get(f"naobroker/{name}/module/*", timeout=5.0)
            modules = [str(token.ok.key_expr).rsplit("/", 1)[1] for token in tokens]
            missing = [m for m in ["ALMemory", "ALMotion", "DCM", "Zenoh"] if m not in modules]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert not missing, (name, missing, modules)

    # Each robot's cycle values and events, as they come.
    seen = Seen()
    values = viewer.declare_subscriber("naobroker/*/memory/DCM/Time", seen)
    events = viewer.declare_subscriber("naobroker/*/event/**", seen)
    # Until every robot's value and event came (a subscription takes a moment to reach
    # every broker), the test steps each robot's DCM and raises the event again.
    wanted = [f"naobroker/{name}/memory/DCM/Time" for name in robots]
    wanted += [f"naobroker/{name}/event/TeamTest/Hello" for name in robots]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ask_test("step")
        with seen.lock:
            if all(key in seen.samples for key in wanted):
                break
        time.sleep(0.2)
    got = seen.wait_for(wanted, "every robot's DCM/Time and event")
    for name in robots:
        stamp = got[f"naobroker/{name}/memory/DCM/Time"][-1].attachment
        assert stamp is not None and int.from_bytes(stamp.to_bytes(), "little") > 0
        hello = got[f"naobroker/{name}/event/TeamTest/Hello"][-1]
        assert json.loads(hello.payload.to_string()) == f"hi from {name}"

    # Any key, on every robot at once, with wildcards.
    times, errors = replies(viewer, "naobroker/*/memory/DCM/Time")
    assert sorted(times) == [f"naobroker/{name}/memory/DCM/Time" for name in sorted(robots)], (times, errors)
    joints, _ = replies(viewer, "naobroker/nao-b/memory/Device/SubDeviceList/*/Position/Sensor/Value")
    assert "naobroker/nao-b/memory/Device/SubDeviceList/HeadYaw/Position/Sensor/Value" in joints, joints
    assert len(joints) > 20, len(joints)

    # A read-only call on one robot; a method not exported, refused by name.
    got, errors = call(viewer, "nao-b", "ALMemory.getData", ["DCM/Time"])
    assert list(got.values()) == [times["naobroker/nao-b/memory/DCM/Time"]], (got, errors)
    got, errors = call(viewer, "nao-a", "ALMotion.wakeUp", [])
    assert not got and "ALMotion.wakeUp is not exported" in errors[0], (got, errors)

    # A call held for the movers: refused to the viewer by the robot's access control (no
    # reply reaches it), made for the coach. setMoveArmsEnabled stands for a move here: it
    # changes how the walk swings the arms, and its effect is read back at once, without
    # the robot moving (tests/tests/zenoh_ros2.rs drives the robot through /cmd_vel).
    got, errors = call(viewer, "nao-a", "ALMotion.setMoveArmsEnabled", [False, False], timeout=2.0)
    assert not got and not errors, (got, errors)
    arms, _ = call(viewer, "nao-a", "ALMotion.getMoveArmsEnabled", ["Arms"])
    assert list(arms.values()) == [True], arms
    got, errors = call(coach, "nao-a", "ALMotion.setMoveArmsEnabled", [False, False])
    assert len(got) == 1 and not errors, (got, errors)
    arms, _ = call(viewer, "nao-a", "ALMotion.getMoveArmsEnabled", ["Arms"])
    assert list(arms.values()) == [False], arms

    # A robot whose broker dies leaves: its token goes, with its modules'.
    ask_test("kill nao-c")
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        with presence.lock:
            gone = [s for s in presence.samples.get("naobroker/nao-c", []) if s.kind == zenoh.SampleKind.DELETE]
        if gone:
            break
        time.sleep(0.05)
    assert gone, "nao-c never left"
    present = [str(reply.ok.key_expr) for reply in viewer.liveliness().get("naobroker/*", timeout=5.0)]
    assert sorted(present) == ["naobroker/nao-a", "naobroker/nao-b"], present
    left = list(viewer.liveliness().get("naobroker/nao-c/module/*", timeout=2.0))
    assert not left, left

    robots_watch.undeclare()
    values.undeclare()
    events.undeclare()
    viewer.close()
    coach.close()
    print("passed", flush=True)


if __name__ == "__main__":
    main()
