"""Hostile queries to one broker on Zenoh (tests/tests/zenoh_hostile.rs): huge and odd key
expressions and payloads get an error or nothing, never a crash; a message past the
session's size bound is not even read; calls past the bound of calls under way are answered
"busy". Argument: JSON {"robot": name, "endpoint": endpoint}. Prints "passed" at the end."""

import json
import sys

import zenoh


def session(endpoint):
    config = zenoh.Config()
    config.insert_json5("mode", '"client"')
    config.insert_json5("connect/endpoints", json.dumps([endpoint]))
    config.insert_json5("scouting/multicast/enabled", "false")
    return zenoh.open(config)


def replies(session_, selector, payload=None, timeout=5.0):
    ok, errors = {}, []
    for reply in session_.get(selector, payload=payload, timeout=timeout):
        if reply.ok is not None:
            ok[str(reply.ok.key_expr)] = reply.ok.payload.to_string()
        else:
            errors.append(reply.err.payload.to_string())
    return ok, errors


def main():
    setup = json.loads(sys.argv[1])
    robot, endpoint = setup["robot"], setup["endpoint"]
    tool = session(endpoint)
    memory, call = f"naobroker/{robot}/memory", f"naobroker/{robot}/call"

    # Huge and odd key expressions: nothing matches, nothing breaks.
    for selector in [memory + "/" + "/".join(["k"] * 20000), memory + "/" + "*/" * 5000 + "x", memory + "/**/a/**/b"]:
        assert replies(tool, selector) == ({}, []), selector[:80]
    got, errors = replies(tool, call + "/ALMemory")
    assert not got and "a call's key is naobroker/" in errors[0], errors
    # A wildcard is never a call: a sweep of the key space gets no error from the calls.
    assert replies(tool, call + "/ALMemory/*", payload="[]") == ({}, [])

    # Odd payloads: refused by name.
    get_data = call + "/ALMemory/getData"
    for payload, message in [
        ("not json", "the payload is the arguments as a JSON array"),
        ('{"key": 1}', "the payload is the arguments as a JSON array"),
        ('["' + "x" * 100_000 + '"]', "at most 65536"),
        ("[" * 200 + "]" * 200, "the payload is the arguments as a JSON array"),
        ("[" * 36 + '"deep"' + "]" * 36, "nested 36 levels deep, more than max_value_depth (32)"),
        ("[1, 2, 3]", "getData"),
    ]:
        got, errors = replies(tool, get_data, payload=payload)
        assert not got and len(errors) == 1 and message in errors[0], (payload[:40], errors)

    # A payload past 64 KiB is refused before it is queued, on a memory query too (which
    # has no use for one): the query queue holds small queries only.
    got, errors = replies(tool, memory + "/DCM/Time", payload="x" * 100_000)
    assert not got and "the payload takes 100000 bytes, at most 65536" in errors[0], errors

    # Past the session's message bound (256 KiB), the query is not read at all: no answer,
    # not even the refusal of an oversized payload that a smaller one gets; the get times out.
    oversized = replies(tool, get_data, payload="[" + " " * (300 << 10) + "]", timeout=3.0)
    assert oversized == ({}, ["Timeout"]), oversized

    # Calls under way are bounded: the 65th while 64 wait is answered "busy".
    waiting = [tool.get(call + "/Probe/sleep", payload="[30000]", timeout=60.0) for _ in range(64)]
    got, errors = replies(tool, call + "/Probe/sleep", payload="[1]")
    assert not got and "busy: 64 calls under way" in errors[0], errors
    tool.close()

    # The broker still answers a fresh tool (its reads: the 64 calls still hold their places).
    fresh = session(endpoint)
    got, errors = replies(fresh, memory + "/DCM/Time")
    assert list(got) == [memory + "/DCM/Time"] and not errors, (got, errors)
    fresh.close()
    del waiting
    print("passed", flush=True)


if __name__ == "__main__":
    main()
