"""The client side of `naobench qi`: one `qi` 3.1.5 process calling libqi's server and naobroker's.

    python3 crates/bench/qi_client.py --naobroker tcp://127.0.0.1:PORT [--calls 5000] [--block 100]

Starts libqi's own C++ server (a `qi.Session` that `listenStandalone`s on a free loopback port)
in another Python process, connects one `qi.Session` to it and one to naobroker's qi listener
(already running at --naobroker, with the float key below inserted here), and times sequential
calls of each target in turn, `--block` calls at a time, the order reversed every round (ABCDE
EDCBA ...), so that what the shared machine does meanwhile falls on every target alike. The first
tenth of the calls of each target are a warm-up, interleaved the same way and not kept.

Beside the `qi` client, a bare socket client sends both servers the same machineId frame and
reads the reply (28-byte header, no libqi in the client): the servers' difference without the
cost of libqi's Python binding, which every `qi` row pays alike.

The last line of stdout is `naobench-qi ` and a JSON object: each target's name and its
latencies in µs. naobench prints the table (libqi logs to stdout as well: hence the marker).
"""

import argparse
import json
import socket
import struct
import subprocess
import sys
import time

import qi

KEY = "Bench/Float"
MARKER = "naobench-qi "

# libqi's header (libqi-wire.md A.1): magic, id, size, version, type, flags, service, object, action.
HEADER = struct.Struct("<IIIHBBIII")
MAGIC = 0x42ADDE42
CALL, REPLY, CAPABILITY = 1, 2, 6
# The ServiceDirectory is service 1, object 1; machineId is its action 108; authenticate is
# action 8 of service 0, object 0.
DIRECTORY, MACHINE_ID = 1, 108
AUTHENTICATE = 8
# The capabilities libqi 4 offers when it authenticates, each a dynamic bool (`b`).
CAPABILITIES = [
    ("ClientServerSocket", True),
    ("MessageFlags", True),
    ("MetaObjectCache", False),
    ("ObjectPtrUID", True),
    ("RelativeEndpointURI", True),
    ("RemoteCancelableCalls", True),
]

# libqi's server: the ServiceDirectory of a standalone session answers machineId in C++.
LIBQI_SERVER = """
import sys, time, qi
session = qi.Session()
session.listenStandalone(sys.argv[1])
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_libqi_server():
    url = "tcp://127.0.0.1:%d" % free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", LIBQI_SERVER, url],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    # libqi logs to stdout too: wait for our own line.
    while server.stdout.readline().strip() != "ready":
        if server.poll() is not None:
            raise RuntimeError("libqi's standalone server did not start")
    return server, url


def connect(url):
    session = qi.Session()
    session.connect(url)
    return session


def qi_string(text):
    data = text.encode()
    return struct.pack("<I", len(data)) + data


def capability_map():
    entries = b"".join(qi_string(name) + qi_string("b") + bytes([flag]) for name, flag in CAPABILITIES)
    return struct.pack("<I", len(CAPABILITIES)) + entries


class BareClient:
    """libqi's wire on a plain socket: authenticates, then calls and waits for the reply."""

    def __init__(self, url):
        host, port = url.split("://", 1)[1].rsplit(":", 1)
        self.socket = socket.create_connection((host, int(port)))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.next_id = 1
        self.call(0, 0, AUTHENTICATE, capability_map())

    def read_exactly(self, count):
        data = bytearray()
        while len(data) < count:
            chunk = self.socket.recv(count - len(data))
            if not chunk:
                raise RuntimeError("the server closed the connection")
            data += chunk
        return bytes(data)

    def call(self, service, obj, action, payload=b""):
        message_id = self.next_id
        self.next_id += 1
        header = HEADER.pack(MAGIC, message_id, len(payload), 0, CALL, 0, service, obj, action)
        self.socket.sendall(header + payload)
        while True:
            _, answered, size, _, kind, _, _, _, _ = HEADER.unpack(self.read_exactly(HEADER.size))
            body = self.read_exactly(size)
            # A server may send its capabilities unasked; anything else answers our call.
            if kind == CAPABILITY:
                continue
            if answered != message_id or kind != REPLY:
                raise RuntimeError("call %d answered by message %d of type %d" % (message_id, answered, kind))
            return body

    def machine_id(self):
        return self.call(DIRECTORY, DIRECTORY, MACHINE_ID)

    def close(self):
        self.socket.close()


def run_blocks(targets, calls, block, samples):
    """`calls` sequential calls of every target in blocks of `block`, ABC CBA ...; with
    `samples`, each call's latency in µs appended to its target's list."""
    done = 0
    round_number = 0
    while done < calls:
        count = min(block, calls - done)
        order = targets if round_number % 2 == 0 else targets[::-1]
        for name, call in order:
            kept = samples[name] if samples is not None else None
            for _ in range(count):
                started = time.perf_counter_ns()
                call()
                if kept is not None:
                    kept.append((time.perf_counter_ns() - started) / 1000.0)
        done += count
        round_number += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--naobroker", required=True, help="naobroker's qi listener")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--block", type=int, default=100)
    args = parser.parse_args()

    server, libqi_url = start_libqi_server()
    try:
        theirs = connect(libqi_url)
        ours = connect(args.naobroker)
        their_directory = theirs.service("ServiceDirectory")
        our_directory = ours.service("ServiceDirectory")
        memory = ours.service("ALMemory")
        memory.insertData(KEY, 0.5)
        bare_theirs = BareClient(libqi_url)
        bare_ours = BareClient(args.naobroker)
        targets = [
            ("libqi machineId", their_directory.machineId),
            ("naobroker machineId", our_directory.machineId),
            ("naobroker getData", lambda: memory.getData(KEY)),
            ("bare libqi machineId", bare_theirs.machine_id),
            ("bare naobroker machineId", bare_ours.machine_id),
        ]
        run_blocks(targets, max(args.calls // 10, 1), args.block, None)
        samples = {name: [] for name, _ in targets}
        run_blocks(targets, args.calls, args.block, samples)
        bare_ours.close()
        bare_theirs.close()
        ours.close()
        theirs.close()
    finally:
        server.kill()
        server.wait()
    print(MARKER + json.dumps({"block": args.block, "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
