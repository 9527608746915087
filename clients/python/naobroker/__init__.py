"""naobroker client: calls, posts, events and modules over ZeroMQ + MessagePack.

Written from docs/protocol.md. A call runs on the caller's thread (send, then read
until its reply): no hop to another thread. A background thread starts only when the
session serves a module or has subscriptions, to take calls and events while the
script does something else.
"""

import itertools
import os
import threading
import time

import msgpack
import zmq

PROTOCOL_VERSION = 1
HELLO, WELCOME, CALL, POST, REPLY, ERROR, EVENT = 0, 1, 2, 3, 4, 5, 6
REGISTER, UNREGISTER, SUBSCRIBE, UNSUBSCRIBE, HEARTBEAT, ACK = 7, 8, 9, 10, 11, 12
ACK_EVERY = 256
HEARTBEAT_S = 1.0


class NaobrokerError(RuntimeError):
    """An error reply from the broker or a module; the message names the problem."""


def _encode(items):
    return msgpack.packb(items, use_bin_type=True)


def _decode(frame):
    return msgpack.unpackb(frame, raw=False, strict_map_key=False)


class Session:
    """One connection to a broker."""

    _shared = {}
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls, url):
        """One session per broker URL for the whole process (what ALProxy uses)."""
        with cls._shared_lock:
            session = cls._shared.get(url)
            if session is None or session._closed:
                session = cls._shared[url] = Session(url)
            return session

    def __init__(self, url, name="python", timeout=10.0):
        self.url = url
        self.timeout = timeout
        self._socket = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(url)
        self._lock = threading.RLock()
        self._waiting = 0
        self._ids = itertools.count(1)
        self._replies = {}
        self._modules = {}
        self._subscriptions = {}
        self._events_unacked = 0
        self._closed = False
        self._thread = None
        self._wake_read, self._wake_write = os.pipe()
        self._last_sent = time.monotonic()
        self._send([HELLO, PROTOCOL_VERSION, name])
        if not self._socket.poll(2000):
            self.close()
            raise NaobrokerError("cannot reach a broker at %s" % url)
        kind = _decode(self._socket.recv())
        if kind[0] == ERROR:
            raise NaobrokerError(kind[2])

    # -- socket ownership: whoever holds the lock reads and dispatches everything.

    def _acquire(self):
        self._waiting += 1
        if self._thread is not None:
            os.write(self._wake_write, b"x")
        self._lock.acquire()
        self._waiting -= 1

    def _send(self, items):
        self._socket.send(_encode(items))
        self._last_sent = time.monotonic()

    def _dispatch(self, message):
        kind = message[0]
        if kind in (REPLY, ERROR):
            self._replies[message[1]] = message
        elif kind == EVENT:
            self._events_unacked += 1
            if self._events_unacked >= ACK_EVERY:
                self._send([ACK, self._events_unacked])
                self._events_unacked = 0
            for callback in list(self._subscriptions.get(message[1], ())):
                callback(message[1], message[2])
        elif kind in (CALL, POST):
            self._serve(kind, message[1], message[2], message[3], message[4])
        elif kind == WELCOME:
            self._restore()

    def _read_until(self, request_id, timeout):
        deadline = time.monotonic() + timeout
        while request_id not in self._replies:
            left = deadline - time.monotonic()
            if left <= 0 or not self._socket.poll(int(left * 1000) + 1):
                if request_id not in self._replies:
                    raise NaobrokerError("timed out after %g s" % timeout)
                break
            while self._socket.poll(0):
                self._dispatch(_decode(self._socket.recv()))
        return self._replies.pop(request_id)

    def _request(self, items_without_id, timeout=None):
        request_id = next(self._ids)
        items = list(items_without_id)
        items.insert(1, request_id)
        self._acquire()
        try:
            self._send(items)
            reply = self._read_until(request_id, timeout or self.timeout)
        finally:
            self._lock.release()
        if reply[0] == ERROR:
            raise NaobrokerError(reply[2])
        return reply[2]

    # -- the API

    def call(self, module, method, *args):
        """Call module.method(*args) and return its result."""
        return self._request([CALL, module, method, list(args)])

    def post(self, module, method, *args):
        """Start module.method(*args) as a task; returns its id."""
        return self._request([POST, module, method, list(args)])

    def subscribe(self, event, callback):
        """callback(name, value) on every event named `event`."""
        first = event not in self._subscriptions
        self._subscriptions.setdefault(event, []).append(callback)
        if first:
            self._request([SUBSCRIBE, event])
        self._start_thread()

    def register_module(self, name, instance):
        """Serve the public methods of `instance` as module `name`."""
        methods = [
            [attr, "(...)", (getattr(instance, attr).__doc__ or "").strip()]
            for attr in dir(instance)
            if not attr.startswith("_") and callable(getattr(instance, attr))
        ]
        self._modules[name] = (instance, methods)
        self._request([REGISTER, name, methods])
        self._start_thread()

    def close(self):
        self._closed = True
        if self._thread is not None:
            os.write(self._wake_write, b"x")
            self._thread.join(2)
        self._socket.close()

    # -- serving modules and the background thread

    def _restore(self):
        """The broker forgot us (restart, or silence): register and subscribe again."""
        for name, (_, methods) in self._modules.items():
            self._send([REGISTER, next(self._ids), name, methods])
        for event in self._subscriptions:
            self._send([SUBSCRIBE, next(self._ids), event])

    def _serve(self, kind, request_id, module, method, args):
        instance = self._modules.get(module, (None, None))[0]
        try:
            if instance is None:
                raise NaobrokerError("no module named %s in this process" % module)
            if method == "ping":
                result = True
            elif method == "getMethodList":
                result = [m[0] for m in self._modules[module][1]] + ["ping", "getMethodList"]
            else:
                target = getattr(instance, method, None)
                if method.startswith("_") or not callable(target):
                    raise NaobrokerError("%s.%s: no method named %s" % (module, method, method))
                result = target(*args)
                if kind == POST:
                    result = 0
            self._send([REPLY, request_id, result])
        except Exception as error:  # the caller gets the message, the module goes on
            self._send([ERROR, request_id, "%s.%s: %s" % (module, method, error)])

    def _start_thread(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="naobroker", daemon=True)
            self._thread.start()

    def _run(self):
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        poller.register(self._wake_read, zmq.POLLIN)
        while not self._closed:
            if self._waiting:
                time.sleep(0.0005)
                continue
            with self._lock:
                ready = dict(poller.poll(int(HEARTBEAT_S * 1000)))
                if self._wake_read in ready:
                    os.read(self._wake_read, 4096)
                while not self._closed and self._socket.poll(0):
                    self._dispatch(_decode(self._socket.recv()))
                if time.monotonic() - self._last_sent >= HEARTBEAT_S:
                    self._send([HEARTBEAT])


class Proxy:
    """Calls one module: `Proxy(session, "ALMemory").getData("key")`."""

    def __init__(self, session, module):
        self._session = session
        self._module = module
        self.post = _Post(session, module)

    def __getattr__(self, method):
        if method.startswith("__"):
            raise AttributeError(method)

        def call(*args):
            return self._session.call(self._module, method, *args)

        call.__name__ = method
        return call


class _Post:
    def __init__(self, session, module):
        self._session = session
        self._module = module

    def __getattr__(self, method):
        def post(*args):
            return self._session.post(self._module, method, *args)

        return post
