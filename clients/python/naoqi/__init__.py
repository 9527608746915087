"""NAOqi's Python API on naobroker: ALProxy, ALBroker, ALModule.

    from naoqi import ALProxy
    dcm = ALProxy("DCM", "127.0.0.1", 9559)
    print(dcm.getTime(0))

The environment variable NAOBROKER_URL, when set, overrides the address given to
ALProxy and ALBroker, so that NAOqi scripts run unchanged against another broker.
"""

import os

from naobroker import NaobrokerError, Proxy, Session

__all__ = ["ALProxy", "ALBroker", "ALModule", "NaobrokerError"]

_default_url = None


def _url(ip, port):
    return os.environ.get("NAOBROKER_URL") or "tcp://%s:%d" % (ip, port)


class ALProxy(Proxy):
    """ALProxy(module, ip, port): attribute access calls the module's methods;
    proxy.post.method(...) returns a task id."""

    def __init__(self, module, ip=None, port=9559):
        url = _url(ip, port) if ip is not None else (_default_url or _url("127.0.0.1", 9559))
        Proxy.__init__(self, Session.shared(url), module)


class ALBroker:
    """ALBroker(name, ip, port, parent_ip, parent_port): where ALModules are served."""

    def __init__(self, name, ip, port, parent_ip, parent_port):
        global _default_url
        _default_url = _url(parent_ip, parent_port)
        self.session = Session.shared(_default_url)

    def shutdown(self):
        self.session.close()


class ALModule:
    """Subclass it; its public methods become callable by every module:

        class MyModule(ALModule):
            def onEvent(self, name, value, message): ...
        MyModule("MyModule")
        ALProxy("ALMemory").subscribeToEvent("E", "MyModule", "onEvent")
    """

    def __init__(self, name):
        self.name = name
        Session.shared(_default_url or _url("127.0.0.1", 9559)).register_module(name, self)

    def getName(self):
        return self.name
