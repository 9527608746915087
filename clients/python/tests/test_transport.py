"""The main connection without keys: ZMTP on a plain socket (naobroker/wire.py), shared by
threads, with frames of any length, and opened again after the broker restarts."""

import os
import socket
import struct
import sys
import threading
import time

import msgpack
import zmq

import pytest

from conftest import Broker, free_port, wait_for
import naobroker
from naobroker import SPIN_S, CallTimeout, ConnectionLost, NaobrokerError, Session, wire


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


SERVER_GREETING = b"\xff" + bytes(8) + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x01" + bytes(31)
_READY_BODY = b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"ROUTER"
SERVER_READY = bytes([0x04, len(_READY_BODY)]) + _READY_BODY
WELCOME_FRAME = msgpack.packb([1, 2, 1000])  # Welcome, protocol version 2, heartbeat 1000 ms


def fake_broker(serve):
    """The URL of a one-connection peer that runs `serve(connection)` on the connection it
    accepts, and the thread serving it."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept_one():
        with listener:
            connection, _ = listener.accept()
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with connection:
                serve(connection)

    thread = threading.Thread(target=accept_one, daemon=True)
    thread.start()
    return "tcp://127.0.0.1:%d" % port, thread


def greet_then(then):
    """`serve` for fake_broker: ZeroMQ's handshake as a broker, then `then(connection)`."""
    def serve(connection):
        connection.sendall(SERVER_GREETING + SERVER_READY)
        received = b""

        def hello_read():  # the client's greeting, its READY, then its Hello (a short frame)
            ready_end = 66 + received[65] if len(received) > 65 else None
            return ready_end is not None and len(received) > ready_end + 1 and (
                len(received) >= ready_end + 2 + received[ready_end + 1])

        while not hello_read():
            received += connection.recv(4096)
        then(connection)
    return serve


def until_closed(connection):
    while connection.recv(4096):
        pass


def test_a_frame_declared_longer_than_the_client_takes_cuts_the_connection():
    """A peer that declares a frame of a gigabyte is cut off at once: its bytes are not
    awaited and buffered (without the bound the session waits for them and only its Welcome's
    time limit ends it, with another message)."""
    def declare_a_gigabyte(connection):
        connection.sendall(b"\x02" + struct.pack(">Q", 1 << 30) + bytes(1000))
        until_closed(connection)

    url, thread = fake_broker(greet_then(declare_a_gigabyte))
    with pytest.raises(NaobrokerError, match="declared a frame of 1073741824 bytes, over this client's 16777216"):
        Session(url, "wary")
    thread.join(5)


def test_a_frame_arriving_a_byte_at_a_time_is_read_whole():
    """TCP may hand over a frame in pieces of any size, down to its first byte alone."""
    def welcome_byte_by_byte(connection):
        for byte in bytes([0, len(WELCOME_FRAME)]) + WELCOME_FRAME:
            connection.sendall(bytes([byte]))
            time.sleep(0.01)
        until_closed(connection)

    url, thread = fake_broker(greet_then(welcome_byte_by_byte))
    Session(url, "patient").close()
    thread.join(5)


def test_a_peer_that_sends_its_handshake_a_byte_at_a_time_is_given_up_on_in_time():
    """The connect time limit bounds the whole handshake, not each read: else a peer sending
    a byte every half second would hold the session (and the thread owning its socket) for
    half a minute."""
    def dribble(connection):
        for byte in SERVER_GREETING:
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                return
            time.sleep(0.5)

    url, thread = fake_broker(dribble)
    started = time.monotonic()
    with pytest.raises(NaobrokerError, match="no ZeroMQ handshake within 2 s"):
        Session(url, "impatient")
    assert time.monotonic() - started < 10
    thread.join(35)


def test_an_unreadable_first_frame_is_a_naobroker_error():
    def garbage(connection):
        connection.sendall(bytes([0, 1]) + b"\xc1")  # 0xc1: never used in MessagePack
        until_closed(connection)

    url, thread = fake_broker(greet_then(garbage))
    with pytest.raises(NaobrokerError, match="sent an unreadable frame"):
        Session(url, "careful")
    thread.join(5)


