"""The client side of `naobench qi`: one `qi` 3.1.5 process calling libqi's server and naobroker's.

    python3 crates/bench/qi_client.py --naobroker tcp://127.0.0.1:PORT [--calls 5000] [--block 100]

Starts libqi's own C++ server (a `qi.Session` that `listenStandalone`s on a free loopback port)
in another Python process, connects one `qi.Session` to it and one to naobroker's qi listener
(already running at --naobroker, with the float key below inserted here), and times sequential
calls of each target in turn, `--block` calls at a time, the order reversed every round (ABC CBA
ABC ...), so that what the shared machine does meanwhile falls on every target alike. The first
tenth of the calls of each target are a warm-up, interleaved the same way and not kept.

The last line of stdout is `naobench-qi ` and a JSON object: each target's name and its
latencies in µs. naobench prints the table (libqi logs to stdout as well: hence the marker).
"""

import argparse
import json
import socket
import subprocess
import sys
import time

import qi

KEY = "Bench/Float"
MARKER = "naobench-qi "

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
        targets = [
            ("libqi machineId", their_directory.machineId),
            ("naobroker machineId", our_directory.machineId),
            ("naobroker getData", lambda: memory.getData(KEY)),
        ]
        run_blocks(targets, max(args.calls // 10, 1), args.block, None)
        samples = {name: [] for name, _ in targets}
        run_blocks(targets, args.calls, args.block, samples)
        ours.close()
        theirs.close()
    finally:
        server.kill()
        server.wait()
    print(MARKER + json.dumps({"block": args.block, "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
