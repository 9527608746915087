"""Every Python example of seed 002 (the DCM API page), run as a script against the
real broker under the manual clock, then the LED values it produced.

The examples are the seed's text with `print x` turned into `print(x)`; the
backslashes before `[` in the seed are its page's escapes, not Python, and are gone.
NAOBROKER_URL points their ALProxy("DCM", "127.0.0.1", 9559) at the test broker.
"""

import os
import subprocess
import sys

import pytest

CREATE_ALIAS = '''# -*- encoding: UTF-8 -*-

import naoqi
from naoqi import ALProxy

dcm = ALProxy("DCM","127.0.0.1",9559)
dcm.createAlias([
"ChestLeds",
[
"ChestBoard/Led/Red/Actuator/Value",
"ChestBoard/Led/Green/Actuator/Value",
"ChestBoard/Led/Blue/Actuator/Value"
]
])
'''

CREATE_ALIAS_THEN_SET = CREATE_ALIAS + '''
dcm.set([
"ChestLeds",
"ClearAll",
[
[1.0, dcm.getTime(1000)],
[0.0, dcm.getTime(2000)],
[1.0, dcm.getTime(3000)],
[0.0, dcm.getTime(4000)]
]
])
'''

GET_PREFIX = '''# -*- encoding: UTF-8 -*-

import naoqi
from naoqi import ALProxy

dcm = ALProxy("DCM","127.0.0.1",9559)
print(dcm.getPrefix(0))
'''

GET_TIME_IN_10S = '''# -*- encoding: UTF-8 -*-

import naoqi
from naoqi import ALProxy

dcm = ALProxy("DCM","127.0.0.1",9559)
print(dcm.getTime(10000))
'''

GET_TIME_NOW = GET_TIME_IN_10S.replace("10000", "0")

SET_ONE = ''' # -*- encoding: UTF-8 -*-

import naoqi
from naoqi import ALProxy

dcm = ALProxy("DCM","127.0.0.1",9559)
dcm.set(["ChestBoard/Led/Red/Actuator/Value", "Merge", [[1.0,dcm.getTime(10000)]] ])
'''

SET_FOUR = ''' # -*- encoding: UTF-8 -*-

import naoqi
from naoqi import ALProxy

dcm = ALProxy("DCM","127.0.0.1",9559)
dcm.set([
"ChestBoard/Led/Red/Actuator/Value",
"ClearAll",
[
[1.0, dcm.getTime(2000) ],
[0.0, dcm.getTime(4000) ],
[1.0, dcm.getTime(6000) ],
[0.0, dcm.getTime(8000) ]
]
])
'''

TIME_MIXED = CREATE_ALIAS.rstrip("\n") + '''
dcm.setAlias([
"ChestLeds",
"ClearAll",
"time-mixed",
[
[
[1.0, dcm.getTime(4000)],
[0.0, dcm.getTime(6000)]
],
[
[0.25, dcm.getTime(3000)]
],
[
[0.125,dcm.getTime(2000)]
]
]
])
'''

TIME_SEPARATE = CREATE_ALIAS.rstrip("\n") + '''
t = dcm.getTime(0)
dcm.setAlias([
"ChestLeds",
"ClearAll",
"time-separate",
0,
[t,t+2000, t+3000, t+4000, t+5000,t+6000],
[
[1.0,0.0,1.0,0.0,1.0,0.0],
[1.0,0.5,1.0,0.25,0.125,0.0],
[0.0625,0.125,0.25,0.50,0.75,1.0]
]
])
'''


def run(broker, script):
    env = dict(os.environ, NAOBROKER_URL=broker.url)
    done = subprocess.run([sys.executable, "-c", script.lstrip()], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def near(value, expected):
    """Within the LED's precision (1/255)."""
    return abs(value - expected) <= 0.5 / 255 + 1e-9


def at(broker, time_ms, expected):
    now = broker.session.call("DCM", "getTime", 0)
    assert time_ms >= now
    if time_ms > now:
        broker.step((time_ms - now) // 10)
    for colour, value in expected.items():
        assert near(broker.led(colour), value), (time_ms, colour, broker.led(colour), value)


def test_create_alias(broker):
    assert run(broker, CREATE_ALIAS) == ""
    validated = broker.session.call("DCM", "createAlias", ["ChestLeds", ["ChestBoard/Led/Red/Actuator/Value", "Nope"]])
    assert validated == ["ChestLeds", ["ChestBoard/Led/Red/Actuator/Value", ""]]


def test_chest_leds_blink_twice_through_the_alias(broker):
    run(broker, CREATE_ALIAS_THEN_SET)
    all_three = lambda v: {"Red": v, "Green": v, "Blue": v}
    at(broker, 1000, all_three(1.0))
    at(broker, 1500, all_three(0.5))
    at(broker, 2000, all_three(0.0))
    at(broker, 3000, all_three(1.0))
    at(broker, 4000, all_three(0.0))
    at(broker, 5000, all_three(0.0))


def test_get_prefix(broker):
    assert run(broker, GET_PREFIX) == "['Device/SubDeviceList/', 'Device/DeviceList/']\n"


def test_get_time(broker):
    broker.step(7)
    assert run(broker, GET_TIME_IN_10S) == "10070\n"
    assert run(broker, GET_TIME_NOW) == "70\n"


def test_red_led_reaches_one_in_ten_seconds(broker):
    run(broker, SET_ONE)
    at(broker, 5000, {"Red": 0.5})
    at(broker, 10000, {"Red": 1.0})
    at(broker, 12000, {"Red": 1.0})


def test_red_led_rises_and_falls_twice_in_eight_seconds(broker):
    run(broker, SET_FOUR)
    at(broker, 1000, {"Red": 0.5})
    at(broker, 2000, {"Red": 1.0})
    at(broker, 3000, {"Red": 0.5})
    at(broker, 4000, {"Red": 0.0})
    at(broker, 6000, {"Red": 1.0})
    at(broker, 8000, {"Red": 0.0})


def test_set_alias_time_mixed(broker):
    run(broker, TIME_MIXED)
    at(broker, 2000, {"Red": 0.5, "Green": 0.25 * 2 / 3, "Blue": 0.125})
    at(broker, 3000, {"Red": 0.75, "Green": 0.25, "Blue": 0.125})
    at(broker, 4000, {"Red": 1.0})
    at(broker, 5000, {"Red": 0.5})
    at(broker, 6000, {"Red": 0.0, "Green": 0.25, "Blue": 0.125})


def test_set_alias_time_separate(broker):
    run(broker, TIME_SEPARATE)
    at(broker, 0, {"Red": 0.0, "Green": 0.0, "Blue": 0.0})
    broker.step(1)
    at(broker, 2000, {"Red": 0.0, "Green": 0.5, "Blue": 0.125})
    at(broker, 3000, {"Red": 1.0, "Green": 1.0, "Blue": 0.25})
    at(broker, 5000, {"Red": 1.0, "Green": 0.125, "Blue": 0.75})
    at(broker, 6000, {"Red": 0.0, "Green": 0.0, "Blue": 1.0})
