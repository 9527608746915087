"""The client's NAOqi habits: ALProxy, post, errors, modules and events."""

import threading
import time

import pytest

from naobroker import NaobrokerError, Session
from naoqi import ALModule, ALProxy


def test_errors_carry_the_brokers_message(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    memory = ALProxy("ALMemory", "127.0.0.1", 9559)
    with pytest.raises(NaobrokerError, match="ALMemory.getData: no key named Nope"):
        memory.getData("Nope")
    with pytest.raises(RuntimeError, match="no module named Nobody"):
        broker.session.call("Nobody", "ping")


def test_post_returns_a_task_id_and_wait_ends_it(broker):
    memory = broker.session
    memory.call("ALMemory", "insertData", "Counter", 1)
    task = memory.post("ALMemory", "getDataOnChange", "Counter", 5000)
    assert isinstance(task, int) and task > 0
    assert memory.call("ALMemory", "isRunning", task) is True
    memory.call("ALMemory", "insertData", "Counter", 2)
    assert memory.call("ALMemory", "wait", task, 2000) is True


def test_a_python_module_is_called_back_on_events(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    seen = []
    arrived = threading.Event()

    class Listener(ALModule):
        def onEvent(self, name, value, message):
            """Records what the broker sends."""
            seen.append((name, value, message))
            arrived.set()

        def add(self, a, b):
            return a + b

    Listener("PyListener")
    memory = ALProxy("ALMemory", "127.0.0.1", 9559)
    memory.subscribeToEvent("Py/Event", "PyListener", "onEvent")
    assert broker.session.call("PyListener", "add", 2, 3) == 5
    with pytest.raises(NaobrokerError, match="PyListener.nope: no method named nope"):
        broker.session.call("PyListener", "nope")
    other = Session(broker.url, "raiser")
    other.call("ALMemory", "raiseEvent", "Py/Event", {"x": 1.5})
    assert arrived.wait(5)
    assert seen == [("Py/Event", {"x": 1.5}, "")]
    assert memory.getSubscribers("Py/Event") == ["PyListener"]


def test_sdk_style_subscription(broker):
    got = []
    done = threading.Event()
    listener = Session(broker.url, "listener")
    listener.subscribe("DCM/PostProcess", lambda name, value: (got.append(value), len(got) == 3 and done.set()))
    time.sleep(0.1)
    broker.step(3)
    assert done.wait(5)
    assert got == [[1, 10], [2, 20], [3, 30]]
    listener.close()
