"""NAOqi's task management examples (NAOqi 2.1's almotion_taskManagement1.py and
almotion_taskManagement2.py), unchanged, each run as its own process against the real broker
under the manual clock. Their `time.sleep` must count the robot's time, which the test steps:
a prelude makes it sleep in DCM time (the example's text follows it as published)."""

import math
import time

import pytest

from test_naoqi_scripts import start

# time.sleep(s) waits until the DCM's clock moved s seconds on. While it sleeps, SLEEP_UNTIL
# holds the DCM time it waits for (0 otherwise), so that the test stops stepping there until
# the script has seen it: its sleep then ends on time, however long the script took to look.
SLEEP_UNTIL = "PyTest/SleepUntil"
DCM_TIME_SLEEP = '''import time as _time
from naoqi import ALProxy as _ALProxy

_dcm = _ALProxy("DCM")
_memory = _ALProxy("ALMemory")
_wall_sleep = _time.sleep


def _sleep_in_dcm_time(seconds):
    end = _dcm.getTime(0) + int(round(seconds * 1000))
    _memory.insertData("%s", end)
    while _dcm.getTime(0) < end:
        _wall_sleep(0.002)
    _memory.insertData("%s", 0)


_time.sleep = _sleep_in_dcm_time
_memory.insertData("%s", 0)
print("sleeping in DCM time", flush=True)
''' % ((SLEEP_UNTIL,) * 3)

TASK_MANAGEMENT_1 = '''# -*- encoding: UTF-8 -*-

\'\'\'Task management: the second motion is postponed\'\'\'

import argparse
import math

import pytest
import time
from naoqi import ALProxy

def main(robotIP, PORT=9559):

    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Wake up robot
    motionProxy.wakeUp()

    # go to an init head pose.
    names  = ["HeadYaw", "HeadPitch"]
    angles = [0.0, 0.0]
    times  = [1.0, 1.0]
    isAbsolute = True
    motionProxy.angleInterpolation(names, angles, times, isAbsolute)

    # move slowly the head to look in the left direction. The motion will
    # take 4 seconds
    names  = "HeadYaw"
    angles = math.pi/2.0
    times  = 4.0
    isAbsolute = True
    motionProxy.post.angleInterpolation(names, angles, times, isAbsolute)

    time.sleep(1.0)

    # one second after having started motion1, check the resources use.
    # As expected the "HeadYaw" resource is busy
    isAvailable = motionProxy.areResourcesAvailable([names])
    print("areResourcesAvailable({0}): {1}".format([names], isAvailable))

    time.sleep(1.0)

    # try to look in the right direction. As the "HeadYaw" joint is busy,
    # this motion is postponed until the resource is freed
    angles = -math.pi/2.0
    times  = 2.0
    isAbsolute = True
    motionProxy.post.angleInterpolation(names, angles, times, isAbsolute)

    time.sleep(3.0)
    # Go to rest position
    motionProxy.rest()

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", type=str, default="127.0.0.1",
                        help="Robot ip address")
    parser.add_argument("--port", type=int, default=9559,
                        help="Robot port number")

    args = parser.parse_args()
    main(args.ip, args.port)
'''

TASK_MANAGEMENT_2 = '''# -*- encoding: UTF-8 -*-

\'\'\' Task management: the second motion is not postponed \'\'\'

import argparse
import math

import pytest
import time
from naoqi import ALProxy

def main(robotIP, PORT=9559):

    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Wake up robot
    motionProxy.wakeUp()

    # go to an init head pose.
    names  = ["HeadYaw", "HeadPitch"]
    angles = [0., 0.]
    times  = [1.0, 1.0]
    isAbsolute = True
    motionProxy.angleInterpolation(names, angles, times, isAbsolute)

    # move slowly the head to look in the left direction
    names  = "HeadYaw"
    angles = math.pi/2
    fractionMaxSpeed = .1
    motionProxy.setAngles(names, angles, fractionMaxSpeed)

    time.sleep(1.)

    # while the previous motion is still running, update the angle
    angles  = -math.pi/6
    fractionMaxSpeed  = 1.
    motionProxy.setAngles(names, angles, fractionMaxSpeed)

    time.sleep(2.0)
    # Go to rest position
    motionProxy.rest()

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", type=str, default="127.0.0.1",
                        help="Robot ip address")
    parser.add_argument("--port", type=int, default=9559,
                        help="Robot port number")

    args = parser.parse_args()
    main(args.ip, args.port)
'''

YAW = "Device/SubDeviceList/HeadYaw/Position/Actuator/Value"


def run_in_dcm_time(broker, script, sample, most_cycles):
    """Run `script` with its sleeps in DCM time, stepping one motion cycle (two DCM cycles)
    at a time for at most `most_cycles` DCM cycles: its output, and `sample()` each cycle."""
    process = start(broker, DCM_TIME_SLEEP + script)
    # Stepping starts once the script is connected: the interpreter's start takes wall time
    # that the steps would otherwise spend (faster calls spent all of them before it ended).
    started = process.stdout.readline()
    samples = []
    session = broker.session
    deadline = time.monotonic() + 60
    while len(samples) < most_cycles // 2 and process.poll() is None and time.monotonic() < deadline:
        until = session.call("ALMemory", "getData", SLEEP_UNTIL)
        if until and session.call("DCM", "getTime", 0) >= until:
            time.sleep(0.001)  # the script's sleep is over: it goes on before the clock does
            continue
        broker.step(2)
        samples.append(sample())
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, started + out + err
    return out, samples


def run_tracing_head_yaw(broker, example, most_cycles=16000):
    """Run the example, stepping one motion cycle at a time: HeadYaw's command each cycle.
    The examples take about 3 300 DCM cycles; the bound leaves room for what the script does
    between its calls and sleeps, while the clock goes on (its host may be busy)."""
    head_yaw = lambda: broker.session.call("ALMemory", "getData", YAW)  # noqa: E731
    return run_in_dcm_time(broker, example, head_yaw, most_cycles)


def test_task_management_1_the_second_motion_is_postponed(broker):
    out, trace = run_tracing_head_yaw(broker, TASK_MANAGEMENT_1)
    assert "areResourcesAvailable(['HeadYaw']): False" in out, out
    # The first motion ran to its end (pi/2): the second, asked for halfway, did not cut it.
    peak = max(range(len(trace)), key=lambda i: trace[i])
    assert trace[peak] > math.pi / 2 - 1e-3, trace[peak]
    # Then the second took HeadYaw to the right, until rest took the robot over.
    assert min(trace[peak:]) < math.pi / 2 - 1.0, min(trace[peak:])


def test_task_management_2_the_second_motion_is_not_postponed(broker):
    out, trace = run_tracing_head_yaw(broker, TASK_MANAGEMENT_2)
    # setAngles at 0.1 of HeadYaw's speed: about 0.8 rad in the second before the update,
    # which took over at once and reached -pi/6.
    assert 0.4 < max(trace) < math.pi / 2 - 0.3, max(trace)
    assert min(trace) == pytest.approx(-math.pi / 6, abs=1e-3)
