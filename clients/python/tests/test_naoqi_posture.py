"""NAOqi's official almotion_rest.py (the 1.14 SDK's example, as NAOqi 2.1 ships it too):
ALRobotPosture.goToPosture("StandInit", 0.5), ALMotion.rest(), then getSummary, in Python 3
syntax and otherwise unchanged, run as its own process against the real broker under the
manual clock."""

from conftest import wait_for
from test_naoqi_scripts import motion_tasks, start, step_until_done

REST = '''# -*- encoding: UTF-8 -*-

\'\'\'Rest: goes to a relax and safe position and sets Motor off\'\'\'

import sys
from naoqi import ALProxy

def main(robotIP):
    PORT = 9559

    try:
        motionProxy = ALProxy("ALMotion", robotIP, PORT)
    except Exception as e:
        print("Could not create proxy to ALMotion")
        print("Error was: ", e)

    try:
        postureProxy = ALProxy("ALRobotPosture", robotIP, PORT)
    except Exception as e:
        print("Could not create proxy to ALRobotPosture")
        print("Error was: ", e)

    # Send NAO to Pose Init
    postureProxy.goToPosture("StandInit", 0.5)

    motionProxy.rest()

    # print motion state
    print(motionProxy.getSummary())


if __name__ == "__main__":
    robotIp = "127.0.0.1"

    if len(sys.argv) <= 1:
        print("Usage python almotion_rest.py robotIP (optional default: 127.0.0.1)")
    else:
        robotIp = sys.argv[1]

    main(robotIp)
'''


def test_the_rest_example_stands_the_robot_up_then_rests_it_in_crouch(broker):
    postures = []
    broker.session.subscribe("PostureChanged", lambda name, posture: postures.append(posture))
    process = start(broker, REST)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "the script's first task")
    # Steps only while the script runs; the budget is far above what its moves need.
    out = step_until_done(broker, process, most_cycles=20000)
    wait_for(lambda: "StandInit" in postures, "PostureChanged to StandInit")
    assert broker.session.call("ALRobotPosture", "getPosture") == "Crouch"
    assert max(broker.session.call("ALMotion", "getStiffnesses", "Body")) == 0.0
    assert "Tasks" in out, out
