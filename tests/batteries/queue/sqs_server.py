"""moto's SQS server on 127.0.0.1 for the ``sqs`` variant of the queue contract.

The server runs in this process (``ThreadedMotoServer``, real HTTP through boto3), so its
clock can follow the test's :class:`FakeClock`: the contract moves time to expire leases
and delays, and the SQS server decides visibility on *its* clock. :meth:`SQSServer.follow`
makes moto's millisecond clock read the fake clock, plus one microsecond per read so
"later" on the server is strictly later (moto compares ``now > visible_at``); moto's
retention check reads the same clock.

moto's ``ReceiveMessage`` is not thread-safe (two concurrent receives can both take one
message, which SQS itself never does), so receives are serialized here; that fixes the
emulator, not the adapter under test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.ports import free_port


class SQSServer:
    """A ``ThreadedMotoServer`` whose SQS clock can follow a fake clock."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._clock: Callable[[], float] | None = None
        self._ticks = 0
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def follow(self, clock: Callable[[], float] | None) -> None:
        """Make the server's clock read ``clock`` (epoch seconds); ``None``: real time."""
        with self._lock:
            self._clock = clock

    def _millis(self) -> float:
        with self._lock:
            if self._clock is None:
                return time.time() * 1000
            self._ticks += 1
            return self._clock() * 1000 + self._ticks / 1000

    def start(self, patch: pytest.MonkeyPatch) -> None:
        import moto.sqs.models as sqs_models

        patch.setattr(sqs_models, "unix_time_millis", self._millis)
        receive = sqs_models.SQSBackend.receive_message
        serial = threading.Lock()

        def receive_one_at_a_time(backend: Any, *args: Any, **kwargs: Any) -> Any:
            with serial:
                return receive(backend, *args, **kwargs)

        patch.setattr(sqs_models.SQSBackend, "receive_message", receive_one_at_a_time)

        def retained(backend: Any, queue_name: str, message: Any) -> bool:
            # moto compares the retention period with the real clock: on the followed one.
            kept = backend.get_queue_attributes(queue_name, ["MessageRetentionPeriod"])
            until = kept["MessageRetentionPeriod"] + message.sent_timestamp / 1000
            return until > self._millis() / 1000

        patch.setattr(sqs_models.SQSBackend, "is_message_valid_based_on_retention_period", retained)
        self._server.start()

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture(scope="session")
def sqs_server() -> Iterator[SQSServer]:
    """Start one in-process moto SQS server for the session (no credentials checked)."""
    patch = pytest.MonkeyPatch()
    server = SQSServer()
    server.start(patch)
    try:
        yield server
    finally:
        server.stop()
        patch.undo()


def sqs_block(server: SQSServer, prefix: str, **options: Any) -> dict[str, Any]:
    """Return the settings block of a queue on ``server`` whose queues start with ``prefix``."""
    return {
        "adapter": "sqs",
        "options": {
            "endpoint": server.endpoint,
            "region": "us-east-1",
            "access_key_id": "testing",
            "secret_access_key": "testing",
            "prefix": prefix,
            **options,
        },
    }
