"""Typical NAOqi scripts, unchanged, against the real broker under the manual clock:
a Choregraphe timeline export (key frames and Bezier), the argument shapes NAOqi users
type, posted motion tasks, and the classic "react to touch" module with its ALBroker.

Each script runs as its own process, as a user would run it; NAOBROKER_URL points its
ALProxy/ALBroker at the test broker. A script that blocks on ALMotion waits for DCM time,
so the test steps the DCM while the script runs.
"""

import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from conftest import wait_for
from naoqi import ALProxy

# Choregraphe's "export to Python" of a timeline (simple key frames), as generated.
TIMELINE_KEYS = '''# Choregraphe simplified export in Python.
from naoqi import ALProxy
names = list()
times = list()
keys = list()

names.append("HeadPitch")
times.append([0.4, 1.2, 2])
keys.append([-0.15, 0.2, 0.05])

names.append("HeadYaw")
times.append([0.4, 1.2, 2])
keys.append([0.5, -0.5, 0.25])

names.append("LShoulderPitch")
times.append([1.2])
keys.append([0.9])

try:
  # uncomment the following line and modify the IP if you use this script outside Choregraphe.
  # motion = ALProxy("ALMotion", IP, 9559)
  motion = ALProxy("ALMotion")
  motion.angleInterpolation(names, keys, times, True)
  print(ALProxy("DCM").getTime(0))
except BaseException as err:
  print(err)
  raise
'''

# The same timeline in Choregraphe's Bezier export: [angle, [type, dTime, dAngle] x 2].
TIMELINE_BEZIER = '''# Choregraphe bezier export in Python.
from naoqi import ALProxy
names = list()
times = list()
keys = list()

names.append("HeadPitch")
times.append([0.4, 1.2, 2])
keys.append([[-0.15, [3, -0.133333, 0], [3, 0.266667, 0]], [0.2, [3, -0.266667, 0], [3, 0.266667, 0]], [0.05, [3, -0.266667, 0], [3, 0, 0]]])

names.append("HeadYaw")
times.append([0.4, 1.2, 2])
keys.append([[0.5, [3, -0.133333, 0], [3, 0.266667, 0]], [-0.5, [3, -0.266667, 0], [3, 0.266667, 0]], [0.25, [3, -0.266667, 0], [3, 0, 0]]])

names.append("LShoulderPitch")
times.append([1.2])
keys.append([[0.9, [3, -0.4, 0], [3, 0, 0]]])

try:
  # uncomment the following line and modify the IP if you use this script outside Choregraphe.
  # motion = ALProxy("ALMotion", IP, 9559)
  motion = ALProxy("ALMotion")
  motion.angleInterpolationBezier(names, times, keys)
  print(ALProxy("DCM").getTime(0))
except BaseException as err:
  print(err)
  raise
'''

FINAL_POSE = {"HeadPitch": 0.05, "HeadYaw": 0.25, "LShoulderPitch": 0.9}

# NAOqi's "reacting to events" example, with the touch event of the front head sensor.
REACT_TO_TOUCH = '''
import sys
import time

from naoqi import ALProxy, ALBroker, ALModule

ReactToTouch = None
memory = None


class ReactToTouchModule(ALModule):
    """ A simple module able to react to touch events. """

    def __init__(self, name):
        ALModule.__init__(self, name)
        global memory
        memory = ALProxy("ALMemory")
        memory.subscribeToEvent("FrontTactilTouched", "ReactToTouch", "onTouched")

    def onTouched(self, strVarName, value):
        """ This will be called each time a touch is detected. """
        print("%s %s" % (strVarName, value))
        sys.stdout.flush()
        if value == 0.0:
            memory.unsubscribeToEvent("FrontTactilTouched", "ReactToTouch")
            global done
            done = True


done = False


def main():
    myBroker = ALBroker("myBroker", "0.0.0.0", 0, "127.0.0.1", 9559)
    global ReactToTouch
    ReactToTouch = ReactToTouchModule("ReactToTouch")
    print("ready")
    sys.stdout.flush()
    while not done:
        time.sleep(0.05)
    myBroker.shutdown()


main()
'''


