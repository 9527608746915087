"""The broker's libqi listener with the real ``qi`` package (PyPI ``qi==3.1.5``, libqi 4.0.3)
as the client: connect, services of both wires, ALMemory, the DCM and ALMotion, errors,
ALMemory.subscriber signals, parallel and cancelled calls, disconnects (docs/qi.md)."""

import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest
import qi
import zmq

from conftest import Broker, broker_binary, free_port, wait_for
from naobroker import NaobrokerError, Refused, Session


class QiBroker(Broker):
    """The real naobroker with a qi listener beside its ZeroMQ one, and a CURVE listener on
    loopback for the one client whose stats show every client's entries (stats_readers)."""

    def __init__(self):
        self.qi_url = "tcp://127.0.0.1:%d" % free_port()
        self.curve_url = "tcp://127.0.0.1:%d" % free_port()
        self.server_public, server_secret = zmq.curve_keypair()
        self.reader_public, self.reader_secret = zmq.curve_keypair()
        self.key_dir = tempfile.mkdtemp(prefix="naobroker-py-keys-")
        key_file = os.path.join(self.key_dir, "broker.key")
        with open(key_file, "wb") as f:
            f.write(server_secret)
        reader = self.reader_public.decode()
        curve = '[broker.curve]\nlisten = ["%s"]\nsecret_key_file = "%s"\nclients = ["%s"]\nstats_readers = ["%s"]\n'
        self.reader = None
        Broker.__init__(
            self, '\n[qi]\nlisten = ["%s"]\n%s' % (self.qi_url, curve % (self.curve_url, key_file, reader, reader))
        )

    def stop(self):
        if self.reader is not None:
            self.reader.close()
        Broker.stop(self)

    def qi_session(self):
        session = qi.Session()
        session.connect(self.qi_url)
        return session

    def qi_clients(self):
        """The broker's qi clients, from its counters: [(name, subscriptions)]."""
        if self.reader is None:
            keys = {"server_key": self.server_public, "public_key": self.reader_public, "secret_key": self.reader_secret}
            self.reader = Session(self.curve_url, "stats reader", **keys)
        clients = self.reader.call("ServiceDirectory", "stats")["clients"]
        return [(c["name"], c["subscriptions"]) for c in clients if c["name"].startswith("qi ")]


@pytest.fixture
def broker():
    b = QiBroker()
    yield b
    b.stop()


@pytest.fixture
def session(broker):
    s = broker.qi_session()
    yield s
    s.close()


class Adder:
    """A module served over naobroker's own wire."""

    def add(self, a, b=1):
        return a + b

    def fail(self, message):
        raise ValueError(message)


def test_services_list_native_and_messagepack_modules(broker, session):
    directory = session.service("ServiceDirectory")
    added, removed = [], []
    directory.serviceAdded.connect(lambda sid, name: added.append(name))
    directory.serviceRemoved.connect(lambda sid, name: removed.append(name))
    names = [info["name"] for info in session.services()]
    assert names[0] == "ServiceDirectory"
    assert {"ALMemory", "DCM", "ALMotion", "ALSensors"} <= set(names)
    memory = session.services()[names.index("ALMemory")]
    assert memory["machineId"] == directory.machineId()
    assert broker.qi_url in memory["endpoints"]

    serving = broker.connect("adder")
    serving.register_module("PyAdder", Adder())
    wait_for(lambda: "PyAdder" in added, "serviceAdded(PyAdder)")
    assert "PyAdder" in [info["name"] for info in session.services()]
    adder = session.service("PyAdder")
    assert adder.add(2, 3) == 5
    assert adder.add(4) == 5
    serving.close()
    wait_for(lambda: "PyAdder" in removed, "serviceRemoved(PyAdder)")
    with pytest.raises(RuntimeError, match="Cannot find service 'PyAdder'"):
        session.service("PyAdder")


