"""The main connection's transports: ZMTP on a plain socket, or libzmq for CURVE.

A call's latency is mostly thread wake-ups. Through libzmq a call wakes libzmq's I/O thread
to write the request, wakes it again when the reply arrives and then wakes the caller: three
wake-ups in this process per call. ``PlainDealer`` speaks ZMTP 3.0 with NULL security itself
(rfc.zeromq.org/spec/23: a 64-byte greeting, a READY command naming the socket type, then
frames of one flags byte and a length), so the caller writes its request and reads its reply
with one system call each, and only the caller wakes. It serves tcp:// and ipc:// (with
ipc://@name, Linux's abstract sockets) without keys. CURVE (encryption and authentication)
stays with libzmq: ``ZmqDealer``.

Both give the session one shape: ``wait`` polls the connection and the session's wake pipe,
``receive`` returns the frames that arrived, ``send`` writes one (``send_nowait`` drops it
when the connection cannot take it now). Only the thread owning the main socket calls them.
A ``PlainDealer`` that finds its connection gone raises ``Lost``; the session then calls
``drop`` and, to say Hello again, ``open``. libzmq reconnects by itself: ``ZmqDealer``
reports a lost connection through its monitor, read by the liveness thread.
"""

import os
import select
import socket
import struct
import time

import zmq
from zmq.utils.monitor import recv_monitor_message

# The ZMTP 3.0 greeting of a client with NULL security: signature, version 3.0, mechanism.
GREETING = b"\xff" + bytes(8) + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00") + bytes(32)
_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04  # ZMTP frame flags
_READ_BYTES = 65536
# The longest frame this client takes, as the Rust client (the protocol's default
# max_frame_bytes): a frame's length is declared before it arrives, and a peer declaring
# more is cut off instead of filling this process's memory.
MAX_FRAME_BYTES = 16 * 1024 * 1024
# The longest command the handshake takes: a READY with its socket type and identity.
MAX_COMMAND_BYTES = 4096
# How long a write may wait for a broker that does not read, before the connection is
# taken for lost: the broker's own silence limit, as the liveness thread's.
SEND_PATIENCE_S = 3.0
HANDSHAKE_FAILED = {
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "the handshake failed (with CURVE: is the server key the broker's?)",
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "security mechanism or protocol mismatch",
    zmq.EVENT_HANDSHAKE_FAILED_AUTH: "the broker refused this client's key",
}


class Lost(Exception):
    """The plain connection is gone (the broker closed it, or it broke)."""


class Refused(Exception):
    """The peer is not a broker this transport can talk to: its reason in words."""


def drain(fd):
    """Empty a non-blocking wake-up pipe."""
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _property(name, value):
    return bytes([len(name)]) + name + struct.pack(">I", len(value)) + value


def _frame(body, flags=0):
    if len(body) < 256:
        return bytes([flags, len(body)]) + body
    return bytes([flags | _LONG]) + struct.pack(">Q", len(body)) + body


# The header of each short message frame, made once.
_SHORT_HEADERS = [bytes([0, length]) for length in range(256)]


READY = _frame(b"\x05READY" + _property(b"Socket-Type", b"DEALER"), _COMMAND)


def plain_address(url):
    """("ipc", path) or ("tcp", (host, port)) for a URL this transport serves, else None.
    ``ipc://@name`` is, as in libzmq and the broker, the Linux abstract socket "name" (no
    file): Python's address for it begins with a NUL byte."""
    if url.startswith("ipc://"):
        path = url[len("ipc://"):]
        if path.startswith("@"):
            return "ipc", "\0" + path[1:]
        return "ipc", path
    if url.startswith("tcp://"):
        host, _, port = url[len("tcp://"):].rpartition(":")
        if host and port.isdigit():
            return "tcp", (host.strip("[]"), int(port))
    return None


