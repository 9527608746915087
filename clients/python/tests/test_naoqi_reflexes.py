"""NAOqi 2.1's examples of self-collision (almotion_collisionDetection.py,
almotion_reflexesCollisionAvoidance.py, almotion_isCollision.py), external collision
protection (almotion_setExternalCollisionProtectionEnabled.py) and breath (almotion_breath.py,
almotion_setBreathConfig.py), in Python 3 syntax (their `print` statements) and otherwise
unchanged, each run as its own process against the real broker under the manual clock.

Two preludes go before them: `time.sleep` counts DCM time (test_naoqi_task_rules.py), and
`almath` and `motion`, NAOqi SDK modules the naobroker client does not ship, answer the one
name these examples take from them, `TO_RAD`."""

from test_naoqi_task_rules import run_in_dcm_time

SDK_CONSTANTS = '''import math as _math
import sys as _sys
import types as _types

for _name in ("almath", "motion"):
    _sys.modules[_name] = _types.SimpleNamespace(TO_RAD=_math.pi / 180.0)
'''

ARGUMENTS = '''

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", type=str, default="127.0.0.1",
                        help="Robot ip address")
    parser.add_argument("--port", type=int, default=9559,
                        help="Robot port number")
%s
    args = parser.parse_args()
    main(%s)
'''

MOVE_ARM = '''# -*- encoding: UTF-8 -*-

\'\'\' Collision detection : arm collision detection \'\'\'

import argparse
import almath
import time
from naoqi import ALProxy

def moveArm(motionProxy, pTarget, pRobotName, pChainName):
    \'\'\' Function to make NAO bump on his Torso or Head with his arm \'\'\'

    # Set the fraction of max speed for the arm movement.
    pMaxSpeedFraction = 0.5

    # Define the final position.
    if pTarget == "Torso":
        shoulderPitchAngle = 50
    elif pTarget == "Head":
        shoulderPitchAngle = -50
    else:
        print("ERROR: target is unknown")
        print("Must be Torso or Head")
        print("---------------------")
        exit(1)

    ShoulderRollAngle  = 6
    ElbowYawAngle      = 0
    ElbowRollAngle     = -150

    if pChainName == "LArm":
        pTargetAngles = [shoulderPitchAngle, +ShoulderRollAngle,
            +ElbowYawAngle, +ElbowRollAngle]
    elif pChainName == "RArm":
        pTargetAngles = [shoulderPitchAngle, -ShoulderRollAngle,
            -ElbowYawAngle, -ElbowRollAngle]
    else:
        print("ERROR: chainName is unknown")
        print("Must be LArm or RArm")
        print("---------------------")
        exit(1)

    # Set the target angles according to the robot version.
    if pRobotName == "naoH25" or\\
       pRobotName == "naoAcademics" or\\
       pRobotName == "naoT14":
        pTargetAngles += [0.0, 0.0]
    elif pRobotName == "naoH21":
        pass
    elif pRobotName == "naoT2":
        pTargetAngles = []
    else:
        print("ERROR: Your robot is unknown")
        print("This test is not available for your Robot")
        print("---------------------")
        exit(1)

    # Convert to radians.
    pTargetAngles = [x * almath.TO_RAD for x in pTargetAngles]

    # Move the arm to the final position.
    motionProxy.angleInterpolationWithSpeed(
        pChainName, pTargetAngles, pMaxSpeedFraction)
'''

COLLISION_DETECTION = MOVE_ARM + '''

def main(robotIP, pChainName, PORT=9559):
    \'\'\' Example showing the effect of collision detection
        Nao bumps his chest with his left arm with collision detection enabled
        or disabled.
    \'\'\'

    ##################
    # Initialization #
    ##################

    motionProxy  = ALProxy("ALMotion", robotIP, PORT)
    postureProxy = ALProxy("ALRobotPosture", robotIP, PORT)

    # Wake up robot
    motionProxy.wakeUp()

    # Send robot to Stand Init
    postureProxy.goToPosture("StandInit", 0.5)

    # Get the robot configuration.
    robotConfig = motionProxy.getRobotConfig()
    robotName = ""
    for i in range(len(robotConfig[0])):
        if (robotConfig[0][i] == "Model Type"):
            robotName = robotConfig[1][i]

    ###############################
    # Arm motion bumping on torso #
    ###############################

    # Disable collision detection on chainName.
    pEnable = False
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to disable collision protection")
    time.sleep(1.0)

    # Make NAO's arm move so that it bumps its torso.
    pTargetName = "Torso"
    moveArm(motionProxy, pTargetName, robotName, pChainName)
    time.sleep(1.0)

    # Go back to pose init.
    postureProxy.goToPosture("StandInit", 1.0)

    # Enable collision detection on chainName.
    pEnable = True
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to enable collision protection")
    time.sleep(1.0)

    # Make NAO's arm move and see that it does not bump on the torso.
    pTargetName = "Torso"
    moveArm(motionProxy, pTargetName, robotName, pChainName)

    ##############################
    # Arm motion bumping on head #
    ##############################

    time.sleep(1.0)
    # Go back to pose init.
    postureProxy.goToPosture("StandInit", 1.0)
    # Disable collision detection on chainName.
    pEnable = False
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to disable collision protection")
    time.sleep(1.0)
    # Make NAO's arm move so that it bumps its head.
    pTargetName = "Head"
    moveArm(motionProxy, pTargetName, robotName, pChainName)

    time.sleep(1.0)
    # Go back to pose init.
    postureProxy.goToPosture("StandInit", 1.0)
    # Enable collision detection on chainName.
    pEnable = True
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to enable collision protection")
    # Make NAO's arm move and see that it does not bump on the head.
    pTargetName = "Head"
    moveArm(motionProxy, pTargetName, robotName, pChainName)

    time.sleep(1.0)
    # Go back to pose init.
    postureProxy.goToPosture("StandInit", 1.0)

    # Go to rest position
    motionProxy.rest()
''' + ARGUMENTS % ('''    parser.add_argument("--chain", type=str, default="LArm",
                        choices=["LArm", "RArm"], help="Chain name")
''', "args.ip, args.chain, args.port")