def frames_of(connection, buffer):
    """The next short frames (bodies) from `connection`, `buffer` holding what was read."""
    while len(buffer) < 2 or len(buffer) < 2 + buffer[1]:
        chunk = connection.recv(4096)
        if not chunk:
            raise EOFError
        buffer += chunk
    body = bytes(buffer[2:2 + buffer[1]])
    del buffer[:2 + buffer[1]]
    return body


class ReconnectingFakeBroker:
    """A peer that Welcomes the session's first connection and drops it on `drop_first`,
    accepts its second (the reconnection) and stays silent until `release` (so the
    session's open waits out its time limit meanwhile), then Welcomes every main
    connection and answers each call with its method's name (`calls_seen`). The liveness
    connection (libzmq) is accepted and never answered: the session's silence limit must
    be raised."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "tcp://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.drop_first, self.held, self.release = threading.Event(), threading.Event(), threading.Event()
        self.calls_seen = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.release.set()
        self.listener.close()

    def _accept(self):
        mains = 0
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            connection.settimeout(0.5)
            try:  # libzmq says 10 bytes and waits for the peer's; the plain socket says more
                first = connection.recv(11, socket.MSG_PEEK | socket.MSG_WAITALL)
            except socket.timeout:
                first = b""
            connection.settimeout(None)
            if len(first) < 11:
                threading.Thread(target=until_closed, args=(connection,), daemon=True).start()
                continue
            mains += 1
            if mains == 2:
                self.held.set()
                self.release.wait()
            threading.Thread(target=self._serve, args=(connection, mains), daemon=True).start()

    def _serve(self, connection, number):
        with connection:
            buffer = bytearray()
            try:
                connection.sendall(SERVER_GREETING + SERVER_READY)
                while len(buffer) < 64:
                    chunk = connection.recv(4096)
                    if not chunk:
                        return
                    buffer += chunk
                del buffer[:64]
                frames_of(connection, buffer)  # the client's READY
                frames_of(connection, buffer)  # its Hello
                connection.sendall(bytes([0, len(WELCOME_FRAME)]) + WELCOME_FRAME)
                if number == 1:
                    self.drop_first.wait()
                    return
                while True:
                    message = msgpack.unpackb(frames_of(connection, buffer))
                    if message[0] == 2:  # Call: [2, id, module, method, args]
                        self.calls_seen.append(message[3])
                        reply = msgpack.packb([4, message[1], message[3]])
                        connection.sendall(bytes([0, len(reply)]) + reply)
            except (EOFError, OSError):
                return


@pytest.fixture
def reconnecting_broker(monkeypatch):
    monkeypatch.setattr(naobroker, "REOPEN_S", 60.0)  # a reconnection waits until released
    monkeypatch.setattr(naobroker, "BROKER_SILENCE_S", 60.0)  # the liveness connection is not served
    fake = ReconnectingFakeBroker()
    yield fake
    fake.close()


def test_a_call_waiting_for_the_socket_times_out_while_its_owner_reconnects(reconnecting_broker):
    """A thread that holds the socket while it opens a lost connection again (here a peer
    that accepts and stays silent, so the open waits out its whole time limit) does not
    hold another thread's call past that call's timeout; the late call leaves nothing
    behind, is never sent, and the owner's reconnection goes on undisturbed."""
    fake = reconnecting_broker
    session = Session(fake.url, "holder")
    fake.drop_first.set()
    outcomes = {}
    # Its call sees the connection's end, then opens it again (held).
    owner_thread = call_in_thread(session, "lost", outcomes)
    try:
        assert fake.held.wait(10), "the session did not open its connection again"
        late = call_in_thread(session, "late", outcomes, timeout=0.2)
        late.join(10)
        assert not late.is_alive(), "the timed call waited for the socket's owner"
        assert isinstance(outcomes["late"], CallTimeout), outcomes["late"]
        assert str(outcomes["late"]) == "PyLeft.late timed out after 200 ms"
        assert not fake.release.is_set() and session._owner == owner_thread.ident
        with session._state:
            assert session._pending == {} and session._claims == 0
            assert [frame for _, frame, _ in session._outbox] == []
    finally:
        fake.release.set()
    owner_thread.join(10)
    assert isinstance(outcomes.get("lost"), ConnectionLost), outcomes.get("lost")
    assert session.call("PyLeft", "after", timeout=10) == "after"
    assert fake.calls_seen == ["after"]
    session.close()