class PlainDealer:
    """A ZeroMQ DEALER's wire on a plain socket (NULL security)."""

    def __init__(self, url, wake_fd):
        self._address = plain_address(url)
        self._wake_fd = wake_fd
        self._socket = None
        self.connected = False
        self._buffer = bytearray()
        # Whole messages that came with the handshake's last read, for the first `receive`.
        self._early = []
        self._poll = select.poll()
        self._poll.register(wake_fd, select.POLLIN)

    def open(self, timeout):
        """Connect and run ZMTP's handshake within `timeout` seconds. Raises OSError when
        nothing answers at the URL, Refused when what answers is no NULL-security broker.
        `timeout` bounds the whole handshake, not each read: a peer sending a byte at a time
        cannot hold the thread that owns the session's socket."""
        deadline = time.monotonic() + timeout
        scheme, address = self._address
        if scheme == "ipc":
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                connection.settimeout(timeout)
                connection.connect(address)
            except BaseException:
                connection.close()
                raise
        else:
            connection = socket.create_connection(address, timeout)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            connection.sendall(GREETING + READY)
            received = bytearray()

            def read_at_least(count):
                while len(received) < count:
                    try:
                        connection.settimeout(max(deadline - time.monotonic(), 1e-3))
                        chunk = connection.recv(_READ_BYTES)
                    except socket.timeout:
                        raise socket.timeout("no ZeroMQ handshake within %g s" % timeout) from None
                    if not chunk:
                        raise Refused("it closed the connection during ZeroMQ's handshake")
                    received.extend(chunk)

            read_at_least(64)
            if received[0] != 0xFF or received[9] & 1 != 1 or received[10] < 3:
                raise Refused("the peer does not speak ZeroMQ 3")
            if bytes(received[12:32]).rstrip(b"\x00") != b"NULL":
                raise Refused("security mechanism or protocol mismatch")
            del received[:64]
            while True:
                try:
                    commands = self._parse(received, commands=True, limit=MAX_COMMAND_BYTES)
                except Lost as error:
                    raise Refused(str(error)) from None
                if commands:
                    break
                read_at_least(len(received) + 1)
            if not commands[0].startswith(b"\x05READY"):
                raise Refused("the broker's first command was not READY")
            self._buffer = received
            try:
                self._early = self._parse(received)
            except Lost as error:
                raise Refused(str(error)) from None
            # Reads come after a poll said there is something; a write to a broker that
            # stopped reading gives up after this long (socket.timeout, an OSError: Lost).
            connection.settimeout(SEND_PATIENCE_S)
        except BaseException:
            self._buffer = bytearray()
            connection.close()
            raise
        self._socket = connection
        self.connected = True
        self._poll.register(connection.fileno(), select.POLLIN)

    def _parse(self, buffer, commands=False, limit=MAX_FRAME_BYTES):
        """Takes the complete frames at the start of `buffer` out of it: the messages' (or,
        with `commands`, the commands') bodies. Raises Lost for a frame declared longer than
        `limit` and for a message of several parts, which the broker never sends."""
        frames, start, end = [], 0, len(buffer)
        while end - start >= 2:
            flags = buffer[start]
            if flags & _MORE:
                raise Lost("the broker sent a message of several parts")
            if commands and not flags & _COMMAND:
                break  # the handshake is over: what follows is for `receive`
            if flags & _LONG:
                if end - start < 9:
                    break
                (length,) = struct.unpack_from(">Q", buffer, start + 1)
                header = 9
                if length > limit:
                    raise Lost("the broker declared a frame of %d bytes, over this client's %d" % (length, limit))
            else:
                length, header = buffer[start + 1], 2
            if end - start < header + length:
                break
            if bool(flags & _COMMAND) == commands:
                frames.append(bytes(buffer[start + header:start + header + length]))
            start += header + length
        del buffer[:start]
        return frames

    def wait(self, timeout_ms):
        """Wait for frames or a wake-up; True when the connection has something to read."""
        if self._early:
            return True
        ready = self._poll.poll(timeout_ms)
        if len(ready) == 1 and ready[0][0] != self._wake_fd:  # the usual case, in short
            return True
        readable = False
        for fd, _ in ready:
            if fd == self._wake_fd:
                drain(fd)
            else:
                readable = True
        return readable

    def greet_wait(self, timeout_ms):
        """`wait` while the first Welcome is awaited: (readable, None); the handshake's
        refusals were raised by `open`."""
        return self.wait(timeout_ms), None

    def receive(self):
        """The frames that arrived (none when a frame is still incomplete)."""
        if self._early:
            early, self._early = self._early, []
            return early
        try:
            chunk = self._socket.recv(_READ_BYTES)
        except BlockingIOError:
            return []
        except OSError as error:
            raise Lost(str(error)) from error
        if not chunk:
            raise Lost("the broker closed the connection")
        if not self._buffer and len(chunk) >= 2 and chunk[0] == 0 and len(chunk) == chunk[1] + 2:
            return [chunk[2:]]  # the usual case: one short message, whole
        buffer = self._buffer
        buffer += chunk
        return self._parse(buffer)

    def send(self, frame):
        self._send_all(_SHORT_HEADERS[len(frame)] + frame if len(frame) < 256 else _frame(frame))

    def send_nowait(self, frame):
        """Sends `frame` unless the connection cannot take it at once (it is then dropped)."""
        data = _frame(frame)
        try:
            sent = self._socket.send(data, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError as error:
            raise Lost(str(error)) from error
        if sent < len(data):  # a frame is never cut: the rest goes out, waiting if need be
            self._send_all(data[sent:])

    def _send_all(self, data):
        try:
            self._socket.sendall(data)
        except OSError as error:
            raise Lost(str(error)) from error

    def drop(self):
        """Close a connection that is gone; `open` makes the next one."""
        if self._socket is not None:
            self._poll.unregister(self._socket.fileno())
            self._socket.close()
            self._socket = None
            self.connected = False
        self._buffer = bytearray()
        self._early = []

    def close(self, last_frame=None):
        """Send `last_frame` if the connection takes it at once, then close."""
        if self._socket is not None and last_frame is not None:
            try:
                self.send_nowait(last_frame)
            except Lost:
                pass
        self.drop()


class ZmqDealer:
    """A libzmq DEALER (pyzmq), for CURVE: libzmq reconnects by itself, and its monitor
    tells the liveness thread when the connection drops or the handshake fails."""

    def __init__(self, url, wake_fd, credentials):
        self.url = url
        self._wake_fd = wake_fd
        self.socket = dealer(url, credentials)
        self.monitor = self.socket.get_monitor_socket(
            zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
        )
        self._poller = zmq.Poller()
        self._poller.register(self.socket, zmq.POLLIN)
        self._poller.register(wake_fd, zmq.POLLIN)

    connected = True

    def open(self, timeout):
        self.socket.connect(self.url)

    def wait(self, timeout_ms):
        readable = False
        for ready, _ in self._poller.poll(timeout_ms):
            if ready is self.socket:
                readable = True
            else:
                drain(self._wake_fd)
        return readable

    def greet_wait(self, timeout_ms):
        """(readable, why the broker refused the connection or None), watching the monitor
        too: no thread reads it yet."""
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self.monitor, zmq.POLLIN)
        ready = dict(poller.poll(timeout_ms))
        refusal = None
        if self.monitor in ready:
            refusal = HANDSHAKE_FAILED.get(recv_monitor_message(self.monitor)["event"])
        return self.socket in ready, refusal

    def receive(self):
        try:
            return [self.socket.recv(zmq.NOBLOCK)]
        except zmq.Again:
            return []

    def send(self, frame):
        self.socket.send(frame)

    def send_nowait(self, frame):
        try:
            self.socket.send(frame, zmq.NOBLOCK)
        except zmq.Again:  # the broker is away: nothing here is worth queueing
            pass

    def drop(self):
        pass

    def close(self, last_frame=None):
        # Monitor off before its reader closes: else libzmq's I/O thread can block for good
        # on an event nobody takes, and with it every socket of the process.
        self.socket.disable_monitor()
        self.monitor.close()
        if last_frame is not None:
            try:
                # The answer is not awaited: the linger below lets the frame out.
                self.socket.send(last_frame, zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
        self.socket.close(linger=100)


def dealer(url, credentials):
    """A libzmq DEALER socket, with CURVE when `credentials` (server's public, client's
    public, client's secret key) are given."""
    dealer_socket = zmq.Context.instance().socket(zmq.DEALER)
    dealer_socket.setsockopt(zmq.LINGER, 0)
    if credentials is not None:
        server_key, public_key, secret_key = credentials
        dealer_socket.setsockopt(zmq.CURVE_SERVERKEY, server_key)
        dealer_socket.setsockopt(zmq.CURVE_PUBLICKEY, public_key)
        dealer_socket.setsockopt(zmq.CURVE_SECRETKEY, secret_key)
    return dealer_socket
