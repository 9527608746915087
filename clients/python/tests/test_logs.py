"""BrokerLogHandler: a script's ``logging`` records reach the broker's log stream
(``ServiceDirectory/Log``, what ``naocli log`` shows) under the session's name."""

import logging
import queue

from naobroker import BrokerLogHandler, Session
from naobroker.logs import broker_level


def test_levels_map_to_the_brokers():
    assert [broker_level(n) for n in (5, 10, 15, 20, 30, 40, 50)] == [
        "TRACE", "DEBUG", "DEBUG", "INFO", "WARN", "ERROR", "ERROR"]


def test_logging_records_reach_the_brokers_log_stream(broker):
    lines = queue.Queue()
    viewer = Session(broker.url, "viewer")
    viewer.subscribe("ServiceDirectory/Log", lambda name, line: lines.put(line))
    script = Session(broker.url, "arm-script")
    handler = BrokerLogHandler(script)
    handler.setFormatter(logging.Formatter("%(message)s (%(funcName)s)"))
    logger = logging.getLogger("robot.arm")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    client_logger = logging.getLogger("naobroker")
    client_logger.addHandler(handler)
    try:
        client_logger.warning("the client's own line")
        logger.warning("arm at %d degrees", 42)
        line = lines.get(timeout=20)
        while line["module"] != "arm-script":
            line = lines.get(timeout=20)
        # The client's own line was never sent: the first line of the script's is the arm's.
        assert line == {"level": "WARN", "module": "arm-script", "target": "robot.arm",
                        "message": "arm at 42 degrees (test_logging_records_reach_the_brokers_log_stream)"}
        logger.debug("detail")
        line = lines.get(timeout=20)
        while line["module"] != "arm-script":
            line = lines.get(timeout=20)
        assert (line["level"], line["message"]) == ("DEBUG", "detail (test_logging_records_reach_the_brokers_log_stream)")
        assert handler.dropped == 0
    finally:
        logger.removeHandler(handler)
        client_logger.removeHandler(handler)
        handler.close()
        script.close()
        viewer.close()
