"""naobroker client: calls, posts, events and modules over ZeroMQ + MessagePack.

Written from docs/protocol.md.

Calls. A call is sent and its reply read on the caller's thread: whoever owns the socket
reads it and dispatches everything that arrives (other threads' replies, events, calls to
served modules), and hands the socket over when another thread wants to send. The caller
sleeps until its reply comes; ``Session(url, spin=SPIN_S)`` makes it poll for up to 100 us
first, CPU spent for latency where waking a sleeping thread costs more than the call (a
VM's idle vCPU). Without
CURVE keys that socket is a plain TCP (or Unix) socket speaking ZMTP itself (wire.py), so a
call is one write and one read with no libzmq I/O thread to wake; with keys it is libzmq's.
When the broker goes away a plain connection is opened again by the thread that next owns
the socket, every 0.1 s until the broker is back (libzmq does the same by itself); a call with
a time limit tries only until its deadline, and waits for another thread's try no longer
either. There is no default time limit: a call waits as long as the connection lives. Give
one per session (``Session(url, timeout=5.0)``) or per call (``session.call("ALMotion",
"moveTo", x, y, t, timeout=20.0)``, ``None`` = wait forever); past it the call raises ``CallTimeout``
("ALMotion.moveTo timed out after 20000 ms") and its late reply is dropped.

Liveness. Each session opens a second connection (the liveness connection) from a daemon
thread that never runs user code and sends a heartbeat every second, so a module method or
callback that runs for minutes does not get its module dropped. While that connection is
open the broker keeps the session even when nothing heartbeats (a method holding the GIL
in one long C call stops every thread of the process): only the process's end, or its
machine's, closes it. That thread also watches
the broker: when the TCP connection drops (broker stopped or restarted) the calls under
way fail with ``ConnectionLost`` ("ALMotion.moveTo: connection to the broker at ... lost"),
and so do they when the broker says nothing for 3 s. (A plain main connection's end is
seen by the thread reading it; when none does, by the liveness thread once its own
connection dropped.) Whenever the broker has forgotten
this client (it restarted, or it dropped us: its next message is a Welcome we did not ask
for), the session says Hello again and restores by itself its modules, its event streams
and the NAOqi callbacks it subscribed with ``subscribe_callback`` (the protocol's
``SubscribeCallback``, which the ``naoqi`` shim's ``ALProxy("ALMemory").subscribeToEvent``
and ``subscribeToMicroEvent`` send) minus those it later unsubscribed. Replies of module methods
that outlive the connection their call came on are dropped, not sent to the new one.

Modules. ``session.register_module(name, instance)`` serves the instance's public methods
and NAOqi's base methods (``ping``, ``version``, ``getMethodList``, ``getMethodHelp``,
``getModuleHelp``, ``getUsage``, ``exit``, ``isRunning``, ``wait``, ``stop``: served.py);
``post`` runs a method as a task with an id of its own (tasks.py; ``stop_requested()`` tells
a posted method that ``stop`` was called). ``unregister_module(name)`` and ``exit`` free the
name at the broker at once, and so does ``close()`` for every module of the session (and
the interpreter's exit for sessions not closed), so a script run again right after finds
its module names free.

User code. Methods of served modules run each on its own thread (so they may be called
concurrently, and may call other modules). Event streams and NAOqi callbacks run one at a
time, in order, on the session's event thread; each counts toward the ``Ack`` once it has
run. When the broker had to drop events for this client (it was too slow), the next one
says how many: NAOqi callbacks call the module's ``eventsLost(event, count)`` if it has
one, streams call their ``on_lost(event, count)``; otherwise a warning is logged
(``logging`` logger "naobroker").

Logging. ``logging.getLogger().addHandler(BrokerLogHandler(session))`` forwards a script's
``logging`` records to the broker's log stream, where ``naocli log`` shows them under the
session's name (logs.py).

Authentication. A broker listening beyond loopback asks for ZeroMQ CURVE: give the
broker's public key and this client's key pair, Z85 text (40 characters each, e.g. from
``zmq.curve_keypair()``), as ``server_key=``, ``public_key=``, ``secret_key=``, or in the
environment variables NAOBROKER_SERVER_KEY, NAOBROKER_PUBLIC_KEY and NAOBROKER_SECRET_KEY,
which unmodified NAOqi scripts pick up (the public key may be left out: it is derived from
the secret key, so the two variables the Rust SDK and naocli read are enough). With keys,
both connections use CURVE; without, NULL security (loopback, ipc://).
"""

import atexit
import collections
import itertools
import logging
import os
import queue
import threading
import time
import weakref

import msgpack
import zmq
from zmq.utils.monitor import recv_monitor_message

from . import wire

