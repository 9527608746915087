"""Posted tasks of one served module: NAOqi's ``post``, ``isRunning``, ``wait`` and ``stop``.

A posted method runs on a thread of its own; its id (from 1, per module) goes back to the
caller at once. ``wait(id, timeoutMs)`` answers true once the task ended (0 = no time limit),
false when the time ran out, and raises "task <id> (<Module>.<method>) failed: <message>"
when the method raised, also long after it ended (the last 64 failures of a module are
kept), as the Rust modules do. At most 64 posted tasks of a module run at once: ``post``
answers before its task ends, so the broker's bound on calls in flight does not count
tasks, and a caller posting in a loop would otherwise start threads until the process dies.

Python cannot interrupt a thread: ``stop(id)`` asks a running task to stop and answers
true when the task was running; the method sees the request through ``stop_requested()``
and ends when it chooses (until then ``isRunning`` stays true and ``wait`` waits).
"""

import collections
import logging
import threading

from .errors import NotFound, Refused

log = logging.getLogger("naobroker")

# Failures kept for `wait` after their task ended: enough for any script that waits on what
# it posted, bounded so that a module posting failing tasks forever holds little.
REMEMBERED_FAILURES = 64

# Posted tasks of one module running at once; a further `post` is refused (the Rust modules'
# bound, with the same message).
MAX_RUNNING_TASKS = 64

_current = threading.local()


def stop_requested():
    """In a method started with ``post``: whether someone called ``stop`` on its task.
    False anywhere else (a plain call cannot be stopped)."""
    task = getattr(_current, "task", None)
    return task is not None and task.stop.is_set()


def failure_text(error):
    """What a caller reads of an exception: its message, else its type's name."""
    return str(error) or type(error).__name__


class _Task:
    __slots__ = ("id", "label", "done", "stop")

    def __init__(self, task_id, label):
        self.id = task_id
        self.label = label
        self.done = threading.Event()
        self.stop = threading.Event()


class TaskError(RuntimeError):
    """A task id that no post gave, a task that failed or could not start, or a module
    already running its most tasks; the message says which."""


class TaskLimit(TaskError, Refused):
    """The module already runs its most tasks: a refusal (kind refused)."""


class NoTask(TaskError, NotFound):
    """A task id that no post gave (kind not found)."""


class Tasks:
    """The tasks of one module: ids, the ones running, and the recent failures."""

    def __init__(self, module):
        self._module = module
        self._lock = threading.Lock()
        self._last_id = 0
        self._running = {}
        self._failures = collections.OrderedDict()  # id → message, oldest first

    def start(self, label, target, args):
        """Run target(*args) on a thread of its own as a task named `label`
        ("Module.method"); answers its id. Raises TaskError while MAX_RUNNING_TASKS run, or
        when no thread can start (the id is then spent: ``wait`` on it reports why)."""
        with self._lock:
            if len(self._running) >= MAX_RUNNING_TASKS:
                raise TaskLimit(
                    "%d posted tasks are already running in %s: wait for one to end"
                    % (MAX_RUNNING_TASKS, self._module)
                )
            self._last_id += 1
            task = _Task(self._last_id, label)
            self._running[task.id] = task
        name = "naobroker-task-%d-%s" % (task.id, label)
        try:
            threading.Thread(target=self._run, args=(task, target, args), name=name, daemon=True).start()
        except Exception as error:  # no thread to be had: the task never runs, so it must not look running
            reason = "its thread could not start: %s" % failure_text(error)
            failure = "task %d (%s) failed: %s" % (task.id, label, reason)
            log.warning("posted task %d (%s): %s", task.id, label, reason)
            with self._lock:
                del self._running[task.id]
                self._remember_failure(task.id, failure)
            task.done.set()
            raise TaskError(failure) from error
        return task.id

    def _run(self, task, target, args):
        _current.task = task
        failure = None
        try:
            target(*args)
        except Exception as error:  # the waiter gets the message, the module goes on
            failure = "task %d (%s) failed: %s" % (task.id, task.label, failure_text(error))
            log.warning("posted task %d (%s) failed: %s", task.id, task.label, failure_text(error))
        finally:
            _current.task = None
            with self._lock:
                del self._running[task.id]
                if failure is not None:
                    self._remember_failure(task.id, failure)
            task.done.set()

    def _remember_failure(self, task_id, failure):
        """Keep `failure` for ``wait``, forgetting the oldest beyond REMEMBERED_FAILURES;
        the caller holds the lock."""
        if len(self._failures) == REMEMBERED_FAILURES:
            self._failures.popitem(last=False)
        self._failures[task_id] = failure

    def is_running(self, task_id):
        with self._lock:
            return task_id in self._running

    def stop(self, task_id):
        """Ask a running task to stop; true when it was running."""
        with self._lock:
            task = self._running.get(task_id)
        if task is None:
            return False
        task.stop.set()
        log.info("stop asked of task %d (%s): it ends when the method sees stop_requested()", task_id, task.label)
        return True

    def wait(self, task_id, timeout_ms):
        """True once the task ended (timeout_ms <= 0: no limit), False when the time ran out;
        raises TaskError with the task's failure, or for an id no post gave."""
        with self._lock:
            if task_id <= 0 or task_id > self._last_id:
                raise NoTask("no task %d was posted (the last id is %d)" % (task_id, self._last_id))
            task = self._running.get(task_id)
        if task is not None and not task.done.wait(None if timeout_ms <= 0 else timeout_ms / 1000.0):
            return False
        with self._lock:
            failure = self._failures.get(task_id)
        if failure is not None:
            raise TaskError(failure)
        return True
