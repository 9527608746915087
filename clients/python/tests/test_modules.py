"""Python modules are full NAOqi modules: the base methods with the Rust modules' shapes,
``post`` as a task with a real id, failures reported by ``wait``, ``exit``, and
``ALBroker.shutdown()`` freeing the module names at once."""

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from conftest import Broker, wait_for
from naobroker import NaobrokerError
from naobroker.tasks import MAX_RUNNING_TASKS, Tasks, TaskError
from naoqi import ALBroker, ALModule, ALProxy, stop_requested

BASE_METHODS = [
    "ping", "version", "getMethodList", "getMethodHelp", "getModuleHelp", "getUsage",
    "exit", "isRunning", "wait", "stop",
]


class Tool(ALModule):
    """Adds numbers and runs errands."""

    def __init__(self, name):
        self.released = threading.Event()
        self.started = threading.Event()
        ALModule.__init__(self, name)

    def add(self, a, b=1):
        """Adds two numbers."""
        return a + b

    def block(self):
        """Returns once the test releases it."""
        self.started.set()
        self.released.wait(60)
        return "released"

    def fail(self, message):
        """Raises with the message."""
        raise ValueError(message)

    def loopUntilStopped(self):
        """Runs until stop is asked."""
        self.started.set()
        while not stop_requested():
            self.released.wait(0.01)
        return "stopped"


def start_broker(broker, monkeypatch):
    monkeypatch.setenv("NAOBROKER_URL", broker.url)
    return ALBroker("pybroker", "0.0.0.0", 0, "127.0.0.1", 9559)