def test_a_call_that_opens_the_lost_connection_again_ends_by_its_deadline(reconnecting_broker):
    """The caller owning the socket opens a lost connection again only until its own
    deadline: a call with a 0.5 s timeout that finds the connection gone ends (it was lost)
    while the silent peer still holds the new connection, not after the open's own time
    limit (REOPEN_S, here a minute)."""
    fake = reconnecting_broker
    session = Session(fake.url, "hasty")
    fake.drop_first.set()
    outcomes = {}
    caller = call_in_thread(session, "lost", outcomes, timeout=0.5)
    try:
        assert fake.held.wait(10), "the session did not open its connection again"
        caller.join(10)
        assert not caller.is_alive(), "the call waited out the reconnection"
        assert isinstance(outcomes["lost"], ConnectionLost), outcomes["lost"]
        assert not fake.release.is_set()
    finally:
        fake.release.set()
    assert session.call("PyLeft", "after", timeout=10) == "after"
    assert fake.calls_seen == ["after"]
    session.close()


def call_in_thread(session, method, outcomes, **options):
    """A started thread calling PyLeft.`method`: its answer, or the NaobrokerError it
    raised, goes to outcomes[method]."""

    def call():
        try:
            outcomes[method] = session.call("PyLeft", method, **options)
        except NaobrokerError as error:
            outcomes[method] = error

    thread = threading.Thread(target=call)
    thread.start()
    return thread


def test_an_ipc_endpoint_is_served_by_the_plain_socket(tmp_path):
    url = "ipc://%s" % (tmp_path / "broker.sock")
    broker = Broker(url=url, cwd=tmp_path)
    try:
        session = wait_for(lambda: connected(url), "the broker on %s" % url)
        assert isinstance(session._wire, wire.PlainDealer)
        assert session.call("ALMemory", "getData", "DCM/Time") == 0
        session.close()
    finally:
        broker.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract sockets are Linux's")
def test_an_abstract_ipc_endpoint_is_the_same_socket_for_broker_plain_socket_and_libzmq(tmp_path):
    """ipc://@name is a socket in Linux's abstract namespace, no file: the broker listens
    there (not on a file named @name in its directory), the plain main connection and
    libzmq (the liveness connection, CURVE's) both reach it."""
    name = "naobroker-pytest-%d" % os.getpid()
    url = "ipc://@" + name
    broker = Broker(url=url, cwd=tmp_path)
    try:
        session = wait_for(lambda: connected(url), "the broker on %s" % url)
        assert isinstance(session._wire, wire.PlainDealer)
        assert session.call("ALMemory", "getData", "DCM/Time") == 0
        assert "@" + name not in os.listdir(tmp_path)
        with open("/proc/net/unix") as sockets:
            assert any(line.split()[-1] == "@" + name for line in sockets if len(line.split()) > 7)
        dealer = zmq.Context.instance().socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.connect(url)
        dealer.send(msgpack.packb([0, 2, "libzmq", os.urandom(16), 0]))  # Hello, main role
        assert dealer.poll(10000), "libzmq got no Welcome at %s" % url
        assert msgpack.unpackb(dealer.recv())[0] == 1  # Welcome
        dealer.close()
        session.close()
    finally:
        broker.stop()


def connected(url):
    try:
        return Session(url, "ipc")
    except NaobrokerError:
        return None