def test_memory_values_cross_both_wires(broker, session):
    memory = session.service("ALMemory")
    values = [1.5, 7, -3, 2**40, "text", True, None, [1, 2.5, "x"], [[1, [2, [3]]], []], {"a": 1, "b": [1.0]}]
    for value in values:
        memory.insertData("QiTest/Value", value)
        assert memory.getData("QiTest/Value") == value
        assert broker.session.call("ALMemory", "getData", "QiTest/Value") == value
    broker.session.call("ALMemory", "insertData", "QiTest/FromZmq", [1, "two", 3.25])
    assert memory.getData("QiTest/FromZmq") == [1, "two", 3.25]
    assert "QiTest/FromZmq" in memory.getDataList("QiTest/")
    methods = {m["name"]: m for m in memory.metaObject()["methods"].values()}
    assert methods["getData"]["parametersSignature"] == "(s)"
    assert methods["insertData"]["parametersSignature"] == "(sm)"
    assert methods["subscriber"]["returnSignature"] == "o"


def test_a_large_listing_reaches_a_qi_client_encoded_aside(broker, session):
    # Large replies are encoded away from the broker's thread, in qi's encoding for a qi caller.
    keys = ["QiListed/%05d" % i for i in range(6000)]
    broker.session.call("ALMemory", "insertListData", [[key, i] for i, key in enumerate(keys)])
    aside = broker.session.call("ServiceDirectory", "stats")["replies_encoded_aside"]
    assert session.service("ALMemory").getDataList("QiListed/") == keys
    assert broker.session.call("ServiceDirectory", "stats")["replies_encoded_aside"] == aside + 1


def test_dcm_and_motion_calls(broker, session):
    dcm, motion = session.service("DCM"), session.service("ALMotion")
    before = dcm.getTime(0)
    after = broker.step(1)
    assert after == before + 10
    assert dcm.getTime(0) == after
    assert motion.getBodyNames("Head") == ["HeadYaw", "HeadPitch"]
    motion.setStiffnesses("Head", 1.0)
    assert motion.getStiffnesses("Head") == [1.0, 1.0]


def test_errors_carry_the_broker_s_message(broker, session):
    memory = session.service("ALMemory")
    with pytest.raises(NaobrokerError) as over_zmq:
        broker.session.call("ALMemory", "getData", "QiTest/Missing")
    with pytest.raises(RuntimeError) as over_qi:
        memory.getData("QiTest/Missing")
    assert str(over_qi.value) == str(over_zmq.value)
    assert "QiTest/Missing" in str(over_qi.value)
    serving = broker.connect("adder")
    serving.register_module("PyFails", Adder())
    with pytest.raises(RuntimeError, match="boom"):
        session.service("PyFails").fail("boom")
    serving.close()


def test_subscriber_signal_delivers_events_of_both_wires(broker, session):
    memory = session.service("ALMemory")
    subscriber = memory.subscriber("QiTestEvent")
    got = []
    link = subscriber.signal.connect(got.append)
    subscriptions = lambda: [count for _, count in broker.qi_clients()]  # noqa: E731
    wait_for(lambda: subscriptions() == [1], "the qi client's subscription")
    broker.session.call("ALMemory", "raiseEvent", "QiTestEvent", [1, "two", 3.5])
    wait_for(lambda: got == [[1, "two", 3.5]], "the event raised over ZeroMQ")
    memory.raiseEvent("QiTestEvent", {"from": "qi"})
    wait_for(lambda: got[1:] == [{"from": "qi"}], "the event raised over qi")
    subscriber.signal.disconnect(link)
    wait_for(lambda: subscriptions() == [0], "the subscription ended with its last link")
    subscriber.signal.connect(got.append)
    wait_for(lambda: subscriptions() == [1], "subscribed again")
    del subscriber
    gc.collect()
    wait_for(lambda: subscriptions() == [0], "the subscription ended with its object")


def test_parallel_and_cancelled_calls(broker, session):
    memory = session.service("ALMemory")
    for i in range(50):
        memory.insertData("QiTest/Parallel/%d" % i, i)
    futures = [memory.getData("QiTest/Parallel/%d" % i, _async=True) for i in range(50)]
    assert [f.value(20000) for f in futures] == list(range(50))
    # A call that waits does not hold up the others of the same client.
    memory.insertData("QiTest/Waited", 0)
    waiting = memory.getDataOnChange("QiTest/Waited", 0, _async=True)
    wait_for(lambda: memory.getData("QiTest/Waited") == 0 and not waiting.isFinished(), "the waiting call")
    memory.insertData("QiTest/Waited", 5)
    assert waiting.value(20000) == 5
    cancelled = memory.getDataOnChange("QiTest/Waited", 0, _async=True)
    cancelled.cancel()
    cancelled.wait(20000)
    assert cancelled.isCanceled()
    assert memory.getData("QiTest/Waited") == 5