from .logs import BrokerLogHandler  # noqa: F401 - part of the package's API
from .errors import (  # noqa: F401 - BadArgument, Refused: part of the package's API
    BadArgument,
    CallTimeout,
    ConnectionLost,
    NaobrokerError,
    NotFound,
    Refused,
    error_frame,
    error_of,
)
from .served import ServedModule
from .tasks import failure_text, stop_requested

PROTOCOL_VERSION = 2
HELLO, WELCOME, CALL, POST, REPLY, ERROR, EVENT = 0, 1, 2, 3, 4, 5, 6
REGISTER, UNREGISTER, SUBSCRIBE, UNSUBSCRIBE, HEARTBEAT, ACK, CALLBACK, GOODBYE = 7, 8, 9, 10, 11, 12, 13, 14
SUBSCRIBE_CALLBACK, UNSUBSCRIBE_CALLBACK = 15, 16
ROLE_MAIN, ROLE_LIVENESS = 0, 1
ACK_EVERY = 256
HEARTBEAT_S = 1.0
BROKER_SILENCE_S = 3.0
CONNECT_S = 2.0
# How long closing waits for the broker to free the session's module names.
GOODBYE_S = 2.0
KEY_VARIABLES = ("NAOBROKER_SERVER_KEY", "NAOBROKER_PUBLIC_KEY", "NAOBROKER_SECRET_KEY")
HANDSHAKE_FAILED = wire.HANDSHAKE_FAILED
# The plain main connection, once lost, is opened again by the socket's owner: each try may
# take this long, and the next comes this much later.
REOPEN_S = 1.0
REOPEN_AGAIN_S = 0.1
# How long the liveness thread, its own connection dropped, watches an unread main one end.
MAIN_END_S = 0.1
# How long a caller polls for its reply before it sleeps, when it asks to (Session(spin=SPIN_S)):
# on a VM a sleeping thread's wake-up can cost 50-100 us, more than a whole call when the
# broker is near; the poll spends at most this much CPU per call. Off by default: a robot's
# CPUs have other work, and without it the client is already 3-6x faster than libqi's.
SPIN_S = 100e-6

log = logging.getLogger("naobroker")
_UNSET = object()
# Sessions serving modules, closed when the interpreter exits: their module names are then
# free at once for the next run of the script.
_serving = weakref.WeakSet()


@atexit.register
def _close_serving_sessions():
    for session in list(_serving):
        session.close()


_packers = threading.local()


def _encode(items):
    # One packer per thread, reused: msgpack.packb makes (and frees) a packer and its buffer
    # per frame, 1.4 µs of a call. A packer that fails to pack resets itself.
    try:
        packer = _packers.packer
    except AttributeError:
        packer = _packers.packer = msgpack.Packer(use_bin_type=True)
    return packer.pack(items)


def _decode(frame):
    return msgpack.unpackb(frame, raw=False, strict_map_key=False)


HEARTBEAT_FRAME = _encode([HEARTBEAT])


def curve_credentials(server_key=None, public_key=None, secret_key=None):
    """The CURVE keys (server's public, client's public, client's secret) as bytes, from the
    arguments or else the environment; None when none is given. The client's public key, when not given, is derived from its secret key.
    Refuses an incomplete set or a key that is not Z85 text."""
    given = [server_key, public_key, secret_key]
    keys = [key or os.environ.get(variable) for key, variable in zip(given, KEY_VARIABLES)]
    keys = [key.encode("ascii") if isinstance(key, str) else key for key in keys]
    server_key, public_key, secret_key = keys
    if not any(keys):
        return None
    for key, variable in ((server_key, KEY_VARIABLES[0]), (secret_key, KEY_VARIABLES[2]), (public_key, KEY_VARIABLES[1])):
        argument = variable[len("NAOBROKER_"):].lower()
        if key is None and variable != KEY_VARIABLES[1]:
            raise NaobrokerError(
                "CURVE needs the broker's public key and this client's secret key: %s (or %s=) is missing"
                % (variable, argument)
            )
        if key is not None and len(key) != 40:
            raise NaobrokerError(
                "%s (%s=) is not a Z85 CURVE key: 40 characters expected, got %d" % (variable, argument, len(key))
            )
    if public_key is None:
        public_key = zmq.curve_public(secret_key)
    return server_key, public_key, secret_key


def _wake(fd):
    try:
        os.write(fd, b"x")
    except BlockingIOError:  # the pipe is full: the reader has wake-ups enough
        pass


def _pipe():
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    return read, write


def _timed_out(label, timeout):
    return CallTimeout("%s timed out after %d ms" % (label, round(timeout * 1000)))


class _Waiter:
    """A request under way: who sent it and, once done, its answer or failure."""

    __slots__ = ("label", "thread", "done", "answer", "failure")

    def __init__(self, label):
        self.label = label
        self.thread = threading.get_ident()
        self.done = False
        self.answer = None
        self.failure = None


