"""NAOqi's Python API on naobroker: ALProxy, ALBroker, ALModule.

    from naoqi import ALProxy
    dcm = ALProxy("DCM", "127.0.0.1", 9559)
    print(dcm.getTime(0))

The environment variable NAOBROKER_URL, when set, overrides the address given to
ALProxy and ALBroker, so that NAOqi scripts run unchanged against another broker.

Time limits: none by default (a call waits as long as the broker and the callee live).
``ALProxy("ALMotion", ip, port, timeout=20.0)`` limits every call of that proxy, and any
call takes its own as the keyword ``_timeout`` (NAOqi methods take no keywords):
``motion.moveTo(0.5, 0, 0, _timeout=30.0)``. A call past its limit raises
``CallTimeout`` ("ALMotion.moveTo timed out after 30000 ms").

Authentication beyond loopback (CURVE): ALProxy and ALBroker take ``server_key=``,
``public_key=`` and ``secret_key=`` (Z85 text), or read NAOBROKER_SERVER_KEY,
NAOBROKER_PUBLIC_KEY and NAOBROKER_SECRET_KEY from the environment.

After a broker restart (or when the broker dropped this process), the process's modules,
event subscriptions and ``ALMemory.subscribeToEvent`` / ``subscribeToMicroEvent``
callbacks come back by themselves (an ALMemory proxy sends those two as the protocol's own
callback messages, so the session knows what to subscribe again); calls under way at that moment fail with
``ConnectionLost``.

An ALModule is a full NAOqi module (base methods, ``post`` with task ids; see ALModule).
``ALBroker.shutdown()`` unregisters the process's modules before it returns, and so does
the interpreter's exit when a script forgot it: running the script again right after
registers the same names.
"""

import os

from naobroker import (
    BadArgument,
    CallTimeout,
    ConnectionLost,
    NaobrokerError,
    NotFound,
    Proxy,
    Refused,
    Session,
    stop_requested,
)

__all__ = [
    "ALProxy",
    "ALBroker",
    "ALModule",
    "NaobrokerError",
    "BadArgument",
    "Refused",
    "NotFound",
    "CallTimeout",
    "ConnectionLost",
    "stop_requested",
]

_default_url = None
_UNSET = object()


def _url(ip, port):
    return os.environ.get("NAOBROKER_URL") or "tcp://%s:%d" % (ip, port)


def _process_url():
    """Where a proxy or module without an address goes: NAOBROKER_URL, else the parent
    broker of this process's ALBroker, else the local NAOqi port."""
    return os.environ.get("NAOBROKER_URL") or _default_url or "tcp://127.0.0.1:9559"


def _keys(server_key, public_key, secret_key):
    return {"server_key": server_key, "public_key": public_key, "secret_key": secret_key}


class ALProxy(Proxy):
    """ALProxy(module, ip, port): attribute access calls the module's methods;
    proxy.post.method(...) returns a task id. `timeout` (seconds) limits every call
    of this proxy; a call's `_timeout=` keyword overrides it."""

    def __init__(self, module, ip=None, port=9559, timeout=_UNSET, server_key=None, public_key=None, secret_key=None):
        url = _url(ip, port) if ip is not None else _process_url()
        session = Session.shared(url, **_keys(server_key, public_key, secret_key))
        if timeout is _UNSET:
            Proxy.__init__(self, session, module)
        else:
            Proxy.__init__(self, session, module, timeout)
        if module == "ALMemory":
            _subscribe_callbacks_by_message(self, session)


def _subscribe_callbacks_by_message(memory, session):
    """ALMemory's callback methods, NAOqi's signatures, sent as the protocol's own callback
    messages: the session then subscribes them again after a reconnect."""
    timeout = memory._timeout

    def subscribeToEvent(name, module, method, _timeout=timeout):
        return session.subscribe_callback(name, module, method, timeout=_timeout)

    def subscribeToMicroEvent(name, module, message, method, _timeout=timeout):
        return session.subscribe_callback(name, module, method, micro_message=message, timeout=_timeout)

    def unsubscribeToEvent(name, module, _timeout=timeout):
        return session.unsubscribe_callback(name, module, timeout=_timeout)

    memory.subscribeToEvent = subscribeToEvent
    memory.subscribeToMicroEvent = subscribeToMicroEvent
    memory.unsubscribeToEvent = unsubscribeToEvent
    memory.unsubscribeToMicroEvent = unsubscribeToEvent


class ALBroker:
    """ALBroker(name, ip, port, parent_ip, parent_port): where ALModules are served.
    ``shutdown()`` unregisters every module of the process (the broker frees their names
    before it returns) and closes the connection, with every ALProxy of the process."""

    def __init__(self, name, ip, port, parent_ip, parent_port, server_key=None, public_key=None, secret_key=None):
        global _default_url
        _default_url = _url(parent_ip, parent_port)
        self.session = Session.shared(_default_url, **_keys(server_key, public_key, secret_key))

    def shutdown(self):
        global _default_url
        self.session.close()
        if _default_url == self.session.url:  # this broker is gone: no default any more
            _default_url = None


class ALModule:
    """Subclass it; its public methods become callable by every module:

        class MyModule(ALModule):
            '''What the module does (getModuleHelp).'''
            def onEvent(self, name, value, message): ...
            def eventsLost(self, name, count): ...  # optional
        MyModule("MyModule")
        ALProxy("ALMemory").subscribeToEvent("E", "MyModule", "onEvent")

    Methods called by other modules run each on its own thread; ALMemory callbacks run in
    order, one at a time. When the broker had to drop callbacks because this module was
    too slow to take them, the next callback is preceded by ``eventsLost(name, count)``
    when the module defines it, else by a warning in the "naobroker" log.

    Like every NAOqi module it answers ``ping``, ``version``, ``getMethodList``,
    ``getMethodHelp(name)`` and ``getUsage(name)`` (signatures from ``inspect``, help from
    the docstrings), ``getModuleHelp`` (the class docstring, or ``setModuleDescription``),
    ``exit`` (the module unregisters; the process, its ALBroker and its other modules go
    on), and ``proxy.post.method(...)``: the method runs as a task on a thread of its own
    and the caller gets its id (from 1, per module) at once; ``isRunning(id)``,
    ``wait(id, timeoutMs)`` (0 = forever; true when it ended, false on timeout, the task's
    error "task <id> (<Module>.<method>) failed: <message>" when it raised, also after it
    ended) and ``stop(id)``. Python cannot interrupt a thread: ``stop`` asks, and answers
    true when the task was running; a long method checks ``stop_requested()`` and returns.
    """

    def __init__(self, name):
        self.name = name
        self._albroker_session = Session.shared(_process_url())
        self._albroker_session.register_module(name, self, local_only=("setModuleDescription",))

    def getName(self):
        """The module's name."""
        return self.name

    def setModuleDescription(self, description):
        """What getModuleHelp answers (by default the class docstring)."""
        self._albroker_session.describe_module(self.name, description)

    def exit(self):
        """Unregister this module at once (its name is free for anyone); the process and its
        other modules go on."""
        self._albroker_session.unregister_module(self.name)