def test_every_base_method_answers_as_a_rust_modules_does(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    Tool("PyTool")
    caller = broker.session  # another client of the broker
    rust_list = caller.call("ALMemory", "getMethodList")
    python_list = caller.call("PyTool", "getMethodList")
    assert rust_list[:10] == BASE_METHODS
    assert python_list == BASE_METHODS + ["add", "block", "fail", "getName", "loopUntilStopped"]

    assert caller.call("PyTool", "ping") is True
    assert caller.call("PyTool", "version") == "0.1.0"
    assert caller.call("PyTool", "getModuleHelp") == "Adds numbers and runs errands."
    assert caller.call("PyTool", "getMethodHelp", "add") == ["add", "(a, b=1)", "Adds two numbers."]
    assert caller.call("PyTool", "getUsage", "add") == "add(a, b=1) — Adds two numbers."
    for base in ("ping", "getMethodHelp", "getUsage", "isRunning"):
        assert caller.call("PyTool", "getMethodHelp", base) == caller.call("ALMemory", "getMethodHelp", base)
    assert caller.call("PyTool", "isRunning", 1) is False
    assert caller.call("PyTool", "stop", 1) is False
    # The broker announces the same table.
    assert [m[0] for m in caller.call("ServiceDirectory", "methods", "PyTool")] == python_list

    # Argument errors read as the Rust SDK's.
    cases = (("ping", [1]), ("getUsage", []), ("getUsage", [1]), ("wait", [1]), ("isRunning", ["x"]),
             ("getMethodHelp", ["é" * 100]))
    for method, args in cases:
        with pytest.raises(NaobrokerError) as python_error:
            caller.call("PyTool", method, *args)
        with pytest.raises(NaobrokerError) as rust_error:
            caller.call("ALMemory", method, *args)
        assert str(python_error.value) == str(rust_error.value).replace("ALMemory.", "PyTool.", 1)
    with pytest.raises(NaobrokerError, match="^PyTool.getMethodHelp: no method named nope$"):
        caller.call("PyTool", "getMethodHelp", "nope")


def test_set_module_description_is_what_get_module_help_answers(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    tool = Tool("PyDescribed")
    tool.setModuleDescription("Described at run time.")
    assert broker.session.call("PyDescribed", "getModuleHelp") == "Described at run time."
    assert "setModuleDescription" not in broker.session.call("PyDescribed", "getMethodList")


def test_exit_unregisters_the_module_and_the_process_goes_on(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    Tool("PyLeaving")
    Tool("PyStaying")
    me = ALProxy("PyLeaving")  # the module's own process: only it may make it exit
    assert me.exit() is True
    wait_for(lambda: "PyLeaving" not in broker.session.call("ServiceDirectory", "modules"), "PyLeaving gone")
    assert ALProxy("PyStaying").add(2, 3) == 5
    assert ALProxy("ALMemory").ping() is True
    Tool("PyLeaving")  # the name is free again, in the same process
    assert broker.session.call("PyLeaving", "add", 1) == 2
    # exit from the script side, as NAOqi's ALModule.exit()
    staying = Tool("PyOther")
    staying.exit()
    assert "PyOther" not in broker.session.call("ServiceDirectory", "modules")


def test_post_runs_a_task_with_an_id_and_wait_isrunning_follow_it(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    tool = Tool("PyPosted")
    Tool("PyOtherTasks")
    caller = broker.session
    task = caller.post("PyPosted", "block")
    assert task == 1  # answered while the method is still blocked
    assert tool.started.wait(10)
    assert caller.call("PyPosted", "isRunning", task) is True
    assert caller.call("PyPosted", "wait", task, 50) is False  # it cannot end before release
    tool.released.set()
    assert caller.call("PyPosted", "wait", task, 0) is True
    assert caller.call("PyPosted", "isRunning", task) is False
    assert caller.call("PyPosted", "wait", task, 10) is True  # ended: at once
    assert caller.post("PyPosted", "add", 1, 2) == 2
    assert caller.post("PyOtherTasks", "add", 1, 2) == 1  # ids count per module
    with pytest.raises(NaobrokerError, match=r"^PyPosted.wait: no task 9 was posted \(the last id is 2\)$"):
        caller.call("PyPosted", "wait", 9, 0)
    # What cannot run is refused at once, without an id.
    with pytest.raises(NaobrokerError, match="^PyPosted.nope: no method named nope$"):
        caller.post("PyPosted", "nope")
    with pytest.raises(NaobrokerError, match="^PyPosted.ping: no method named ping$"):
        caller.post("PyPosted", "ping")
    with pytest.raises(NaobrokerError, match="^PyPosted.add: missing a required argument: 'a'$"):
        caller.post("PyPosted", "add")
    assert caller.post("PyPosted", "add", 5) == 3


def test_post_is_refused_while_64_tasks_run_and_works_again_once_one_ended(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    tool = Tool("PyBusy")
    caller = broker.session
    tasks = [caller.post("PyBusy", "block") for _ in range(MAX_RUNNING_TASKS)]
    assert tasks == list(range(1, MAX_RUNNING_TASKS + 1))
    refused = "^PyBusy.block: 64 posted tasks are already running in PyBusy: wait for one to end$"
    with pytest.raises(NaobrokerError, match=refused):
        caller.post("PyBusy", "block")
    assert caller.call("PyBusy", "isRunning", 64) is True
    tool.released.set()
    assert caller.call("PyBusy", "wait", 1, 0) is True
    assert caller.post("PyBusy", "add", 1, 2) == 65  # the refused post spent no id
    for task in tasks:
        assert caller.call("PyBusy", "wait", task, 0) is True


def test_a_task_whose_thread_cannot_start_is_not_left_running(monkeypatch):
    class NoTaskThread(threading.Thread):
        def start(self):
            if self.name.startswith("naobroker-task-"):
                raise RuntimeError("can't start new thread")
            super().start()

    tasks = Tasks("PyNoThreads")
    monkeypatch.setattr(threading, "Thread", NoTaskThread)
    failed = "^task 1 \\(PyNoThreads.add\\) failed: its thread could not start: can't start new thread$"
    with pytest.raises(TaskError, match=failed):
        tasks.start("PyNoThreads.add", lambda: None, ())
    assert tasks.is_running(1) is False
    with pytest.raises(TaskError, match=failed):
        tasks.wait(1, 0)  # answers at once instead of waiting forever
    monkeypatch.undo()
    task = tasks.start("PyNoThreads.add", lambda: None, ())
    assert task == 2
    assert tasks.wait(task, 0) is True


def test_stop_asks_a_running_task_and_the_method_sees_it(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    tool = Tool("PyStoppable")
    caller = broker.session
    task = caller.post("PyStoppable", "loopUntilStopped")
    assert tool.started.wait(10)
    assert caller.call("PyStoppable", "isRunning", task) is True
    assert caller.call("PyStoppable", "stop", task) is True
    assert caller.call("PyStoppable", "wait", task, 0) is True
    assert caller.call("PyStoppable", "isRunning", task) is False
    assert caller.call("PyStoppable", "stop", task) is False
    assert stop_requested() is False  # outside a task


def test_a_failing_posted_task_is_reported_by_wait_and_logged(broker, monkeypatch, caplog):
    start_broker(broker, monkeypatch)
    Tool("PyFailing")
    caller = broker.session
    caplog.set_level(logging.WARNING, logger="naobroker")
    task = caller.post("PyFailing", "fail", "boom")
    expected = "^PyFailing.wait: task 1 \\(PyFailing.fail\\) failed: boom$"
    with pytest.raises(NaobrokerError, match=expected):
        caller.call("PyFailing", "wait", task, 0)
    assert caller.call("PyFailing", "isRunning", task) is False
    with pytest.raises(NaobrokerError, match=expected):  # asked again once it ended
        caller.call("PyFailing", "wait", task, 0)
    assert "posted task 1 (PyFailing.fail) failed: boom" in caplog.text
    # The last 64 failures are kept: a 65th forgets the oldest.
    tasks = [caller.post("PyFailing", "fail", "again %d" % n) for n in range(64)]
    assert tasks == list(range(2, 66))
    for task in tasks:
        with pytest.raises(NaobrokerError, match="failed: again"):
            caller.call("PyFailing", "wait", task, 0)
    assert caller.call("PyFailing", "wait", 1, 0) is True


def test_shutdown_frees_the_module_names_at_once(broker, monkeypatch):
    python_broker = start_broker(broker, monkeypatch)
    Tool("PyRerun")
    memory = ALProxy("ALMemory")
    memory.subscribeToEvent("Py/Rerun", "PyRerun", "add")
    python_broker.shutdown()
    # No waiting: the name and its callback are gone once shutdown returns.
    assert "PyRerun" not in broker.session.call("ServiceDirectory", "modules")
    assert broker.session.call("ALMemory", "getSubscribers", "Py/Rerun") == []
    python_broker = start_broker(broker, monkeypatch)
    Tool("PyRerun")
    assert broker.session.call("PyRerun", "add", 2) == 3
    python_broker.shutdown()


def test_naobroker_url_wins_over_the_address_an_albroker_gave(broker, monkeypatch):
    """An address-less ALProxy goes where NAOBROKER_URL says, even after an ALBroker of this
    process named another broker."""
    start_broker(broker, monkeypatch)
    other = Broker()
    try:
        monkeypatch.setenv("NAOBROKER_URL", other.url)
        ALProxy("ALMemory").insertData("Py/Where", "other")
        assert other.session.call("ALMemory", "getData", "Py/Where") == "other"
    finally:
        other.stop()


SCRIPT = textwrap.dedent('''
    import sys
    from naoqi import ALBroker, ALModule, ALProxy

    class Rerun(ALModule):
        def hello(self):
            return "hello"

    broker = ALBroker("script", "0.0.0.0", 0, "127.0.0.1", 9559)
    Rerun("PyScript")
    print(ALProxy("PyScript").hello())
    if sys.argv[1] == "shutdown":
        broker.shutdown()
''')


@pytest.mark.parametrize("ending", ["shutdown", "exit"])
def test_a_script_runs_again_right_after_it_ended(broker, ending):
    """NAOqi scripts end with ALBroker.shutdown(), or just end: either way the next run
    registers the same module name."""
    env = dict(os.environ, NAOBROKER_URL=broker.url)
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", SCRIPT, ending], env=env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and run.stdout == "hello\n", run.stderr
        assert "PyScript" not in broker.session.call("ServiceDirectory", "modules")


DRIVER = textwrap.dedent('''
    import json
    from naoqi import ALProxy, NaobrokerError

    tool = ALProxy("PyServed")
    out = {
        "add": tool.add(2, 3),
        "ping": tool.ping(),
        "methods": tool.getMethodList(),
        "usage": tool.getUsage("add"),
        "help": tool.getModuleHelp(),
    }
    blocked = tool.post.block()
    out["blocked_id"] = blocked
    out["blocked_running"] = tool.isRunning(blocked)
    out["blocked_wait_50ms"] = tool.wait(blocked, 50)
    tool.release()
    out["blocked_wait"] = tool.wait(blocked, 0)
    failing = tool.post.fail("from afar")
    try:
        tool.wait(failing, 0)
    except NaobrokerError as error:
        out["failure"] = str(error)
    try:
        tool.exit()
    except NaobrokerError as error:
        out["exit"] = str(error)
    print(json.dumps(out))
''')


def test_a_python_module_driven_from_another_process(broker, monkeypatch):
    start_broker(broker, monkeypatch)

    class Served(Tool):
        def release(self):
            """Lets block return."""
            self.released.set()

    Served("PyServed")
    env = dict(os.environ, NAOBROKER_URL=broker.url)
    run = subprocess.run([sys.executable, "-c", DRIVER], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["add"] == 5 and out["ping"] is True
    assert out["methods"][:10] == BASE_METHODS and "release" in out["methods"]
    assert out["usage"] == "add(a, b=1) — Adds two numbers."
    assert out["help"] == ""  # Served has no docstring of its own
    assert out["blocked_id"] == 1 and out["blocked_running"] is True
    assert out["blocked_wait_50ms"] is False and out["blocked_wait"] is True
    assert out["failure"] == "PyServed.wait: task 2 (PyServed.fail) failed: from afar"
    assert out["exit"] == "PyServed.exit: only the client that registered PyServed may make it exit"
    assert "PyServed" in broker.session.call("ServiceDirectory", "modules")


def test_a_callback_gets_as_many_of_event_value_message_as_it_takes(broker, monkeypatch):
    start_broker(broker, monkeypatch)
    got = {}

    class Listener(ALModule):
        def onNothing(self):
            got["none"] = ()

        def onKey(self, key):
            got["key"] = (key,)

        def onTouched(self, strVarName, value):  # NAOqi's own example
            got["key, value"] = (strVarName, value)

        def onAll(self, key, value, message):
            got["all"] = (key, value, message)

        def onAny(self, *args):
            got["*args"] = args

    Listener("PyListener")
    memory = ALProxy("ALMemory")
    methods = ("onNothing", "onKey", "onTouched", "onAll", "onAny")
    for method in methods:  # one callback per event and module, as in NAOqi
        memory.subscribeToEvent("Py/" + method, "PyListener", method)
    for method in methods:
        memory.raiseEvent("Py/" + method, 1.0)
    wait_for(lambda: len(got) == 5, "five callbacks")
    assert got == {
        "none": (),
        "key": ("Py/onKey",),
        "key, value": ("Py/onTouched", 1.0),
        "all": ("Py/onAll", 1.0, ""),
        "*args": ("Py/onAny", 1.0, ""),
    }
