"""A NAOqi 2.1 Cartesian script (the SDK's almotion_cartesianArm1.py, in Python 3, with
plain lists where it used almath and the frame's number where it used motion.FRAME_TORSO)
against the real broker under the manual clock: getTransform, transformInterpolations
there and back, getPosition on the sensors."""

import ast

from conftest import wait_for
from test_naoqi_scripts import motion_tasks, start, step_until_done

CARTESIAN_ARM = '''from naoqi import ALProxy
motion = ALProxy("ALMotion")
dcm = ALProxy("DCM")
motion.setStiffnesses("LArm", 1.0)

effector = "LArm"
frame = 0  # motion.FRAME_TORSO
axisMask = 7  # almath.AXIS_MASK_VEL: just control position
useSensorValues = False

path = []
currentTf = motion.getTransform(effector, frame, useSensorValues)
targetTf = list(currentTf)
targetTf[3] -= 0.03  # x (r1_c4)
targetTf[7] += 0.03  # y (r2_c4)

path.append(targetTf)
path.append(currentTf)

# Go to the target and back again
times = [2.0, 4.0]  # seconds

started = dcm.getTime(0)
motion.transformInterpolations(effector, frame, path, axisMask, times)
print(dcm.getTime(0) - started)
print(currentTf[3], currentTf[7], currentTf[11])
print(motion.getPosition(effector, frame, True))
'''


def test_the_arm_goes_to_its_cartesian_target_and_back(broker):
    broker.session.call("ALMotion", "setStiffnesses", "Body", 1.0)
    broker.step(20)
    process = start(broker, CARTESIAN_ARM)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "the Cartesian task")
    out = step_until_done(broker, process, most_cycles=800)
    took, start_point, sensed = out.strip().splitlines()
    assert int(took) >= 4000 - 40, "blocked for the path's 4 s: %s ms" % took
    start_point = [float(v) for v in start_point.split()]
    sensed = ast.literal_eval(sensed)
    assert len(sensed) == 6
    assert all(abs(sensed[axis] - start_point[axis]) < 0.01 for axis in range(3)), (sensed, start_point)
    # Settled, back where it started as the sensors say (they carry a little noise).
    broker.step(200)
    position = broker.session.call("ALMotion", "getPosition", "LArm", 0, True)
    for axis in range(3):
        assert abs(position[axis] - start_point[axis]) < 3e-3, (position, start_point)
