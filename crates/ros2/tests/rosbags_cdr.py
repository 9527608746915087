"""Reads ROS 2 CDR with rosbags (PyPI, not ours) for tests/rosbags.rs.

Input (stdin, JSON): {"decode": [{"type": "sensor_msgs/msg/JointState", "cdr": "<hex>"}],
"twists": [{"linear": [x, y, z], "angular": [x, y, z]}], "hashes": ["std_msgs/msg/String"]}.
Output (stdout, JSON): each decoded message as plain JSON with rosbags' own serialization of it,
each twist serialized by rosbags, and each type's RIHS01 hash as rosbags computes it.
"""

import json
import sys

import numpy
from rosbags.typesys import Stores, get_typestore

STORE = get_typestore(Stores.ROS2_KILTED)


def plain(value):
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "__dataclass_fields__"):
        return {name: plain(getattr(value, name)) for name in value.__dataclass_fields__ if name != "__msgtype__"}
    return value


def main():
    request = json.load(sys.stdin)
    decoded = []
    for item in request["decode"]:
        message = STORE.deserialize_cdr(bytes.fromhex(item["cdr"]), item["type"])
        again = bytes(STORE.serialize_cdr(message, item["type"]))
        decoded.append({"message": plain(message), "cdr": again.hex()})
    twists = []
    Twist = STORE.types["geometry_msgs/msg/Twist"]
    Vector3 = STORE.types["geometry_msgs/msg/Vector3"]
    for twist in request["twists"]:
        message = Twist(linear=Vector3(*twist["linear"]), angular=Vector3(*twist["angular"]))
        twists.append(bytes(STORE.serialize_cdr(message, "geometry_msgs/msg/Twist")).hex())
    hashes = {name: STORE.hash_rihs01(name) for name in request["hashes"]}
    json.dump({"decoded": decoded, "twists": twists, "hashes": hashes}, sys.stdout)


main()
