"""Python ``logging`` records to the broker's log stream (``ServiceDirectory/Log``, what
``naocli log`` shows), as the Rust SDK's LogForwarding sends a module process's lines.

    logging.getLogger().addHandler(BrokerLogHandler(session))

Records are queued and sent by a thread of the handler's own, one ``ServiceDirectory.log``
call at a time, so logging never waits for the broker; past ``capacity`` queued records,
new ones are dropped and counted in ``dropped``. The client's own logger ("naobroker") is
not forwarded: its lines are about the sending itself.
"""

import logging
import queue
import threading

# ServiceDirectory.log's levels (tracing's), from the highest Python level each covers.
_LEVELS = ((logging.ERROR, "ERROR"), (logging.WARNING, "WARN"), (logging.INFO, "INFO"), (logging.DEBUG, "DEBUG"))


def broker_level(levelno):
    """The broker's level name for a Python level number (below DEBUG: TRACE)."""
    for threshold, name in _LEVELS:
        if levelno >= threshold:
            return name
    return "TRACE"


class BrokerLogHandler(logging.Handler):
    """A ``logging`` handler forwarding records to the broker through `session`; the line's
    module is the session's name, its target the logger's name."""

    def __init__(self, session, level=logging.NOTSET, capacity=256):
        super().__init__(level)
        self.session = session
        self.dropped = 0
        self._lines = queue.Queue(capacity)
        self._sender = threading.Thread(target=self._send, name="naobroker-log", daemon=True)
        self._sender.start()

    def emit(self, record):
        if record.name == "naobroker" or record.name.startswith("naobroker."):
            return
        if threading.current_thread() is self._sender:
            return
        try:
            self._lines.put_nowait((broker_level(record.levelno), record.name, self.format(record)))
        except queue.Full:
            self.dropped += 1

    def _send(self):
        while True:
            line = self._lines.get()
            if line is None:
                return
            try:
                self.session.call("ServiceDirectory", "log", *line)
            except Exception:  # noqa: BLE001 - a line the broker did not take is lost, not raised in a logger
                self.dropped += 1

    def close(self):
        """Stop the sending thread once the records queued so far are sent."""
        self._lines.put(None)
        super().close()