def run_tracing(broker, example, most_cycles=20000):
    """Run the example, stepping one motion cycle at a time: isCollision("Arms") each cycle."""
    is_collision = lambda: broker.session.call("ALMotion", "isCollision", "Arms")  # noqa: E731
    return run_in_dcm_time(broker, SDK_CONSTANTS + example, is_collision, most_cycles)


def collision_stops(broker):
    return broker.session.call("ALMotion", "stats")["collision_stops"]


def test_collision_detection_bumps_unprotected_and_stops_protected(broker):
    out, levels = run_tracing(broker, COLLISION_DETECTION)
    assert "Failed" not in out, out
    # Unprotected, the arm met the torso, then the head; protected, it was held (twice).
    assert "collision" in levels, set(levels)
    assert collision_stops(broker) > 0
    bumps = [i for i in range(1, len(levels)) if levels[i] == "collision" and levels[i - 1] != "collision"]
    assert len(bumps) == 2, "the torso, then the head, each bumped once (unprotected): %s" % bumps
    assert levels[-1] == "none", "at rest"


REFLEXES_COLLISION_AVOIDANCE = '''# -*- encoding: UTF-8 -*-
# -*- encoding: UTF-8 -*-

\'\'\' Reflexes: LArm Collision Avoidance \'\'\'

import motion
import time
import argparse
from naoqi import ALProxy

def main(robotIP, PORT=9559):
    \'\'\' Example showing the effect of collision detection
        Nao bumps his chest with his left arm with collision detection enabled
        or disabled.
    \'\'\'
    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Get the robot configuration.
    robotConfig = motionProxy.getRobotConfig()
    robotName = ""
    for i in range(len(robotConfig[0])):
        if (robotConfig[0][i] == "Model Type"):
            robotName = robotConfig[1][i]

    ##################
    # Initialization #
    ##################
    pChainName = "LArm"

    # Send robot to Pose Init.
    moveLArm(motionProxy, robotName, "Init")

    # Disable collision detection on LArm chain.
    pEnable = False
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to disable collision protection")
    time.sleep(1.0)
    # Make NAO's arm move so that it bumps its torso.
    moveLArm(motionProxy, robotName, "Final")
    time.sleep(1.0)

    # Go back to pose init.
    moveLArm(motionProxy, robotName, "Init")
    # Enable collision detection on chainName.
    pEnable = True
    success = motionProxy.setCollisionProtectionEnabled(pChainName, pEnable)
    if (not success):
        print("Failed to enable collision protection")

    # Make NAO's arm move and see that it does not bump on the torso.
    moveLArm(motionProxy, robotName, "Final")
    time.sleep(1.0)

    # Go back to pose init.
    moveLArm(motionProxy, robotName, "Init")


def moveLArm(motionProxy, pRobotName, pPose):
    \'\'\' Function to make NAO bump on his Torso with his left arm \'\'\'

    # Define the name of the chain controlled
    pChainName = "LArm"

    # Define the final position.
    if (pPose == "Init"):
        pTargetAngles = [
             80, # LShoulderPitch
             20, # LShoulderRoll
            -80, # LElbowYaw
            -60] # LElbowRoll
    elif (pPose == "Final"):
        pTargetAngles = [
             50, # LShoulderPitch
              6, # LShoulderRoll
              0, # LElbowYaw
           -150] # LElbowRoll
    else:
        print("ERROR: Your pose is unknown")
        print("---------------------")
        exit(1)

    # Set the target angles according to the robot version.
    if (pRobotName == "naoH25") or\\
       (pRobotName == "naoAcademics") or\\
       (pRobotName == "naoT14"):
        pTargetAngles += [0.0, 0.0]
    elif (pRobotName == "naoH21"):
        pass
    elif (pRobotName == "naoT2"):
        pTargetAngles = []
    else:
        print("ERROR: Your robot is unknown")
        print("This test is not available for your Robot")
        print("---------------------")
        exit(1)

    # Convert to radians.
    pTargetAngles = [x * motion.TO_RAD for x in pTargetAngles]

    # Set the fraction of max speed for the arm movement.
    pMaxSpeedFraction = 0.5

    # Set NAO in stiffness On.
    motionProxy.setStiffnesses("LArm", 1.0)

    # Move the arm to the final position.
    motionProxy.angleInterpolationWithSpeed(pChainName, pTargetAngles, pMaxSpeedFraction)
''' + ARGUMENTS % ("", "args.ip, args.port")

