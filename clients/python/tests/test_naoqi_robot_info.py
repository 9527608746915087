"""NAOqi's official examples for getSummary, getRobotConfig, openHand/closeHand (the SDK's
almotion_getsummary.py, almotion_getrobotconfig.py, almotion_openhand.py,
almotion_closehand.py) and the inertial unit page's ALMemory snippet with NAOqi 2.1's key
names (InertialSensor/GyrX, AccX, ...), in Python 3 syntax and otherwise unchanged, each run
as its own process against the real broker under the manual clock."""

from conftest import wait_for
from test_naoqi_scripts import motion_tasks, start, step_until_done

# The SDK's examples are all built the same way: a proxy, one call, the usual main.
EXAMPLE = '''import sys
from naoqi import ALProxy


def main(robotIP):
    PORT = 9559

    try:
        motionProxy = ALProxy("ALMotion", robotIP, PORT)
    except Exception as e:
        print("Could not create proxy to ALMotion")
        print("Error was: ", e)
        sys.exit(1)

%s


if __name__ == "__main__":
    robotIp = "127.0.0.1"

    if len(sys.argv) <= 1:
        print("Usage python almotion_example.py robotIP (optional default: 127.0.0.1)")
    else:
        robotIp = sys.argv[1]

    main(robotIp)
'''

GET_SUMMARY = EXAMPLE % '''    # Example showing how to get a summary of Nao's state
    print(motionProxy.getSummary())'''

GET_ROBOT_CONFIG = EXAMPLE % '''    # Example showing how to get the robot config
    robotConfig = motionProxy.getRobotConfig()
    for i in range(len(robotConfig[0])):
        print(robotConfig[0][i], ": ", robotConfig[1][i])'''

OPEN_HAND = EXAMPLE % '''    # Example showing how to open the left hand
    motionProxy.openHand('LHand')'''

CLOSE_HAND = EXAMPLE % '''    # Example showing how to close the left hand
    motionProxy.closeHand('LHand')'''

# The inertial unit page's snippet, with NAOqi 2.1's key names.
INERTIAL = '''from naoqi import ALProxy

IP = "127.0.0.1"  # set your Ip address here
PORT = 9559

# ====================
# Create proxy to ALMemory
memoryProxy = ALProxy("ALMemory", IP, PORT)

# Get the Gyrometers Values
GyrX = memoryProxy.getData("Device/SubDeviceList/InertialSensor/GyrX/Sensor/Value")
GyrY = memoryProxy.getData("Device/SubDeviceList/InertialSensor/GyrY/Sensor/Value")
print("Gyrometers value X: %.3f, Y: %.3f" % (GyrX, GyrY))

# Get the Accelerometers Values
AccX = memoryProxy.getData("Device/SubDeviceList/InertialSensor/AccX/Sensor/Value")
AccY = memoryProxy.getData("Device/SubDeviceList/InertialSensor/AccY/Sensor/Value")
AccZ = memoryProxy.getData("Device/SubDeviceList/InertialSensor/AccZ/Sensor/Value")
print("Accelerometers value X: %.3f, Y: %.3f, Z: %.3f" % (AccX, AccY, AccZ))

# Get the Compute Torso Angle in radian
TorsoAngleX = memoryProxy.getData("Device/SubDeviceList/InertialSensor/AngleX/Sensor/Value")
TorsoAngleY = memoryProxy.getData("Device/SubDeviceList/InertialSensor/AngleY/Sensor/Value")
print("Torso Angles [radian] X: %.3f, Y: %.3f" % (TorsoAngleX, TorsoAngleY))
'''


def run_quick(broker, script):
    """A script that does not wait for the motion cycle: its output."""
    process = start(broker, script)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, out + err
    return out


def run_blocking(broker, script):
    """A script whose call blocks on an ALMotion task: stepped until it ends."""
    process = start(broker, script)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "the script's task")
    return step_until_done(broker, process, most_cycles=400)


def test_the_summary_example_prints_every_joint(broker):
    broker.step(2)
    out = run_quick(broker, GET_SUMMARY)
    for joint in broker.session.call("ALMotion", "getBodyNames", "Body"):
        assert any(line.split()[:1] == [joint] for line in out.splitlines()), out
    assert "Tasks" in out


def test_the_robot_config_example_prints_a_nao_h25(broker):
    out = run_quick(broker, GET_ROBOT_CONFIG)
    # The example prints its usage line first when given no address (NAOBROKER_URL is ours).
    rows = dict(line.split(" :  ") for line in out.strip().splitlines() if " :  " in line)
    assert rows["Model Type"] == "naoH25", out
    assert rows["Number of Hands"] == "2", out
    assert len(rows) == 12, out


def test_the_hand_examples_open_and_close_the_left_hand(broker):
    broker.session.call("ALMotion", "setStiffnesses", "LHand", 1.0)
    broker.step(2)
    run_blocking(broker, OPEN_HAND)
    assert broker.session.call("ALMotion", "getAngles", "LHand", False) == [1.0]
    run_blocking(broker, CLOSE_HAND)
    assert broker.session.call("ALMotion", "getAngles", "LHand", False) == [0.0]


def test_the_inertial_snippet_reads_naoqi_21_key_names(broker):
    broker.step(2)
    out = run_quick(broker, INERTIAL)
    gyrometers, accelerometers, angles = out.strip().splitlines()
    assert gyrometers == "Gyrometers value X: 0.000, Y: 0.000", out
    # The simulated robot is upright: gravity on Z, as the key's today's name reads it.
    z = broker.session.call(
        "ALMemory", "getData", "Device/SubDeviceList/InertialSensor/AccelerometerZ/Sensor/Value"
    )
    assert accelerometers == "Accelerometers value X: 0.000, Y: 0.000, Z: %.3f" % z, out
    assert angles.startswith("Torso Angles [radian] X: "), out