class Session:
    """One connection to a broker (plus its liveness connection)."""

    _shared = {}
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls, url, **options):
        """One session per broker URL for the whole process (what ALProxy uses); `options`
        (Session's keywords) apply when this call creates it."""
        with cls._shared_lock:
            session = cls._shared.get(url)
            if session is None or session._closed:
                session = cls._shared[url] = Session(url, **options)
            return session

    @classmethod
    def close_shared(cls):
        """Close every shared session (their modules and subscriptions end)."""
        with cls._shared_lock:
            sessions = list(cls._shared.values())
            cls._shared.clear()
        for session in sessions:
            session.close()

    def __init__(self, url, name="python", timeout=None, server_key=None, public_key=None, secret_key=None,
                 spin=0):
        self.url = url
        self.name = name
        self.timeout = timeout
        self.spin = spin
        self._credentials = curve_credentials(server_key, public_key, secret_key)
        self._session_id = os.urandom(16)
        self._ids = itertools.count(1)
        # _state guards everything below that several threads touch, and wakes waiters. A
        # call's own path takes its lock, _lock, directly: the same lock, without the
        # condition's Python-level `with` (1 µs a time, three times a call).
        self._lock = threading.RLock()
        self._state = threading.Condition(self._lock)
        self._owner = None  # the thread that may use the main socket now
        self._sleepers = 0  # threads waiting on _state
        self._claims = 0  # threads waiting to own it, to send
        self._pending = {}
        # (generation, frame, request id or None): a call's frame goes only while it is awaited.
        self._outbox = collections.deque()
        # Counts the connections the broker forgot (restart, drop): a reply or an Ack made
        # for an older one must not reach the new one, whose call ids start again at 1.
        self._generation = 0
        self._chores = False  # outbox non-empty or Hello due: the owner acts on it
        self._hello_due = False
        self._restore_due = False
        self._restore_thread = None
        self._closed = False
        self._modules = {}
        self._streams = {}
        # (event, module): the SubscribeCallback items (without the id) to send again after
        # a reconnect.
        self._callbacks = {}
        # Touched by the socket's owner only.
        self._hellos_unanswered = 0
        self._last_sent = 0.0
        self._inbox = queue.SimpleQueue()
        self._reader = None
        self._event_thread = None
        self._wake_read, self._wake_write = _pipe()
        self._live_wake_read, self._live_wake_write = _pipe()
        self._reopen_at = 0.0
        # The main connection: ZMTP on a plain socket without keys, libzmq with CURVE (wire.py).
        if self._credentials is None and wire.plain_address(url) is not None:
            self._wire = wire.PlainDealer(url, self._wake_read)
        else:
            self._wire = wire.ZmqDealer(url, self._wake_read, self._credentials)
        try:
            try:
                self._wire.open(CONNECT_S)
            except OSError as error:
                raise NaobrokerError("cannot reach a broker at %s (%s)" % (url, error)) from None
            except wire.Refused as error:
                raise NaobrokerError("the broker at %s refused the connection: %s" % (url, error)) from None
            self._greet()
        except BaseException:
            self._closed = True
            self._wire.close()
            for fd in (self._wake_read, self._wake_write, self._live_wake_read, self._live_wake_write):
                os.close(fd)
            raise
        self._liveness = threading.Thread(target=self._keep_alive, name="naobroker-liveness", daemon=True)
        self._liveness.start()

    def _greet(self):
        """Hello on the main connection and wait for the Welcome (no thread runs yet)."""
        self._send_hello()
        deadline = time.monotonic() + CONNECT_S
        while self._hellos_unanswered:
            left = deadline - time.monotonic()
            if left <= 0:
                raise NaobrokerError("cannot reach a broker at %s (no Welcome within %g s)" % (self.url, CONNECT_S))
            readable, refusal = self._wire.greet_wait(int(left * 1000) + 1)
            if refusal is not None:
                raise NaobrokerError("the broker at %s refused the connection: %s" % (self.url, refusal))
            try:
                frames = self._wire.receive() if readable else ()
            except wire.Lost as error:
                raise NaobrokerError("cannot reach a broker at %s (%s)" % (self.url, error)) from None
            for frame in frames:
                try:
                    message = _decode(frame)
                    kind = message[0]
                except Exception as error:  # a broken peer: the caller hears it in our words
                    raise NaobrokerError("the peer at %s sent an unreadable frame: %s" % (self.url, error)) from None
                if kind == ERROR:
                    raise error_of(message)
                if kind == WELCOME:
                    self._hellos_unanswered -= 1

    # -- the API

    def call(self, module, method, *args, timeout=_UNSET):
        """Call module.method(*args) and return its result. `timeout` (seconds, None =
        forever) overrides the session's for this call."""
        return self._request([CALL, module, method, list(args)], "%s.%s" % (module, method), timeout)

    def post(self, module, method, *args, timeout=_UNSET):
        """Start module.method(*args) as a task; returns its id."""
        return self._request([POST, module, method, list(args)], "%s.%s" % (module, method), timeout)

    def subscribe_callback(self, event, module, method, micro_message=_UNSET, timeout=_UNSET):
        """NAOqi's ``ALMemory.subscribeToEvent(event, module, method)``, or with
        ``micro_message`` its ``subscribeToMicroEvent(event, module, micro_message, method)``:
        the broker calls ``module.method(event, value, message)`` on each raise, for a module
        this session serves. Its own message (docs/protocol.md); subscribed again after a
        reconnect until ``unsubscribe_callback`` or the module's unregistration."""
        items = [SUBSCRIBE_CALLBACK, event, module, method]
        if micro_message is not _UNSET:
            items.append(micro_message)
        answer = self._request(list(items), "subscribe %s to %s" % (module, event), timeout)
        with self._state:
            self._callbacks[(event, module)] = items
        return answer

    def unsubscribe_callback(self, event, module, timeout=_UNSET):
        """NAOqi's ``ALMemory.unsubscribeToEvent(event, module)``."""
        label = "unsubscribe %s from %s" % (module, event)
        answer = self._request([UNSUBSCRIBE_CALLBACK, event, module], label, timeout)
        with self._state:
            self._callbacks.pop((event, module), None)
        return answer

    def subscribe(self, event, callback, on_lost=None):
        """callback(name, value) on every event named `event`, on the session's event thread.
        on_lost(name, count), when given, hears how many events the broker dropped before
        one (this client was too slow to take them); else a warning is logged."""
        with self._state:
            first = event not in self._streams
            self._streams.setdefault(event, []).append((callback, on_lost))
        self._start_threads()
        if first:
            try:
                self._request([SUBSCRIBE, event], "subscribe %s" % event, _UNSET)
            except BaseException:
                with self._state:
                    self._streams.pop(event, None)
                raise

    def register_module(self, name, instance, local_only=()):
        """Serve the public methods of `instance` as module `name`, with NAOqi's base
        methods and posted tasks (served.py); `local_only` names methods not served."""
        served = ServedModule(name, instance, local_only)
        with self._state:
            self._modules[name] = served
        _serving.add(self)
        self._start_threads()
        try:
            self._request([REGISTER, name, served.infos], "register %s" % name, _UNSET)
        except BaseException:
            with self._state:
                self._modules.pop(name, None)
            raise

    def describe_module(self, name, description):
        """What `getModuleHelp` answers for module `name` (by default its class docstring)."""
        with self._state:
            self._modules[name].description = description

    def unregister_module(self, name, timeout=_UNSET):
        """Stop serving module `name`: the broker frees its name at once and drops its
        ALMemory callbacks; calls under way to it fail."""
        with self._state:
            if self._modules.pop(name, None) is None:
                raise NaobrokerError("unregister %s: this session does not serve it" % name)
            for key in [key for key in self._callbacks if key[1] == name]:
                del self._callbacks[key]
        self._request([UNREGISTER, name], "unregister %s" % name, timeout)

    def close(self):
        """End the session: its modules are unregistered first (their names are free for
        anyone once close returns), then its calls under way fail and its subscriptions end."""
        self._unregister_all()
        with self._state:
            if self._closed:
                return
            self._closed = True
            self._fail_pending(NaobrokerError, "session closed")
        _wake(self._wake_write)
        _wake(self._live_wake_write)
        self._inbox.put(None)
        me = threading.current_thread()
        for thread in (self._reader, self._event_thread, self._liveness):
            if thread is not None and thread is not me:
                thread.join(2)
        with self._state:
            while self._owner is not None and self._owner != threading.get_ident():
                self._sleep(0.1)
            self._owner = threading.get_ident()
        # The broker forgets this session at once instead of waiting out its silence (its
        # answer is not awaited).
        self._wire.close(_encode([GOODBYE, next(self._ids)]))
        for fd in (self._wake_read, self._wake_write, self._live_wake_read, self._live_wake_write):
            os.close(fd)

    def _unregister_all(self):
        """Free this session's module names at the broker before the connection closes: the
        broker would otherwise hold them until it notices the silence (2 s)."""
        deadline = time.monotonic() + GOODBYE_S
        while True:
            with self._state:
                # Nothing to free when the broker does not know this connection now.
                if self._closed or not self._modules or self._hello_due or self._restore_due:
                    return
                name = next(iter(self._modules))
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("closing: the broker at %s did not free %s in %g s", self.url, name, GOODBYE_S)
                return
            try:
                self.unregister_module(name, timeout=left)
            except (CallTimeout, ConnectionLost) as error:
                log.warning("closing: %s", error)
                return
            except NaobrokerError as error:  # e.g. the broker forgot it meanwhile
                log.info("closing: %s", error)

    # -- owning the main socket: one thread at a time sends on it and reads it.

    def _request(self, items, label, timeout):
        if timeout is _UNSET:
            timeout = self.timeout
        request_id = next(self._ids)
        items.insert(1, request_id)
        frame = _encode(items)
        waiter = _Waiter(label)
        deadline = None if timeout is None else time.monotonic() + timeout
        lock = self._lock
        with lock:
            if self._closed:
                raise NaobrokerError("%s: session closed" % label)
            self._pending[request_id] = waiter
            if not self._take_socket(label, deadline):
                # Nothing of this call is left: its frame was not written nor queued.
                del self._pending[request_id]
                raise _timed_out(label, timeout)
        try:
            if self._chores:
                self._do_chores(deadline)
            if self._wire.connected:
                self._send(frame)
            else:  # sent after the Hello, once the connection is open again
                with lock:
                    self._outbox.append((self._generation, frame, request_id))
                    self._chores = True
            self._read(waiter, deadline)
        finally:
            self._release_socket(deadline)
        while not waiter.done:
            with lock:
                while not waiter.done:
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        self._pending.pop(request_id, None)
                        raise _timed_out(label, timeout)
                    if self._owner is None and not self._claims:
                        self._owner = threading.get_ident()
                        break
                    self._sleep(None if deadline is None else deadline - now)
            if not waiter.done:
                try:
                    self._read(waiter, deadline)
                finally:
                    self._release_socket(deadline)
        if waiter.failure is not None:
            raise waiter.failure
        if waiter.answer[0] == ERROR:
            raise error_of(waiter.answer)
        return waiter.answer[2]

    def _take_socket(self, label, deadline):
        """Called with _state held: wait until this thread owns the socket. False when
        `deadline` (None: none) comes first: the owner may hold the socket for a while (it
        opens a lost connection again, up to REOPEN_S), and keeps it."""
        if self._owner is None and not self._claims:
            self._owner = threading.get_ident()
            return True
        self._claims += 1
        try:
            while self._owner is not None:
                if self._closed:
                    raise NaobrokerError("%s: session closed" % label)
                left = None
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                _wake(self._wake_write)
                self._sleep(left)
        finally:
            self._claims -= 1
        self._owner = threading.get_ident()
        return True

    def _sleep(self, timeout=None):
        """Called with _state held: wait on it, counted in _sleepers."""
        self._sleepers += 1
        try:
            self._state.wait(timeout)
        finally:
            self._sleepers -= 1

    def _release_socket(self, deadline=None):
        """Send what others left in the outbox, then let go of the socket. A lost connection
        is opened again only until `deadline`, the releasing caller's."""
        done = False
        while True:
            with self._lock:
                if not self._chores or done:
                    self._owner = None
                    if self._sleepers:  # most calls: none waits, and notify_all costs 0.7 us
                        self._state.notify_all()
                    return
            # Chores left when the connection cannot be opened now: the next owner tries.
            done = not self._do_chores(deadline)

    def _post(self, frame, generation):
        """Send from a thread that will not read: now if the socket is free, else by its
        owner; dropped if the connection it was made for (`generation`) is gone."""
        with self._state:
            if self._closed:
                return
            self._outbox.append((generation, frame, None))
            self._chores = True
            mine = self._owner is None
            if mine:
                self._owner = threading.get_ident()
        if mine:
            self._release_socket()
        else:
            _wake(self._wake_write)

    def _do_chores(self, deadline=None):
        """False when the plain connection, lost, cannot be opened again yet (or before
        `deadline`, the owner's own call's)."""
        if not self._wire.connected and not self._reopen(deadline):
            return False
        with self._state:
            # A call given up on (its caller timed out) while the connection was down is not
            # sent when it comes back: a moveTo must not start long after the script stopped
            # waiting for it.
            frames = [
                frame
                for generation, frame, request_id in self._outbox
                if generation == self._generation and (request_id is None or request_id in self._pending)
            ]
            self._outbox.clear()
            hello = self._hello_due
            self._hello_due = False
            self._chores = False
        if hello:
            self._send_hello()
        for frame in frames:
            self._send(frame)
        return True

    def _reopen(self, deadline):
        """Open the lost plain connection again (at most every REOPEN_AGAIN_S), giving up
        at `deadline`: a caller's call does not outlast its timeout."""
        now = time.monotonic()
        if now < self._reopen_at:
            return False
        limit = REOPEN_S
        if deadline is not None:
            limit = min(limit, deadline - now)
            if limit <= 0:
                return False
        # Every try, not only a failed one: a peer that takes the connection and closes it
        # again at once must not make the owner reconnect in a tight loop.
        self._reopen_at = now + REOPEN_AGAIN_S
        try:
            self._wire.open(limit)
        except (OSError, wire.Refused) as error:
            log.debug("the broker at %s is not back yet: %s", self.url, error)
            return False
        self._hellos_unanswered = 0  # those said on the lost connection go unanswered
        return True

    def _send(self, frame):
        if self._wire.connected:
            try:
                self._wire.send(frame)
            except wire.Lost as error:
                self._lose(error)
        self._last_sent = time.monotonic()

    def _send_heartbeat(self):
        """Never blocks: while the broker is away, heartbeats are not worth queueing."""
        if self._wire.connected:
            try:
                self._wire.send_nowait(HEARTBEAT_FRAME)
            except wire.Lost as error:
                self._lose(error)
        self._last_sent = time.monotonic()

    def _lose(self, error):
        """As the owner: the plain connection is gone."""
        log.debug("the connection to the broker at %s: %s", self.url, error)
        self._wire.drop()
        self._connection_lost("connection to the broker at %s lost" % self.url)

    def _send_hello(self):
        self._send(_encode([HELLO, PROTOCOL_VERSION, self.name, self._session_id, ROLE_MAIN]))
        self._hellos_unanswered += 1

    def _read(self, waiter, deadline):
        """As the socket's owner: read and dispatch until `waiter` is answered, another
        thread claims the socket, the deadline passes or the session closes."""
        connection = self._wire
        spin = self.spin if waiter is not None else 0  # once per read, for a reply only
        while waiter is None or not waiter.done:
            if self._claims or self._closed:
                return
            if self._chores and not self._do_chores(deadline):
                wait = REOPEN_AGAIN_S
            else:
                wait = HEARTBEAT_S
            now = time.monotonic()
            heartbeat_in = self._last_sent + HEARTBEAT_S - now
            if heartbeat_in <= 0:
                self._send_heartbeat()
            else:
                wait = min(wait, heartbeat_in)
            if deadline is not None:
                if now >= deadline:
                    return
                wait = min(wait, deadline - now)
            if spin:
                ready = self._spin(connection, min(spin, wait))
                spin = 0
                if not ready:  # back to the loop's checks (a claim may have woken us) first
                    continue
            elif not connection.wait(int(wait * 1000) + 1):
                continue
            self._receive_and_dispatch()

    def _receive_and_dispatch(self):
        """As the socket's owner, the connection readable: dispatch the frames that arrived
        (or see it lost)."""
        try:
            frames = self._wire.receive()
        except wire.Lost as error:
            self._lose(error)
            return
        for frame in frames:
            try:
                message = _decode(frame)
                kind = message[0]
            except Exception as error:  # a broker bug must not kill the caller
                log.warning("unreadable frame from %s: %s", self.url, error)
                continue
            self._dispatch(kind, message)

    def _spin(self, connection, seconds):
        """Poll the connection without sleeping for up to `seconds`: True once it is readable;
        False at the end, or as soon as another thread claims the socket."""
        end = time.perf_counter() + seconds
        poll = connection.wait
        while not self._claims and time.perf_counter() < end:
            if poll(0):
                return True
        return False

    def _dispatch(self, kind, message):
        if kind == REPLY or kind == ERROR:
            with self._lock:
                waiter = self._pending.pop(message[1], None)
                if waiter is not None:
                    waiter.answer = message
                    waiter.done = True
                    if waiter.thread != threading.get_ident():
                        self._state.notify_all()
            if waiter is None and message[1] == 0:
                log.warning("the broker at %s refused a frame: %s", self.url, message[2])
        elif kind == EVENT or kind == CALLBACK:
            self._inbox.put((self._generation, message))
        elif kind == CALL or kind == POST:
            serve = threading.Thread(target=self._serve, args=(self._generation, *message), name="naobroker-call", daemon=True)
            serve.start()
        elif kind == WELCOME:
            self._on_welcome()

    def _on_welcome(self):
        if self._hellos_unanswered:
            self._hellos_unanswered -= 1
        else:
            # The broker does not know this connection any more (it dropped us, or it
            # restarted and we were not told): say who we are and restore everything.
            log.warning("the broker at %s forgot this client: restoring its modules and subscriptions", self.url)
            self._send_hello()
            with self._state:
                self._restore_due = True
                self._generation += 1
        if not self._hellos_unanswered:
            with self._state:
                if self._restore_due:
                    self._restore_due = False
                    if self._restore_thread is None:
                        self._restore_thread = threading.Thread(target=self._restore, name="naobroker-restore", daemon=True)
                        self._restore_thread.start()
                    else:
                        self._restore_due = True  # once the restore under way has ended

    def _fail_pending(self, error_class, reason):
        """Called with _state held."""
        for waiter in self._pending.values():
            waiter.failure = error_class("%s: %s" % (waiter.label, reason))
            waiter.done = True
        self._pending.clear()
        self._state.notify_all()

    # -- the background threads: reader, events, liveness, restore

    def _start_threads(self):
        with self._state:
            if self._reader is None:
                self._reader = threading.Thread(target=self._read_when_idle, name="naobroker-reader", daemon=True)
                self._reader.start()
                self._event_thread = threading.Thread(target=self._run_events, name="naobroker-events", daemon=True)
                self._event_thread.start()

    def _read_when_idle(self):
        """Reads the socket whenever no caller does, so events and calls to our modules
        arrive while the script does something else."""
        me = threading.get_ident()
        while True:
            with self._state:
                while not self._closed and (self._owner is not None or self._claims):
                    self._sleep()
                if self._closed:
                    return
                self._owner = me
            try:
                self._read(None, None)
            finally:
                self._release_socket()

    def _run_events(self):
        """Runs event streams and NAOqi callbacks in order, and acknowledges them."""
        unacked, generation = 0, self._generation
        while True:
            item = self._inbox.get()
            if item is None:
                return
            if item[0] != generation:  # a new connection: the old one's count is moot
                unacked, generation = 0, item[0]
            message = item[1]
            try:
                if message[0] == EVENT:
                    self._deliver_event(message[1], message[2], message[3] if len(message) > 3 else 0)
                else:
                    self._deliver_callback(message[1], message[2], message[3], message[4])
            except Exception:  # one subscriber's bug must not stop the others
                log.exception("handling %s %s failed", "event" if message[0] == EVENT else "callback", message[1:3])
            unacked += 1
            if unacked >= ACK_EVERY or self._inbox.empty():
                self._post(_encode([ACK, unacked]), generation)
                unacked = 0

    def _deliver_event(self, name, value, lost):
        handlers = self._streams.get(name, ())
        if lost:
            told = False
            for _, on_lost in handlers:
                if on_lost is not None:
                    on_lost(name, lost)
                    told = True
            if not told:
                log.warning("the broker dropped %d %s events for this client (it was too slow to take them)", lost, name)
        for callback, _ in handlers:
            callback(name, value)

    def _deliver_callback(self, module, method, arguments, lost):
        served = self._modules.get(module)
        if served is None:
            log.warning("callback %s.%s for a module this client does not serve", module, method)
            return
        event = arguments[0]
        if lost:
            events_lost = getattr(served.instance, "eventsLost", None)
            if callable(events_lost):
                events_lost(event, lost)
            else:
                log.warning("the broker dropped %d %s callbacks to %s (it was too slow to take them)", lost, event, module)
        served.callback(method, arguments)

    def _keep_alive(self):
        """The liveness connection: heartbeats every second whatever user code does, and
        the watch on the broker (its TCP connection and its silence)."""
        socket = wire.dealer(self.url, self._credentials)
        own_monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        hello = _encode([HELLO, PROTOCOL_VERSION, self.name, self._session_id, ROLE_LIVENESS])
        main_monitor = getattr(self._wire, "monitor", None)  # libzmq's main connection only
        poller = zmq.Poller()
        for item in (socket, main_monitor, own_monitor, self._live_wake_read):
            if item is not None:
                poller.register(item, zmq.POLLIN)

        def send(frame):
            try:
                socket.send(frame, zmq.NOBLOCK)
            except zmq.Again:  # the broker is away: nothing here is worth queueing
                pass

        socket.connect(self.url)
        send(hello)
        hellos_unanswered = 1
        heard = last_sent = time.monotonic()
        silence_reported = False
        try:
            while not self._closed:
                wait = max(0.0, last_sent + HEARTBEAT_S - time.monotonic())
                for ready, _ in poller.poll(int(wait * 1000) + 1):
                    if ready is socket:
                        heard = time.monotonic()
                        silence_reported = False
                        frame = socket.recv()
                        try:
                            message = _decode(frame)
                            message[0]
                        except Exception as error:  # this thread must go on whatever comes
                            log.warning("unreadable frame from %s: %s", self.url, error)
                            continue
                        if message[0] == WELCOME:
                            if hellos_unanswered:
                                hellos_unanswered -= 1
                            else:  # the broker forgot this connection: tell it again
                                send(hello)
                                hellos_unanswered += 1
                        elif message[0] == ERROR:
                            log.warning("the broker at %s refused the liveness connection: %s", self.url, message[2])
                    elif ready is main_monitor:
                        event = recv_monitor_message(main_monitor)["event"]
                        if event == zmq.EVENT_DISCONNECTED:
                            self._connection_lost("connection to the broker at %s lost" % self.url)
                        elif event in HANDSHAKE_FAILED:
                            log.warning("the broker at %s refused the connection: %s", self.url, HANDSHAKE_FAILED[event])
                    elif ready is own_monitor:
                        if recv_monitor_message(own_monitor)["event"] == zmq.EVENT_DISCONNECTED:
                            send(hello)  # the first thing the next connection says
                            hellos_unanswered += 1
                            if main_monitor is None:
                                self._look_at_main()
                    else:
                        wire.drain(self._live_wake_read)
                now = time.monotonic()
                if now - last_sent >= HEARTBEAT_S:
                    send(HEARTBEAT_FRAME)
                    last_sent = now
                if now - heard >= BROKER_SILENCE_S:
                    # Fail what waits on the broker; restore nothing yet: if it was only slow it
                    # still knows us, and if it forgot us its next Welcome will say so.
                    reason = "no word from the broker at %s for %d s" % (self.url, now - heard)
                    if not silence_reported:
                        log.warning("%s", reason)
                        silence_reported = True
                    with self._state:
                        self._fail_pending(ConnectionLost, reason)
        finally:
            # Monitor off before its reader closes: else libzmq's I/O thread can block for
            # good on an event nobody takes, and with it every socket of the process.
            socket.disable_monitor()
            own_monitor.close()
            socket.close()

    def _look_at_main(self):
        """The liveness connection dropped, so the plain main connection likely did too: when
        no thread reads it now (none would notice), read what it has, its end included."""
        with self._lock:
            if self._owner is not None or self._claims or self._closed:
                return
            self._owner = threading.get_ident()
        try:
            # Its end may come a moment after the liveness connection's: wait for it a little,
            # unless a caller wants the socket.
            deadline = time.monotonic() + MAIN_END_S
            while self._wire.connected and not self._claims:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if self._wire.wait(int(left * 1000) + 1):
                    self._receive_and_dispatch()
        except Exception as error:  # this thread must go on whatever comes
            log.warning("while reading the main connection of %s: %s", self.url, error)
        finally:
            with self._lock:  # the chores (opening the connection again) are the next owner's
                self._owner = None
                self._state.notify_all()

    def _connection_lost(self, reason):
        """The TCP connection dropped, so the broker forgot it: fail what is under way, and
        have the socket's next owner say Hello again; its Welcome then triggers the restore."""
        with self._state:
            self._fail_pending(ConnectionLost, reason)
            self._generation += 1
            self._hello_due = True
            self._restore_due = True
            self._chores = True
        _wake(self._wake_write)

    def _restore(self):
        while True:
            with self._state:
                modules = [(name, served.infos) for name, served in self._modules.items()]
                streams = list(self._streams)
                callbacks = list(self._callbacks.values())
            for name, methods in modules:
                self._restore_one([REGISTER, name, methods], "register %s" % name)
            for event in streams:
                self._restore_one([SUBSCRIBE, event], "subscribe %s" % event)
            for items in callbacks:
                self._restore_one(list(items), "subscribe %s to %s" % (items[2], items[1]))
            log.info(
                "restored %d modules, %d event streams, %d ALMemory callbacks at %s",
                len(modules), len(streams), len(callbacks), self.url,
            )
            with self._state:
                if not self._restore_due or self._closed:
                    self._restore_thread = None
                    return
                self._restore_due = False

    def _restore_one(self, items, label):
        try:
            self._request(items, label, None)
        except NaobrokerError as error:
            log.warning("could not restore %s: %s", label, error)

    # -- serving modules

    def _serve(self, generation, kind, request_id, module, method, args):
        """A call or post to one of our modules, on a thread of its own."""
        served = self._modules.get(module)
        exiting = False
        try:
            if served is None:
                raise NotFound("no module named %s in this process" % module)
            if kind == POST:
                result = served.post(method, args)
            else:
                result = served.call(method, args)
                exiting = method == "exit"
            frame = _encode([REPLY, request_id, result])
        except Exception as error:  # the caller gets the message, the module goes on
            message = "%s.%s: %s" % (module, method, failure_text(error))
            frame = _encode(error_frame(request_id, message, error))
        self._post(frame, generation)
        if exiting:
            # After the reply: unregistering fails the calls under way, exit's own too.
            try:
                self.unregister_module(module)
            except NaobrokerError as error:
                log.warning("%s.exit: %s", module, error)


class Proxy:
    """Calls one module: `Proxy(session, "ALMemory").getData("key")`. `timeout` (seconds)
    applies to every call of this proxy; a call's own `_timeout=` keyword overrides it."""

    def __init__(self, session, module, timeout=_UNSET):
        self._session = session
        self._module = module
        self._timeout = timeout
        self.post = _Post(session, module, timeout)

    def __getattr__(self, method):
        if method.startswith("__"):
            raise AttributeError(method)
        session, module, default = self._session, self._module, self._timeout

        def call(*args, _timeout=default):
            return session.call(module, method, *args, timeout=_timeout)

        call.__name__ = method
        return call


class _Post:
    def __init__(self, session, module, timeout):
        self._session = session
        self._module = module
        self._timeout = timeout

    def __getattr__(self, method):
        session, module, default = self._session, self._module, self._timeout

        def post(*args, _timeout=default):
            return session.post(module, method, *args, timeout=_timeout)

        return post
