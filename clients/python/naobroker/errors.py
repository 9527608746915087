"""The errors a call ends with, one class per kind the protocol's ``Error`` carries.

Every class is a ``NaobrokerError`` (a ``RuntimeError``), so ``except NaobrokerError`` catches
them all as before kinds existed. A module served from Python reports a kind by raising one of
the kinds' classes; any other exception is a failure (kind 0). A kind is the deepest failing
call's: a served method that lets a nested call's ``NotFound`` propagate answers not found
(docs/protocol.md); one that wants its own kind raises its own class.
"""

# The kinds' numbers on the wire: ``[5, id, message, kind]`` (docs/protocol.md).
FAILED, BAD_ARGUMENT, REFUSED, NOT_FOUND = 0, 1, 2, 3


class NaobrokerError(RuntimeError):
    """An error reply from the broker or a module; the message names the problem. Its kind
    is ``FAILED`` unless it is one of the subclasses below."""

    kind = FAILED


class BadArgument(NaobrokerError):
    """An argument is missing, of the wrong type or out of range."""

    kind = BAD_ARGUMENT


class Refused(NaobrokerError):
    """The caller may not do this (another client's module or key), or a limit forbids it now."""

    kind = REFUSED


class NotFound(NaobrokerError):
    """No module, method, key, event or task of that name."""

    kind = NOT_FOUND


class CallTimeout(NaobrokerError):
    """The caller's own time limit passed before the answer came."""


class ConnectionLost(NaobrokerError):
    """The connection to the broker dropped or the broker went silent with the call under way."""


_BY_KIND = {BAD_ARGUMENT: BadArgument, REFUSED: Refused, NOT_FOUND: NotFound}


def error_of(frame):
    """The exception an ``Error`` frame ``[5, id, message]`` or ``[5, id, message, kind]``
    stands for: a frame without a kind, or with a kind this client does not know or that is
    no integer, is a failure."""
    kind = frame[3] if len(frame) > 3 else FAILED
    # A kind that is no integer (a list, from a hostile or broken peer) cannot be a key.
    if not isinstance(kind, int):
        kind = FAILED
    return _BY_KIND.get(kind, NaobrokerError)(frame[2])


def error_frame(request_id, message, error):
    """The ``Error`` frame's items answering ``request_id`` with ``message``, of the kind of
    ``error`` (the short form for a failure, which brokers of before kinds read too)."""
    kind = getattr(error, "kind", FAILED) if isinstance(error, NaobrokerError) else FAILED
    return [5, request_id, message] if kind == FAILED else [5, request_id, message, kind]
