"""Issue 11 for the Python client: long methods and callbacks keep their module, the
caller's own time limits, restoring after a broker restart, lost events, CURVE."""

import os
import subprocess
import sys
import threading
import time

import msgpack
import pytest
import zmq

from conftest import Broker, free_port, wait_for
from naobroker import CallTimeout, ConnectionLost, NaobrokerError, Session
from naoqi import ALModule, ALProxy

LONG_S = 7  # well past the broker's 2 s silence limit, short enough for the suite


class Worker:
    """A module whose work takes as long as asked, keeping the CPU busy (the GIL too)."""

    def work(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sum(range(1000))
        return "worked %g s" % seconds

    def add(self, a, b):
        return a + b


SPIN_S = 20  # issue 25: a method spinning in pure Python for 20 s


def test_a_method_spinning_in_pure_python_for_20_s_keeps_its_module_and_answers(broker):
    server = broker.connect("server")
    server.register_module("PyWorker", Worker())
    caller = broker.connect("caller")
    answers = []
    call = threading.Thread(target=lambda: answers.append(caller.call("PyWorker", "work", SPIN_S)))
    call.start()
    for _ in range(4):
        time.sleep(SPIN_S / 5)
        assert "PyWorker" in broker.session.call("ServiceDirectory", "modules")
        assert broker.session.call("PyWorker", "add", 2, 3) == 5  # other calls go on meanwhile
    call.join(SPIN_S * 4)
    assert answers == ["worked %g s" % SPIN_S]  # no time limit set: the call waited
    assert caller.call("PyWorker", "add", 1, 1) == 2
    with open(os.path.join(broker.dir, "broker.log")) as log:
        assert "silent past the client timeout" not in log.read()


def test_a_naoqi_callback_running_7_s_keeps_its_module_subscribed(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    started, ended, second = threading.Event(), threading.Event(), threading.Event()

    class Patient(ALModule, Worker):
        def onEvent(self, name, value, message):
            if value == 1:
                started.set()
                self.work(LONG_S)
                ended.set()
            else:
                second.set()

    Patient("PyPatient")
    memory = ALProxy("ALMemory", "127.0.0.1", 9559)
    memory.subscribeToEvent("Py/Slow", "PyPatient", "onEvent")
    broker.session.call("ALMemory", "raiseEvent", "Py/Slow", 1)
    assert started.wait(10)
    time.sleep(LONG_S / 2)
    assert broker.session.call("PyPatient", "add", 2, 3) == 5
    assert ended.wait(LONG_S * 4)
    assert memory.getSubscribers("Py/Slow") == ["PyPatient"]
    broker.session.call("ALMemory", "raiseEvent", "Py/Slow", 2)
    assert second.wait(10)


class Hog:
    """A module whose work is single C calls that hold the GIL for about 3 s each: no thread
    of its process runs meanwhile, the liveness thread's heartbeats neither."""

    def hog(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sum(range(200_000_000))
        return "hogged"


def test_a_method_holding_the_gil_past_the_silence_limit_keeps_its_session(broker, caplog):
    """Issue 25: the session's liveness connection, open all along, keeps it alive though
    nothing in the process can heartbeat (before, the broker dropped it after 2 s)."""
    server = broker.connect("server")
    server.register_module("PyHog", Hog())
    caller = broker.connect("caller")
    assert caller.call("PyHog", "hog", 5, timeout=30) == "hogged"
    assert "PyHog" in caller.call("ServiceDirectory", "modules")
    forgotten = [record.getMessage() for record in caplog.records if "forgot this client" in record.getMessage()]
    assert forgotten == []
    with open(os.path.join(broker.dir, "broker.log")) as log:
        assert "silent past the client timeout" not in log.read()


def test_the_main_socket_silent_for_4_s_does_not_lose_the_module(broker):
    """The liveness connection alone keeps the session alive: here the main socket is held
    by a thread that neither reads nor heartbeats it (as a stuck reader would)."""
    server = broker.connect("server")
    server.register_module("PyQuiet", Worker())
    with server._state:
        server._take_socket("the test", None)
    try:
        time.sleep(4)
        assert "PyQuiet" in broker.session.call("ServiceDirectory", "modules")
    finally:
        server._release_socket()
    assert broker.session.call("PyQuiet", "add", 1, 2) == 3


def test_a_module_that_left_leaves_no_counters_behind(broker):
    """ServiceDirectory.stats counts calls per module: a client that registers modules under
    ever new names, calls each and unregisters it, must not grow the broker's counters."""

    class Echo:
        def ping(self):
            return 1

    serving = broker.connect("churn")
    for number in range(50):
        name = "PyChurn%d" % number
        serving.register_module(name, Echo())
        assert broker.session.call(name, "ping") == 1
        serving.unregister_module(name)
    serving.close()
    assert broker.session.call("ALMemory", "ping") is True
    counted = broker.session.call("ServiceDirectory", "stats")["by_module"]
    assert "ALMemory" in counted and not [name for name in counted if name.startswith("PyChurn")], counted


def test_a_callers_time_limit_fails_the_call_with_its_name(broker):
    server = broker.connect("server")
    server.register_module("PySlow", Worker())
    caller = broker.connect("caller")
    with pytest.raises(CallTimeout, match=r"^PySlow.work timed out after 500 ms$"):
        caller.call("PySlow", "work", 3, timeout=0.5)
    assert caller.call("PySlow", "work", 0) == "worked 0 s"  # the late reply is not taken for this one
    limited = broker.connect("limited", timeout=0.5)
    with pytest.raises(CallTimeout, match="PySlow.work timed out after 500 ms"):
        limited.call("PySlow", "work", 3)
    assert limited.call("PySlow", "work", 1.5, timeout=None) == "worked 1.5 s"
    proxy = ALProxy("PySlow", "127.0.0.1", int(broker.url.rsplit(":", 1)[1]), timeout=0.5)
    with pytest.raises(CallTimeout, match="PySlow.work timed out after 500 ms"):
        proxy.work(3)
    with pytest.raises(CallTimeout, match="PySlow.work timed out after 200 ms"):
        proxy.work(3, _timeout=0.2)
    assert proxy.work(1, _timeout=None) == "worked 1 s"


def test_everything_comes_back_after_a_broker_restart(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    streamed, called = [], []
    release = threading.Event()

    class Restored(ALModule, Worker):
        def onEvent(self, name, value, message):
            called.append((name, value))

        def block(self):
            release.wait(60)

    Restored("PyRestored")
    memory = ALProxy("ALMemory", "127.0.0.1", 9559)
    # Py/Dropped first: were it wrongly repeated, it would be back before Py/Naoqi.
    memory.subscribeToEvent("Py/Dropped", "PyRestored", "onEvent")
    memory.subscribeToEvent("Py/Naoqi", "PyRestored", "onEvent")
    memory.unsubscribeToEvent("Py/Dropped", "PyRestored")
    listener = broker.connect("listener")
    listener.subscribe("Py/Stream", lambda name, value: streamed.append(value))
    failures = []

    def call_under_way():
        try:
            listener.call("PyRestored", "block")
        except NaobrokerError as error:
            failures.append(error)

    blocked = threading.Thread(target=call_under_way)
    blocked.start()
    try:
        time.sleep(0.5)
        broker.restart()
        blocked.join(15)
        assert len(failures) == 1 and isinstance(failures[0], ConnectionLost), failures
        assert "PyRestored.block: connection to the broker at %s lost" % broker.url == str(failures[0])
    finally:
        release.set()
    raiser = broker.session

    def naoqi_restored():
        try:
            return raiser.call("ALMemory", "getSubscribers", "Py/Naoqi") == ["PyRestored"]
        except NaobrokerError:  # no event named Py/Naoqi: not yet
            return False

    wait_for(naoqi_restored, "NAOqi callback restored")
    assert raiser.call("PyRestored", "add", 1, 2) == 3
    assert memory.getData("DCM/Time") is not None  # the script's own proxy works again
    with pytest.raises(NaobrokerError, match="no event named Py/Dropped"):
        raiser.call("ALMemory", "getSubscribers", "Py/Dropped")

    def stream_restored():
        raiser.call("ALMemory", "raiseEvent", "Py/Stream", "after")
        return "after" in streamed

    wait_for(stream_restored, "event stream restored")
    raiser.call("ALMemory", "raiseEvent", "Py/Naoqi", 7)
    wait_for(lambda: ("Py/Naoqi", 7) in called, "NAOqi callback called")


def test_a_client_the_broker_forgot_restores_itself(broker, monkeypatch, caplog):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    called = []

    class Forgotten(ALModule, Worker):
        def onEvent(self, name, value, message):
            called.append(value)

    Forgotten("PyForgotten")
    ALProxy("ALMemory", "127.0.0.1", 9559).subscribeToEvent("Py/Forgotten", "PyForgotten", "onEvent")
    session = Session.shared(broker.url)
    # A connection saying Hello with this session's tag is taken for its new main
    # connection: the broker forgets the old one (modules, callbacks), keeping its TCP link.
    impostor = zmq.Context.instance().socket(zmq.DEALER)
    impostor.setsockopt(zmq.LINGER, 0)
    impostor.connect(broker.url)
    try:
        impostor.send(msgpack.packb([0, 1, "impostor", session._session_id, 0], use_bin_type=True))
        assert impostor.poll(5000) and msgpack.unpackb(impostor.recv())[0] == 1  # Welcome
        wait_for(lambda: any("forgot this client" in r.getMessage() for r in caplog.records), "the client noticed")

        def restored():
            modules = broker.session.call("ServiceDirectory", "modules")
            return "PyForgotten" in modules and broker.session.call(
                "ALMemory", "getSubscribers", "Py/Forgotten") == ["PyForgotten"]

        wait_for(restored, "module and callback restored")
        broker.session.call("ALMemory", "raiseEvent", "Py/Forgotten", 5)
        wait_for(lambda: called == [5], "the callback after the restore")
    finally:
        impostor.close()


def lossy_broker():
    return Broker("[broker.limits]\nevent_window = 8\n")


def burst_then_drain(raiser, event, gate, received):
    """Raise 20 events while the subscriber is held, then let it go and raise markers until
    one arrives, then one last: every event raised is then received or counted lost."""
    raised = 0
    for value in range(20):
        raiser.call("ALMemory", "raiseEvent", event, value)
        raised += 1
    gate.set()

    def marker_arrived():
        nonlocal raised
        raiser.call("ALMemory", "raiseEvent", event, 1000 + raised)
        raised += 1
        return any(value >= 1000 for value in received)

    wait_for(marker_arrived, "an event after the burst")
    raiser.call("ALMemory", "raiseEvent", event, -1)
    raised += 1
    wait_for(lambda: -1 in received, "the last event")
    return raised


def test_a_stream_that_stopped_reading_learns_how_many_events_it_lost():
    broker = lossy_broker()
    try:
        gate = threading.Event()
        received, lost = [], []

        def slow(name, value):
            gate.wait(30)
            received.append(value)

        listener = broker.connect("listener")
        listener.subscribe("Py/Burst", slow, on_lost=lambda name, count: lost.append((name, count)))
        raised = burst_then_drain(broker.connect("raiser"), "Py/Burst", gate, received)
        assert lost and all(name == "Py/Burst" for name, _ in lost)
        assert sum(count for _, count in lost) >= 12  # 20 raised, at most 8 under way
        assert len(received) + sum(count for _, count in lost) == raised
        assert received[:8] == list(range(8))
    finally:
        broker.stop()


def test_a_naoqi_module_that_fell_behind_hears_events_lost(monkeypatch):
    broker = lossy_broker()
    try:
        monkeypatch.setenv("NAOBROKER_URL", broker.url)
        gate = threading.Event()
        received, lost = [], []

        class Behind(ALModule):
            def onEvent(self, name, value, message):
                gate.wait(30)
                received.append(value)

            def eventsLost(self, name, count):
                lost.append((name, count))

        Behind("PyBehind")
        ALProxy("ALMemory", "127.0.0.1", 9559).subscribeToEvent("Py/Burst", "PyBehind", "onEvent")
        raised = burst_then_drain(broker.connect("raiser"), "Py/Burst", gate, received)
        assert lost and sum(count for _, count in lost) >= 12
        assert len(received) + sum(count for _, count in lost) == raised
    finally:
        broker.stop()


def test_curve_admits_listed_keys_only(tmp_path):
    server_public, server_secret = zmq.curve_keypair()
    client_public, client_secret = zmq.curve_keypair()
    _, stranger_secret = zmq.curve_keypair()
    key_file = tmp_path / "broker.key"
    key_file.write_bytes(server_secret)
    curve_url = "tcp://127.0.0.1:%d" % free_port()
    broker = Broker(
        '[broker.curve]\nlisten = ["%s"]\nsecret_key_file = "%s"\nclients = ["%s"]\n'
        % (curve_url, key_file, client_public.decode())
    )
    try:
        keys = {"server_key": server_public.decode(), "secret_key": client_secret.decode()}
        session = Session(curve_url, "curve", **keys)
        session.register_module("PyCurve", Worker())
        assert broker.session.call("PyCurve", "add", 2, 2) == 4
        assert session.call("ALMemory", "getData", "DCM/Time") is not None
        with pytest.raises(NaobrokerError, match="refused the connection: the broker refused this client's key"):
            Session(curve_url, "stranger", server_key=server_public.decode(), secret_key=stranger_secret.decode())
        with pytest.raises(NaobrokerError, match="refused the connection: security mechanism or protocol mismatch"):
            Session(curve_url, "no keys")
        # An unmodified NAOqi script, with the keys in its environment.
        script = 'from naoqi import ALProxy\nprint(ALProxy("PyCurve", "127.0.0.1", 9559).add(20, 22))\n'
        env = dict(
            os.environ,
            NAOBROKER_URL=curve_url,
            NAOBROKER_SERVER_KEY=server_public.decode(),
            NAOBROKER_SECRET_KEY=client_secret.decode(),
        )
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr
        session.close()
    finally:
        broker.stop()