def start(broker, script):
    env = dict(os.environ, NAOBROKER_URL=broker.url)
    return subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def lines_of(process):
    """The process's output lines as a queue, so that reading one can time out."""
    lines = queue.Queue()

    def read():
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def motion_tasks(broker):
    return broker.session.call("ALMotion", "getTaskList")


def step_until_done(broker, process, most_cycles):
    """Step the DCM two cycles (one motion cycle) at a time while `process` runs."""
    for _ in range(most_cycles // 2):
        if process.poll() is not None:
            break
        broker.step(2)
        time.sleep(0.002)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, out + err
    return out


def angles(broker, names):
    return dict(zip(names, broker.session.call("ALMotion", "getAngles", names, False)))


@pytest.mark.parametrize("script", [TIMELINE_KEYS, TIMELINE_BEZIER], ids=["keys", "bezier"])
def test_a_choregraphe_timeline_export_plays_to_its_last_key(broker, script):
    process = start(broker, script)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "the timeline's task")
    started_at = broker.session.call("DCM", "getTime", 0)
    returned_at = int(step_until_done(broker, process, most_cycles=600))
    # The call returns once its last commands are sent, one motion cycle (20 ms) ahead.
    assert returned_at - started_at >= 2000 - 20, "the call returned before its last key (2 s)"
    for name, value in angles(broker, list(FINAL_POSE)).items():
        assert value == pytest.approx(FINAL_POSE[name], abs=1e-3), name


def test_the_argument_shapes_naoqi_users_type(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    motion = ALProxy("ALMotion")
    shapes = [
        # (method, args, the joints' angles once done)
        ("stiffnessInterpolation", ("Body", 1.0, 1.0), None),
        ("angleInterpolation", (["HeadYaw"], [[0.5]], [[1.0]], True), {"HeadYaw": 0.5}),
        ("angleInterpolation", (["HeadYaw", "HeadPitch"], [0.2, 0.1], [1.0, 1.2], True),
         {"HeadYaw": 0.2, "HeadPitch": 0.1}),
        ("angleInterpolation", ("HeadYaw", [0.1, -0.1], [0.5, 1.0], True), {"HeadYaw": -0.1}),
        ("angleInterpolation", ("Head", 0.0, 1.0, True), {"HeadYaw": 0.0, "HeadPitch": 0.0}),
        ("angleInterpolationBezier", (["HeadYaw"], [[1.0]], [[[0.3, [3, -0.3, 0], [3, 0, 0]]]]), {"HeadYaw": 0.3}),
        ("angleInterpolationBezier", ("HeadYaw", [1.0], [[-0.3, [3, -0.3, 0], [3, 0, 0]]]), {"HeadYaw": -0.3}),
        ("angleInterpolationWithSpeed", ("LArm", [1.0, 0.2, -1.0, -0.5, 0.0, 0.3], 0.5),
         {"LShoulderPitch": 1.0, "LElbowRoll": -0.5}),
    ]
    for method, args, expected in shapes:
        task = getattr(motion.post, method)(*args)
        assert task > 0, (method, args)
        broker.step(300)
        assert motion.wait(task, 0) is True, (method, args)
        if expected:
            for name, value in angles(broker, list(expected)).items():
                assert value == pytest.approx(expected[name], abs=1e-3), (method, args, name)


def test_a_malformed_posted_motion_is_refused_with_its_error(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    motion = ALProxy("ALMotion")
    with pytest.raises(Exception) as refused:
        motion.post.angleInterpolation(["HeadYaw"], [0.1, 0.2], [1.0], True)
    assert "HeadYaw" in str(refused.value)
    assert motion.getTaskList() == []


def test_the_react_to_touch_example_hears_a_touch_and_its_release(broker):
    broker.step(1)  # ALSensors takes the sensors' starting values on the first cycle
    process = start(broker, REACT_TO_TOUCH)
    lines = lines_of(process)
    assert lines.get(timeout=30) == "ready\n"
    sensor = "Head/Touch/Front/Sensor/Value"
    for value in (1.0, 0.0):
        broker.session.call("DCM", "simulateSensor", sensor, value)
        broker.step(2)
        assert lines.get(timeout=30) == "FrontTactilTouched %s\n" % value
    process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
    wait_for(lambda: "ReactToTouch" not in broker.session.call("ServiceDirectory", "modules"), "unregistered")
