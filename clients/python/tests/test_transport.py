"""The main connection without keys: ZMTP on a plain socket (naobroker/wire.py), shared by
threads, with frames of any length, and opened again after the broker restarts."""

import socket
import struct
import subprocess
import threading

import pytest

from conftest import broker_binary, free_port, wait_for
from naobroker import SPIN_S, NaobrokerError, Session, wire


def test_without_keys_the_main_connection_is_a_plain_socket(broker):
    assert isinstance(broker.session._wire, wire.PlainDealer)


@pytest.mark.parametrize("spin", [0, SPIN_S], ids=["sleeping", "polling"])
def test_threads_calling_at_once_each_get_their_own_answers(broker, spin):
    """Eight threads share one session (one socket) while it also serves a module that calls
    back into the broker and takes events: every call gets its own answer, whether callers
    sleep at once or poll a while for their replies."""
    session = broker.connect("shared", spin=spin)
    events = []
    session.subscribe("Py/Tick", lambda name, value: events.append(value))

    class Relay:
        def relay(self, key):
            return session.call("ALMemory", "getData", key)

    session.register_module("PyRelay", Relay())
    failures = []

    def work(number):
        try:
            key = "Py/Thread%d" % number
            for round_number in range(150):
                value = [number, round_number, "x" * (number * 40)]  # some frames past 255 bytes
                session.call("ALMemory", "insertData", key, value)
                assert session.call("ALMemory", "getData", key) == value
                if round_number % 25 == 0:
                    assert session.call("PyRelay", "relay", key) == value
                    session.call("ALMemory", "raiseEvent", "Py/Tick", [number, round_number])
        except BaseException as error:  # reported below, with the thread's number
            failures.append((number, repr(error)))

    threads = [threading.Thread(target=work, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    raised = {(number, round_number) for number in range(8) for round_number in range(0, 150, 25)}
    session.call("ALMemory", "raiseEvent", "Py/Tick", "end")
    wait_for(lambda: "end" in events, "the last event")
    assert {tuple(value) for value in events if value != "end"} == raised
    session.close()


def test_a_frame_of_half_a_megabyte_goes_both_ways(broker):
    """Long ZMTP frames (8-byte lengths) that take many reads to arrive."""
    value = bytes(range(256)) * 2048
    broker.session.call("ALMemory", "insertData", "Py/Large", value)
    assert broker.session.call("ALMemory", "getData", "Py/Large") == value


def test_an_idle_session_calls_again_at_once_after_a_broker_restart(broker):
    """No thread reads an idle session's socket: the liveness connection's drop makes the
    session look at it, so the first call after the restart opens a new connection instead
    of failing on the old one's end."""
    idle = broker.connect("idle")
    assert idle._reader is None
    broker.restart()
    assert idle.call("ALMemory", "getData", "DCM/Time") is not None
    idle.close()


def test_a_session_to_a_port_nobody_listens_on_names_it():
    url = "tcp://127.0.0.1:%d" % free_port()
    with pytest.raises(NaobrokerError, match="^cannot reach a broker at %s " % url):
        Session(url, "nobody")


def test_a_frame_declared_longer_than_the_client_takes_cuts_the_connection():
    """A peer that declares a frame of a gigabyte is cut off at once: its bytes are not
    awaited and buffered (without the bound the session waits for them and only its Welcome's
    time limit ends it, with another message)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def hostile_broker():
        connection, _ = listener.accept()
        with connection:
            greeting = b"\xff" + bytes(8) + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x01" + bytes(31)
            ready = b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"ROUTER"
            connection.sendall(greeting + bytes([0x04, len(ready)]) + ready)
            connection.recv(4096)  # the client's greeting, READY and Hello
            connection.sendall(b"\x02" + struct.pack(">Q", 1 << 30) + bytes(1000))
            connection.recv(4096)  # until the client closes

    thread = threading.Thread(target=hostile_broker, daemon=True)
    thread.start()
    with pytest.raises(NaobrokerError, match="declared a frame of 1073741824 bytes, over this client's 16777216"):
        Session("tcp://127.0.0.1:%d" % port, "wary")
    thread.join(5)
    listener.close()


def test_an_ipc_endpoint_is_served_by_the_plain_socket(tmp_path):
    url = "ipc://%s" % (tmp_path / "broker.sock")
    config = tmp_path / "broker.toml"
    config.write_text(
        '[broker]\nlisten = ["%s"]\n[dcm]\nclock = "manual"\npriority = 0\nstart_time_ms = 0\n' % url
    )
    process = subprocess.Popen([broker_binary(), "--config", str(config)], stderr=subprocess.DEVNULL)
    try:
        session = wait_for(lambda: connected(url), "the broker on %s" % url)
        assert isinstance(session._wire, wire.PlainDealer)
        assert session.call("ALMemory", "getData", "DCM/Time") == 0
        session.close()
    finally:
        process.kill()
        process.wait()


def connected(url):
    try:
        return Session(url, "ipc")
    except NaobrokerError:
        return None