IS_COLLISION = '''# -*- encoding: UTF-8 -*-

import argparse
from naoqi import ALProxy

def main(robotIP, PORT=9559):
    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Example showing how to get the collision state
    pChainName = "LArm"
    collisionState = motionProxy.isCollision(pChainName)

    print(pChainName + " collision state is " + collisionState +".")
''' + ARGUMENTS % ("", "args.ip, args.port")

SET_EXTERNAL_COLLISION_PROTECTION = '''# -*- encoding: UTF-8 -*-

import argparse
from naoqi import ALProxy

def main(robotIP, PORT=9559):
    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Example showing how to activate "Move", "LArm" and "RArm" external anti collision
    name = "All"
    enable  = True
    motionProxy.setExternalCollisionProtectionEnabled(name, enable)

    # Example showing how to deactivate "LArm" external anti collision
    name = "LArm"
    enable = False
    motionProxy.setExternalCollisionProtectionEnabled(name, enable)
''' + ARGUMENTS % ("", "args.ip, args.port")

BREATH = '''# -*- encoding: UTF-8 -*-

\'\'\'Motion: Breath\'\'\'

import math
import time
import argparse
from naoqi import ALProxy

def main(robotIP, PORT=9559):
    \'\'\' Use case of breath API
    \'\'\'

    motionProxy  = ALProxy("ALMotion", robotIP, PORT)
    postureProxy = ALProxy("ALRobotPosture", robotIP, PORT)

    # Wake up robot
    motionProxy.wakeUp()

    # Send robot to Stand Init
    postureProxy.goToPosture("StandInit", 0.5)

    # Start breathing
    motionProxy.setBreathEnabled('Body', True)

    # Get default breath config
    print('Current breath config: ' + str(motionProxy.getBreathConfig()))

    # Wait for 10 seconds, and let the robot play the breathing animation
    time.sleep(10)

    # Change breathing configuration to a faster one
    print('Breath faster')
    motionProxy.setBreathConfig([['Bpm', 30], ['Amplitude', 0.0]])

    # Let the robot play the new animation
    time.sleep(10)

    # Stop breathing
    motionProxy.setBreathEnabled('Body', False)

    # Go to rest position
    print('rest')
    motionProxy.rest()
''' + ARGUMENTS % ("", "args.ip, args.port")

SET_BREATH_CONFIG = '''# -*- encoding: UTF-8 -*-

import time
import argparse
from naoqi import ALProxy

def main(robotIP, PORT=9559):
    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Example showing how to set breath config
    # Fast breathing: 20 Bpm and low Amplitude
    motionProxy.setBreathConfig([['Bpm', 20.0], ['Amplitude', 0.0]])
''' + ARGUMENTS % ("", "args.ip, args.port")


def test_reflexes_collision_avoidance_bumps_unprotected_and_stops_protected(broker):
    out, levels = run_tracing(broker, REFLEXES_COLLISION_AVOIDANCE)
    assert "Failed" not in out, out
    bumps = [i for i in range(1, len(levels)) if levels[i] == "collision" and levels[i - 1] != "collision"]
    assert len(bumps) == 1, "the torso bumped once, unprotected: %s" % bumps
    assert collision_stops(broker) > 0, "protected, the arm was held"
    assert levels[-1] == "none"


def test_is_collision_and_external_protection_examples(broker):
    out, _ = run_tracing(broker, IS_COLLISION)
    assert out == "LArm collision state is none.\n"
    run_tracing(broker, SET_EXTERNAL_COLLISION_PROTECTION)
    enabled = [broker.session.call("ALMotion", "getExternalCollisionProtectionEnabled", name)
               for name in ["Move", "LArm", "RArm"]]
    assert enabled == [True, False, True]


def test_the_breath_examples(broker):
    knee = lambda: broker.session.call("ALMotion", "getAngles", "LKneePitch", False)[0]  # noqa: E731
    out, knees = run_in_dcm_time(broker, BREATH, knee, most_cycles=20000)
    assert "Current breath config: [['Bpm', 12.0], ['Amplitude', 0.5]]" in out, out
    # The knees swayed: 2 breaths in 10 s at 12 Bpm, then 5 at 30 Bpm, each bending and
    # straightening once (wakeUp, StandInit and rest bend them a couple of times at most).
    steps = [b - a for a, b in zip(knees, knees[1:]) if abs(b - a) > 1e-5]
    reversals = sum(1 for a, b in zip(steps, steps[1:]) if a * b < 0)
    assert reversals >= 12, reversals
    assert broker.session.call("ALMotion", "getBreathEnabled", "Body") is False
    run_tracing(broker, SET_BREATH_CONFIG)
    assert broker.session.call("ALMotion", "getBreathConfig") == [["Bpm", 20.0], ["Amplitude", 0.0]]
