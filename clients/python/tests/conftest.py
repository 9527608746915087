import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.dirname(HERE)
REPO = os.path.abspath(os.path.join(CLIENT, "..", ".."))
# The client under test is this tree's, not an installed copy; scripts run by the tests too.
sys.path.insert(0, CLIENT)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [CLIENT, os.environ.get("PYTHONPATH")]))

from naobroker import NaobrokerError, Session  # noqa: E402


def broker_binary():
    path = os.environ.get("NAOBROKER_BIN") or os.path.join(REPO, "target", "debug", "naobroker")
    if not os.path.exists(path):
        pytest.fail("no naobroker binary at %s: build it (cargo build -p naobroker) or set NAOBROKER_BIN" % path)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, what, seconds=20):
    """Poll `condition` until it returns something true; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail("%s: not within %d s" % (what, seconds))
        time.sleep(0.05)


class Broker:
    """The real naobroker, manual clock, DCM time 0 at start. `extra_config` is appended
    to the [broker] table; it listens on `url` alone (a free loopback port by default) and
    runs in `cwd` (this process's directory by default)."""

    def __init__(self, extra_config="", url=None, cwd=None):
        self.url = url or "tcp://127.0.0.1:%d" % free_port()
        self.cwd = cwd
        self.dir = tempfile.mkdtemp(prefix="naobroker-py-")
        self.config = os.path.join(self.dir, "broker.toml")
        with open(self.config, "w") as f:
            f.write(
                '[broker]\nlisten = ["%s"]\n%s\n[dcm]\nclock = "manual"\npriority = 0\nstart_time_ms = 0\n'
                % (self.url, extra_config)
            )
        self.log = open(os.path.join(self.dir, "broker.log"), "w")
        self.process = None
        self.session = None
        self.start()

    def start(self, **session_options):
        self.process = subprocess.Popen(
            [broker_binary(), "--config", self.config], stderr=self.log, cwd=self.cwd
        )
        try:
            self.session = self.connect("pytest", **session_options)
        except BaseException:
            self.process.kill()
            self.process.wait()
            raise

    def connect(self, name, **session_options):
        """A new session, once the broker answers."""
        deadline = time.monotonic() + 20
        while True:
            try:
                return Session(self.url, name, **session_options)
            except NaobrokerError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.05)

    def restart(self):
        """Kill the broker (no goodbye to anyone) and start a new one on the same port."""
        self.session.close()
        self.process.kill()
        self.process.wait()
        self.start()

    def step(self, n):
        return self.session.call("DCM", "step", n)

    def led(self, colour):
        return self.session.call("ALMemory", "getData", "Device/SubDeviceList/ChestBoard/Led/%s/Actuator/Value" % colour)

    def stop(self):
        self.session.close()
        self.process.kill()
        self.process.wait()
        self.log.close()


@pytest.fixture
def broker():
    b = Broker()
    yield b
    b.stop()


@pytest.fixture(autouse=True)
def no_shared_sessions_left():
    """ALProxy and ALModule share one session per URL for the process: close them after
    each test, so that none outlives its broker (and reconnects to another test's)."""
    yield
    Session.close_shared()
