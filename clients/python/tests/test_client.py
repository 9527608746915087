"""The client's NAOqi habits: ALProxy, post, errors, modules and events."""

import threading
import time

import pytest

from naobroker import BadArgument, NaobrokerError, NotFound, Refused, Session
from naoqi import ALModule, ALProxy


def test_errors_carry_the_brokers_message(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    memory = ALProxy("ALMemory", "127.0.0.1", 9559)
    with pytest.raises(NaobrokerError, match="ALMemory.getData: no key named Nope"):
        memory.getData("Nope")
    with pytest.raises(RuntimeError, match="no module named Nobody"):
        broker.session.call("Nobody", "ping")


def test_errors_keep_their_kind_across_the_wire(broker):
    """Each kind is its class, all of them NaobrokerError; a module served from Python
    reports a kind by raising its class, and its caller gets that class back."""
    session = broker.session
    with pytest.raises(NotFound, match="no key named Nope"):
        session.call("ALMemory", "getData", "Nope")
    with pytest.raises(BadArgument, match="argument 1 must be"):
        session.call("ALMemory", "getData", 7)
    with pytest.raises(Refused, match="is owned by DCM"):
        session.call("ALMemory", "insertData", "Device/SubDeviceList/HeadYaw/Position/Sensor/Value", 1.0)

    class Picky:
        def check(self, value):
            if value < 0:
                raise BadArgument("value: expected 0 or more, got %d" % value)
            if value == 0:
                raise ValueError("zero")
            return value

    serving = broker.connect("picky")
    serving.register_module("Picky", Picky())
    with pytest.raises(BadArgument, match="Picky.check: value: expected 0 or more, got -1"):
        session.call("Picky", "check", -1)
    with pytest.raises(NaobrokerError, match="Picky.check: zero") as failed:
        session.call("Picky", "check", 0)
    assert type(failed.value) is NaobrokerError, "any other exception is a failure"
    with pytest.raises(NotFound, match="Picky.nope: no method named nope"):
        session.call("Picky", "nope")
    with pytest.raises(BadArgument, match="Picky.wait: argument 1 must be"):
        session.call("Picky", "wait", "x", 0)
    serving.close()


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


def test_callback_subscriptions_are_messages_of_their_own(broker):
    """Session.subscribe_callback sends SubscribeCallback, which subscribes as ALMemory's
    methods do; a NAOqi script's plain ALMemory.subscribeToMicroEvent call still works too."""
    seen = []
    arrived = threading.Event()

    class Counter:
        def onTick(self, name, value, message):
            seen.append((name, value, message))
            arrived.set()

    serving = broker.connect("counter")
    serving.register_module("PyCounter", Counter())
    with pytest.raises(Refused, match="belongs to another client"):
        broker.session.subscribe_callback("Py/Tick", "PyCounter", "onTick", micro_message="mine")
    assert serving.subscribe_callback("Py/Tick", "PyCounter", "onTick", micro_message="mine") is True
    assert broker.session.call("ALMemory", "getType", "Py/Tick") == "MicroEvent"
    broker.session.call("ALMemory", "raiseMicroEvent", "Py/Tick", 7)
    assert arrived.wait(5)
    assert seen == [("Py/Tick", 7, "mine")]
    assert serving.unsubscribe_callback("Py/Tick", "PyCounter") is True
    assert broker.session.call("ALMemory", "getSubscribers", "Py/Tick") == []
    with pytest.raises(NotFound, match="PyCounter is not subscribed to Py/Tick"):
        serving.unsubscribe_callback("Py/Tick", "PyCounter")
    # The method call of NAOqi scripts is the same subscription.
    serving.call("ALMemory", "subscribeToMicroEvent", "Py/Tick", "PyCounter", "theirs", "onTick")
    assert broker.session.call("ALMemory", "getSubscribers", "Py/Tick") == ["PyCounter"]
    serving.close()


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


def test_an_error_frame_with_a_kind_that_is_no_integer_is_a_failure():
    from naobroker.errors import error_of

    for kind in ([1], "1", None, 1.0):
        error = error_of([5, 7, "odd kind", kind])
        assert type(error) is NaobrokerError and str(error) == "odd kind", kind
    assert type(error_of([5, 7, "bad", 1])) is BadArgument
