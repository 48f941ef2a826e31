"""Where the battery tests found their private ``redis-server``: now in tests/support."""

from tests.support.redis_server import PrivateRedis as PrivateRedis