def test_a_disconnected_client_is_forgotten_and_others_go_on(broker, session):
    script = textwrap.dedent(
        """
        import os, sys, qi
        s = qi.Session()
        s.connect(sys.argv[1])
        memory = s.service("ALMemory")
        subscriber = memory.subscriber("QiTestEvent")
        subscriber.signal.connect(lambda value: None)
        print("ready", flush=True)
        sys.stdin.readline()
        os._exit(0)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script, broker.qi_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # qi logs its own warnings on stdout first.
    wait_for(lambda: child.stdout.readline().strip() == b"ready", "the child client ready")
    wait_for(lambda: sorted(count for _, count in broker.qi_clients()) == [0, 1], "the child's subscription")
    child.stdin.close()
    child.wait(20)
    wait_for(lambda: len(broker.qi_clients()) == 1, "the killed client forgotten")
    assert session.service("ALMemory").getData("DCM/Time") >= 0
    session.close()
    wait_for(lambda: broker.qi_clients() == [], "the closed session forgotten")


class Hosted:
    """A service a qi client hosts."""

    def __init__(self):
        self.events = []

    def add(self, a, b):
        return a + b

    def fail(self, message):
        raise RuntimeError(message)

    def onEvent(self, name, value, message):
        self.events.append((name, value, message))


def test_services_hosted_by_qi_clients_serve_both_wires(broker, session):
    host = broker.qi_session()
    hosted = Hosted()
    service_id = host.registerService("QiHosted", hosted)
    assert session.service("QiHosted").add(2, 3) == 5
    assert broker.session.call("QiHosted", "add", 4, 5) == 9
    with pytest.raises(NaobrokerError, match="nope"):
        broker.session.call("QiHosted", "fail", "nope")
    # What the wire cannot send to the hosted object keeps its kind: a task is refused.
    with pytest.raises(Refused, match="QiHosted.add: a service of a qi client runs no task"):
        broker.session.post("QiHosted", "add", 1, 2)
    with pytest.raises(RuntimeError, match="already registered"):
        host.registerService("ALMemory", Hosted())
    # ALMemory's NAOqi callbacks reach it; only its own client may subscribe them.
    with pytest.raises(RuntimeError, match="belongs to another client"):
        session.service("ALMemory").subscribeToEvent("QiHostedEvent", "QiHosted", "onEvent")
    host.service("ALMemory").subscribeToEvent("QiHostedEvent", "QiHosted", "onEvent")
    broker.session.call("ALMemory", "raiseEvent", "QiHostedEvent", 42)
    wait_for(lambda: hosted.events == [("QiHostedEvent", 42, "")], "the callback")
    modules = lambda: broker.session.call("ServiceDirectory", "modules")  # noqa: E731
    host.unregisterService(service_id)
    wait_for(lambda: "QiHosted" not in modules(), "the service unregistered")
    host.registerService("QiHosted", Hosted())
    assert "QiHosted" in modules()
    host.close()
    wait_for(lambda: "QiHosted" not in modules(), "the service gone with its client")


def test_a_qi_listener_beyond_loopback_is_refused(broker):
    # The fixture's configuration without its CURVE listener, whose port the fixture holds.
    config = os.path.join(broker.key_dir, "no-curve.toml")
    with open(broker.config) as full, open(config, "w") as without_curve:
        in_curve = False
        for line in full:
            if line.startswith("[") and "=" not in line:  # a table's header
                in_curve = line.strip() == "[broker.curve]"
            if not in_curve:
                without_curve.write(line)
    refused = subprocess.run(
        [broker_binary(), "--config", config, "--listen", "tcp://127.0.0.1:%d" % free_port(),
         "--qi-listen", "tcp://0.0.0.0:%d" % free_port()],
        capture_output=True, text=True, timeout=60,
    )
    assert refused.returncode != 0
    assert "SSH tunnel" in refused.stderr


def test_calls_from_threads(broker, session):
    memory = session.service("ALMemory")
    errors = []

    def worker(n):
        try:
            for i in range(20):
                key = "QiTest/Thread/%d" % n
                memory.insertData(key, i)
                assert memory.getData(key) == i
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
