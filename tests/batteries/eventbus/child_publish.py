"""Child process: publish events on a kvserver bus, so another process receives them.

Usage: ``python -m tests.batteries.eventbus.child_publish URL PREFIX TOPIC COUNT``.
"""

from __future__ import annotations

import sys

import redis

from toolkit_batteries.eventbus.adapters.kvserver import KVServerEventBus
from toolkit_batteries.eventbus.base import BusSettings


def main() -> None:
    url, prefix, topic, count = sys.argv[1:5]
    client = redis.Redis.from_url(url)
    bus = KVServerEventBus(client, BusSettings(), prefix=prefix)
    for i in range(int(count)):
        bus.publish(topic, {"i": i, "from": "child"})
    bus.close()
    client.close()


if __name__ == "__main__":
    main()
