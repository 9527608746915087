"""NAOqi's almotion_moveTo.py example (the 1.14 SDK's, as NAOqi 2.1 ships it), in Python 3
syntax, without almath (its Pose2D arithmetic done by hand): wake up, StandInit, the arms'
swing, foot contact protection, post.moveTo, waitUntilMoveIsFinished, the robot's move from
getRobotPosition. Run as its own process against the real broker under the manual clock (the
kinematic NAO: the walk steps on its timeout, its odometry counts the steps)."""

import math

from conftest import wait_for
from test_naoqi_scripts import motion_tasks, start, step_until_done

MOVE_TO = '''# -*- encoding: UTF-8 -*-

\'\'\'Walk: Small example to make Nao walk\'\'\'

import sys
import math
from naoqi import ALProxy

def main(robotIP):
    try:
        motionProxy = ALProxy("ALMotion", robotIP, 9559)
    except Exception as e:
        print("Could not create proxy to ALMotion")
        print("Error was: ", e)

    try:
        postureProxy = ALProxy("ALRobotPosture", robotIP, 9559)
    except Exception as e:
        print("Could not create proxy to ALRobotPosture")
        print("Error was: ", e)

    # Wake up robot
    motionProxy.wakeUp()

    # Send NAO to Pose Init
    postureProxy.goToPosture("StandInit", 0.5)

    #####################
    ## Enable arms control by move algorithm
    #####################
    motionProxy.setMoveArmsEnabled(True, True)

    #####################
    ## FOOT CONTACT PROTECTION
    #####################
    motionProxy.setMotionConfig([["ENABLE_FOOT_CONTACT_PROTECTION", True]])

    #####################
    ## get robot position before move
    #####################
    initRobotPosition = motionProxy.getRobotPosition(False)

    X = 0.3
    Y = 0.1
    Theta = math.pi/2.0
    motionProxy.post.moveTo(X, Y, Theta)
    # wait is useful because with post moveTo is not blocking function
    motionProxy.waitUntilMoveIsFinished()

    #####################
    ## get robot position after move
    #####################
    endRobotPosition = motionProxy.getRobotPosition(False)

    #####################
    ## compute and print the robot motion
    #####################
    x0, y0, t0 = initRobotPosition
    x1, y1, t1 = endRobotPosition
    dx, dy = x1 - x0, y1 - y0
    robotMove = [dx * math.cos(t0) + dy * math.sin(t0), -dx * math.sin(t0) + dy * math.cos(t0), t1 - t0]
    print("Robot Move :", robotMove)

    # Go to rest position
    motionProxy.rest()


if __name__ == "__main__":
    robotIp = "127.0.0.1"

    if len(sys.argv) <= 1:
        print("Usage python almotion_moveTo.py robotIP (optional default: 127.0.0.1)")
    else:
        robotIp = sys.argv[1]

    main(robotIp)
'''


def test_the_move_to_example_walks_to_its_place_and_rests(broker):
    process = start(broker, MOVE_TO)
    wait_for(lambda: motion_tasks(broker) or process.poll() is not None, "the script's first task")
    out = step_until_done(broker, process, most_cycles=60000)
    assert process.returncode == 0, out
    line = next(line for line in out.splitlines() if line.startswith("Robot Move :"))
    x, y, theta = eval(line.split(":", 1)[1])
    # moveTo stops within 1 cm of its place by the sensed odometry; the steps count a little
    # differently (docs/walk.md).
    assert math.hypot(x - 0.3, y - 0.1) < 0.02, line
    assert abs(theta - math.pi / 2) < 0.03, line
    assert broker.session.call("ALMotion", "moveIsActive") is False
    assert broker.session.call("ALRobotPosture", "getPosture") == "Crouch"
