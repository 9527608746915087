import os
import socket
import subprocess
import tempfile
import time

import pytest

from naobroker import NaobrokerError, Session

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def broker_binary():
    path = os.environ.get("NAOBROKER_BIN") or os.path.join(REPO, "target", "debug", "naobroker")
    if not os.path.exists(path):
        pytest.fail("no naobroker binary at %s: build it (cargo build -p naobroker) or set NAOBROKER_BIN" % path)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """The real naobroker, manual clock, DCM time 0 at start."""

    def __init__(self):
        self.url = "tcp://127.0.0.1:%d" % free_port()
        self.dir = tempfile.mkdtemp(prefix="naobroker-py-")
        config = os.path.join(self.dir, "broker.toml")
        with open(config, "w") as f:
            f.write('[broker]\nlisten = ["%s"]\n[dcm]\nclock = "manual"\npriority = 0\nstart_time_ms = 0\n' % self.url)
        self.log = open(os.path.join(self.dir, "broker.log"), "w")
        self.process = subprocess.Popen([broker_binary(), "--config", config], stderr=self.log)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.session = Session(self.url, "pytest")
                break
            except NaobrokerError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.05)

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
