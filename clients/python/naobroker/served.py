"""One module this process serves: its method table, NAOqi's base methods, its posted tasks.

Every module answers the base methods the Rust modules answer, with the same shapes:
``ping``, ``version``, ``getMethodList`` (base methods first), ``getMethodHelp(name)``
(``[name, signature, help]``), ``getModuleHelp``, ``getUsage(name)`` (one line), ``exit``,
``isRunning(id)``, ``wait(id, timeoutMs)`` and ``stop(id)`` (see tasks.py). A method's
signature comes from ``inspect.signature``, its help from its docstring, the module's help
from its class docstring (or ``ALModule.setModuleDescription``). A method of the module's
own that has a base method's name is shadowed by the base method, as in the Rust SDK.

An ALMemory callback gets as many of ``(event, value, message)`` as its method takes, as in
NAOqi, whose own examples declare ``onTouched(self, strVarName, value)``.
"""

import inspect

from .errors import BadArgument, NotFound
from .tasks import Tasks, failure_text

VERSION = "0.1.0"

BASE_METHODS = (
    ("ping", "() -> bool", "Returns true: the module is alive."),
    ("version", "() -> String", "The module's version."),
    ("getMethodList", "() -> Vec<String>", "Names of all methods."),
    ("getMethodHelp", "(String) -> Vec<String>", "Help of one method: [name, signature, help]."),
    ("getModuleHelp", "() -> String", "What the module does."),
    ("getUsage", "(String) -> String", "Signature and help of one method, as one line."),
    ("exit", "() -> bool", "Unregisters the module; its process and its other modules go on."),
    ("isRunning", "(u64) -> bool", "Whether a task started with post is still running."),
    (
        "wait",
        "(u64, i64) -> bool",
        "Waits for a posted task (timeout ms, 0 = forever): true when it ended, its error when it failed.",
    ),
    ("stop", "(u64) -> bool", "Asks a posted task to stop (a Python method sees stop_requested())."),
)
BASE_NAMES = frozenset(name for name, _, _ in BASE_METHODS)
EXCERPT_BYTES = 64


def excerpt(text):
    """At most 64 bytes (whole characters) of a name a caller sent, as the broker quotes them."""
    data = text.encode("utf-8")
    if len(data) <= EXCERPT_BYTES:
        return text
    return "%s… (%d bytes)" % (data[:EXCERPT_BYTES].decode("utf-8", "ignore"), len(data))


def _type_name(value):
    if value is None:
        return "nil"
    for kind, name in ((bool, "bool"), (int, "integer"), (float, "float"), (str, "string"),
                       (bytes, "binary"), (list, "array"), (dict, "map")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def decode(args, types):
    """Check a base method's arguments against `types` ((python type, shown name) pairs),
    with the Rust SDK's messages."""
    if not types and args:
        raise BadArgument("takes no arguments, got %d" % len(args))
    if len(args) > len(types):
        raise BadArgument("takes %d arguments, got %d" % (len(types), len(args)))
    for index, (kind, shown) in enumerate(types):
        if index >= len(args):
            raise BadArgument("missing argument %d (%s)" % (index + 1, shown))
        value = args[index]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BadArgument("argument %d must be %s, got %s" % (index + 1, shown, _type_name(value)))
    return args


def _signature(method):
    try:
        return str(inspect.signature(method))
    except (TypeError, ValueError):  # some builtins have none
        return "(...)"


def fit_arguments(method, arguments):
    """The first arguments, as many as `method` takes positionally (all when it takes *args)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # no signature to read: give everything
        return arguments
    if any(parameter.kind == parameter.VAR_POSITIONAL for parameter in parameters):
        return arguments
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return arguments[:sum(1 for parameter in parameters if parameter.kind in positional)]


def _own_methods(instance, local_only):
    """(name, bound method) of the instance's public methods, base names and local-only
    helpers left out."""
    found = []
    for attribute in dir(instance):
        if attribute.startswith("_") or attribute in BASE_NAMES or attribute in local_only:
            continue
        value = getattr(instance, attribute, None)
        if callable(value):
            found.append((attribute, value))
    return found


class ServedModule:
    """Module `name` served by `instance`'s public methods. `local_only` names methods of
    the instance that are not served (helpers for the process itself)."""

    def __init__(self, name, instance, local_only=()):
        self.name = name
        self.instance = instance
        self.description = inspect.cleandoc(type(instance).__doc__ or "")
        self.tasks = Tasks(name)
        self._methods = dict(_own_methods(instance, frozenset(local_only)))
        self.infos = [list(info) for info in BASE_METHODS] + [
            [name, _signature(method), inspect.getdoc(method) or ""] for name, method in self._methods.items()
        ]
        self._base = {
            "ping": ((), self._ping),
            "version": ((), self._version),
            "getMethodList": ((), self._method_list),
            "getMethodHelp": (((str, "String"),), self._method_help),
            "getModuleHelp": ((), self._module_help),
            "getUsage": (((str, "String"),), self._usage),
            "exit": ((), self._exit),
            "isRunning": (((int, "u64"),), self.tasks.is_running),
            "wait": (((int, "u64"), (int, "i64")), self.tasks.wait),
            "stop": (((int, "u64"),), self.tasks.stop),
        }

    def call(self, method, args):
        """Run `method` on the calling thread and answer its result (raises on failure).
        `exit` only answers: the caller unregisters the module once the answer is sent."""
        base = self._base.get(method)
        if base is not None:
            types, handler = base
            return handler(*decode(args, types))
        return self._method(method)(*args)

    def callback(self, method, arguments):
        """Run the NAOqi callback `method` with `arguments` ([event, value, message]) cut to
        what it takes."""
        target = getattr(self.instance, method)
        target(*fit_arguments(target, arguments))

    def post(self, method, args):
        """Start `method` as a task and answer its id; arguments that do not fit the
        method's signature are refused at once."""
        target = self._method(method)
        try:
            inspect.signature(target).bind(*args)
        except TypeError as error:
            raise BadArgument(failure_text(error)) from None
        except ValueError:  # no signature to check against: the task will say
            pass
        return self.tasks.start("%s.%s" % (self.name, method), target, args)

    def _method(self, method):
        target = self._methods.get(method)
        if target is None:
            raise NotFound("no method named %s" % excerpt(method))
        return target

    def _info(self, method):
        for info in self.infos:
            if info[0] == method:
                return info
        raise NotFound("no method named %s" % excerpt(method))

    def _ping(self):
        return True

    def _version(self):
        return str(getattr(self.instance, "__version__", VERSION))

    def _method_list(self):
        return [info[0] for info in self.infos]

    def _method_help(self, method):
        return list(self._info(method))

    def _module_help(self):
        return self.description

    def _usage(self, method):
        name, signature, text = self._info(method)
        return "%s%s — %s" % (name, signature, text)

    def _exit(self):
        return True
