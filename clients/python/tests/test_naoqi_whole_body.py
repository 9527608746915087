"""NAOqi 2.1's whole-body kick (the SDK's almotion_wbKick.py, in Python 3, with plain 4x4
lists and their products where it used almath, and the frame's number where it used
motion.FRAME_WORLD) against the real broker under the manual clock: wakeUp, StandInit, the
whole body with both feet fixed, the centre of mass to the left leg, the right foot free
along its kick, rest."""

from conftest import wait_for
from test_naoqi_scripts import motion_tasks, start, step_until_done

WB_KICK = '''import math
from naoqi import ALProxy

def mul(a, b):
    # almath.Transform's product, of 4x4 matrices row-major.
    return [sum(a[4 * r + k] * b[4 * k + c] for k in range(4)) for r in range(4) for c in range(4)]

def translation(x, y, z):
    return [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z, 0.0, 0.0, 0.0, 1.0]

def rot_y(angle):
    c, s = math.cos(angle), math.sin(angle)
    return [c, 0.0, s, 0.0, 0.0, 1.0, 0.0, 0.0, -s, 0.0, c, 0.0, 0.0, 0.0, 0.0, 1.0]

def computePath(proxy, effector, frame):
    dx = 0.08                   # translation axis X (meters)
    dz = 0.07                   # translation axis Z (meters)
    dwy = 5.0 * math.pi / 180.0 # rotation axis Y (radian)
    useSensorValues = False
    path = []
    currentTf = proxy.getTransform(effector, frame, useSensorValues)
    path.append(mul(mul(currentTf, translation(0.0, 0.0, dz)), rot_y(dwy)))
    path.append(mul(currentTf, translation(dx, 0.0, dz)))
    path.append(currentTf)
    return path

motionProxy = ALProxy("ALMotion")
postureProxy = ALProxy("ALRobotPosture")
motionProxy.wakeUp()
postureProxy.goToPosture("StandInit", 0.5)
motionProxy.wbEnable(True)
motionProxy.wbFootState("Fixed", "Legs")
motionProxy.wbEnableBalanceConstraint(True, "Legs")
motionProxy.wbGoToBalance("LLeg", 2.5)
motionProxy.wbFootState("Free", "RLeg")
effector = "RLeg"
axisMask = 63
frame = 1  # motion.FRAME_WORLD
times = [1.2, 1.6, 2.3]
path = computePath(motionProxy, effector, frame)
motionProxy.transformInterpolations(effector, frame, path, axisMask, times)
print(path[2][3], path[2][7], path[2][11])
print(*motionProxy.getPosition(effector, frame, False)[:3])
motionProxy.rest()
print(motionProxy.robotIsWakeUp())
'''


def test_naoqi_wb_kick_runs_to_its_end_and_the_foot_comes_back(broker):
    process = start(broker, WB_KICK)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "wakeUp's task")
    out = step_until_done(broker, process, most_cycles=4000)
    start_point, end_point, awake = out.strip().splitlines()
    start_point = [float(v) for v in start_point.split()]
    end_point = [float(v) for v in end_point.split()]
    assert all(abs(end_point[axis] - start_point[axis]) < 2e-3 for axis in range(3)), (start_point, end_point)
    assert awake == "False", "rested"
